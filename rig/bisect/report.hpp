// SPDX-License-Identifier: MIT
// A bisect for people: its report (with a summary ready to paste into a mail) and the
// status table of all bisects.
#pragma once

#include "bisect/settings.hpp"
#include "store/store.hpp"
#include "util/error.hpp"

#include <cstdint>
#include <string>

namespace rig::bisect {

// The bisect as text: status, endpoints, step table, culprit, confidence (naming the test
// each verdict used), cost, and a summary ready to paste into a mail.
Expected<std::string> render_report(int64_t id, store::Database& db, const Settings& settings);
// One line per bisect, or a few for one.
Expected<std::string> render_status(store::Database& db, int64_t id);

} // namespace rig::bisect
