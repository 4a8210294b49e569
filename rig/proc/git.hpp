// SPDX-License-Identifier: MIT
// git from argument vectors, run so that its output can be parsed and it never waits for a
// person: the C locale, no pager, no editor, no terminal prompt, whatever the user's
// configuration says. Every git rig runs goes through here.
#pragma once

#include "proc/process.hpp"

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace rig::proc {

// The transports git may use for a repository rig is given: file, git, http, https and
// ssh. Remote helpers such as `ext::` (which runs a command) are refused by git itself.
inline constexpr std::string_view k_git_protocols = "file:git:http:https:ssh";

// The environment entries git runs with: LC_ALL=C, GIT_PAGER=cat, GIT_EDITOR=true,
// GIT_TERMINAL_PROMPT=0 and GIT_ALLOW_PROTOCOL=k_git_protocols (which overrides the
// user's protocol.*.allow).
const std::map<std::string, std::string>& git_environment();

// `git args...` under `options`, whose own environment entries are kept beside
// git_environment()'s (theirs win: they are fixed).
Expected<RunResult> run_git(const std::vector<std::string>& args, RunOptions options = {});

// A repository, URL or ref from outside (a scenario, a command line) checked before it
// becomes an argument of git: one that starts with '-' would be read as an option
// (`-ufoo`, `--upload-pack=...`), so it is a config error naming `what` and the value.
Expected<void> check_git_operand(std::string_view value, std::string_view what);

} // namespace rig::proc
