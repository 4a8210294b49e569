// SPDX-License-Identifier: MIT
// Whom a culprit's report goes to, as kernel developers address a patch: the tree's own
// scripts/get_maintainer.pl on the culprit's patch.
#pragma once

#include "util/error.hpp"
#include "watch/branch.hpp"

#include <string>
#include <vector>

namespace rig::watch {

// "Name <address>" lines of the maintainers and lists for the files `commit` changes, from
// the MAINTAINERS and get_maintainer.pl of `commit` itself (--nogit --nogit-fallback: no
// history lookups). The script is the tree's, not reviewed code: it runs as the
// unprivileged user when rig is root, without a network, seeing only a scratch folder
// with those two files and the patch. Empty when the tree has no get_maintainer.pl.
Expected<std::vector<std::string>> maintainers(const Branch& branch, const std::string& commit);

} // namespace rig::watch
