// SPDX-License-Identifier: MIT
// The errors view (`rig report --errors`) as text, markdown, CSV and JSON; HTML draws its own.
#pragma once

#include "report/data.hpp"
#include "report/render.hpp"
#include "util/json.hpp"

#include <string>

namespace rig::report {

// Each signature with the cells it occurs in and the first excerpt of each, then the
// failures no error line explains with their last output; text or markdown by `format`.
std::string signatures_text(const ReportData& data, Format format);
// One line per signature and cell, then one per failure without error lines.
std::string signatures_csv(const ReportData& data);
util::Json signatures_json(const ReportData& data);
// The failures without error lines (ReportData::failures).
util::Json failures_json(const ReportData& data);

} // namespace rig::report
