// SPDX-License-Identifier: MIT
// A kernel's history for unit tests of the bisect driver, held in memory: a line of `size`
// commits, oldest first, with made-up ids; "master" and "HEAD" name the newest, NAME~N
// the commits before it. It bisects as git bisects a line: the untested commit nearest the
// middle of what is left, skipped ones stepped around, ending with the first bad commit or,
// when only skipped commits are left, the range of them and the first bad one.
#pragma once

#include "bisect/history.hpp"

#include <memory>
#include <set>
#include <string>
#include <vector>

namespace rig::test {

class FakeGitHistory final {
public:
    explicit FakeGitHistory(int size);

    // Settings::history: each call opens a bisect of its own over this history, which
    // must outlive it.
    bisect::OpenHistory opener();
    std::unique_ptr<bisect::History> open();

    const std::vector<std::string>& commits() const { return m_commits; }

    std::set<std::string> unrevertable; // commits whose revert does not apply
    std::vector<std::string> opened;    // the folder of each bisect opened, in order
    std::vector<std::string> marked;    // each verdict told, as "bad 5", in order

private:
    friend class FakeBisect;
    std::vector<std::string> m_commits;
};

} // namespace rig::test
