// SPDX-License-Identifier: MIT
// The one rule for the runs/ and bisects/ folders of a database.
#include "core/results_folder.hpp"

#include <string>

namespace rig::core {

namespace {

// What `rig` names its database unless told otherwise (cli/main.cpp).
constexpr std::string_view k_default_db = "rig.db";

} // namespace

std::filesystem::path results_folder(const std::filesystem::path& root,
                                     const std::filesystem::path& db, Kept kept) {
    const std::string what = kept == Kept::runs ? "runs" : "bisects";
    if (db.empty() || db.filename() == k_default_db)
        return root / what;
    return root / (db.filename().string() + "." + what);
}

} // namespace rig::core
