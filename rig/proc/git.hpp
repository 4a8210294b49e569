// SPDX-License-Identifier: MIT
// git from argument vectors, run so that its output can be parsed and it never waits for a
// person: the C locale, no pager, no editor, no terminal prompt, whatever the user's
// configuration says. Every git rig runs goes through here.
#pragma once

#include "proc/process.hpp"

#include <map>
#include <string>
#include <vector>

namespace rig::proc {

// The environment entries git runs with: LC_ALL=C, GIT_PAGER=cat, GIT_EDITOR=true and
// GIT_TERMINAL_PROMPT=0.
const std::map<std::string, std::string>& git_environment();

// `git args...` under `options`, whose own environment entries are kept beside
// git_environment()'s (theirs win: they are fixed).
Expected<RunResult> run_git(const std::vector<std::string>& args, RunOptions options = {});

} // namespace rig::proc
