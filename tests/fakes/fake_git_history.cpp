// SPDX-License-Identifier: MIT
// The fake git history.
#include "fake_git_history.hpp"

#include "util/hash.hpp"
#include "util/strings.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>

namespace rig::test {

namespace fs = std::filesystem;

FakeGitHistory::FakeGitHistory(int size) {
    for (int i = 0; i < size; ++i)
        m_commits.push_back(util::sha256_hex("fake commit " + std::to_string(i)).substr(0, 40));
}

// One bisect over the history: the last good and first bad commit known, and the skipped.
class FakeBisect final : public bisect::History {
public:
    explicit FakeBisect(FakeGitHistory& history) : m_history(history) {}

    Expected<std::string> resolve(const std::string& rev) const override {
        const auto& commits = m_history.m_commits;
        std::string name = rev.substr(0, rev.find('~'));
        int back =
            rev.find('~') == std::string::npos ? 0 : std::stoi(rev.substr(rev.find('~') + 1));
        int tip = static_cast<int>(commits.size()) - 1;
        if ((name == "master" || name == "HEAD") && back <= tip)
            return commits[tip - back];
        for (const std::string& commit : commits)
            if (back == 0 && name.size() >= 4 && util::starts_with(commit, name))
                return commit;
        return fail(ErrorKind::usage, "'" + rev + "' is not a commit of the fake history");
    }

    Expected<size_t> count(const std::string& good, const std::string& bad) const override {
        int from = RIG_TRY(index(good)), to = RIG_TRY(index(bad));
        return static_cast<size_t>(std::max(0, to - from));
    }

    Expected<bisect::CommitInfo> describe(const std::string& sha) const override {
        int at = RIG_TRY(index(sha));
        return bisect::CommitInfo{sha, subject(at), "Fake Author <fake@example.org>",
                                  "2024-01-01T00:00:00+00:00"};
    }

    Expected<std::string> parent(const std::string& sha) const override {
        int at = RIG_TRY(index(sha));
        if (at == 0)
            return fail(ErrorKind::infra, sha + " is the root commit: it has no parent");
        return m_history.m_commits[at - 1];
    }

    Expected<bisect::GitState> start(const std::string& bad, const std::string& good) override {
        m_bad = RIG_TRY(index(bad));
        m_good = RIG_TRY(index(good));
        if (m_good >= m_bad)
            return fail(ErrorKind::infra, "the fake history's good commit is not before its bad");
        m_skipped.clear();
        m_log = "git bisect start '" + bad + "' '" + good + "'\n";
        return state();
    }

    Expected<bisect::GitState> mark(core::Verdict verdict, const std::string& sha) override {
        int at = RIG_TRY(index(sha));
        std::string term(
            core::to_string(verdict == core::Verdict::unsure ? core::Verdict::skip : verdict));
        m_history.marked.push_back(term + " " + std::to_string(at));
        if (verdict == core::Verdict::good)
            m_good = std::max(m_good, at);
        else if (verdict == core::Verdict::bad)
            m_bad = std::min(m_bad, at);
        else
            m_skipped.insert(at);
        m_log += "# " + term + ": [" + sha + "] " + subject(at) + "\ngit bisect " + term + " " +
                 sha + "\n";
        return state();
    }

    // (good, bad] newest first, each commit's parent the one after it.
    Expected<bisect::Remaining> remaining() const override {
        const auto& commits = m_history.m_commits;
        bisect::Remaining out;
        out.bad = commits[m_bad];
        for (int at = m_bad; at > m_good; --at) {
            bisect::Remaining::Commit commit{commits[at], {}};
            if (at - 1 > m_good)
                commit.parents.push_back(out.commits.size() + 1);
            out.commits.push_back(commit);
            if (m_skipped.count(at))
                out.skipped.push_back(commits[at]);
        }
        return out;
    }

    Expected<std::string> log() const override { return m_log; }

    Expected<void> write_revert_patch(const std::string& culprit, const std::string& head,
                                      const fs::path& file) const override {
        int at = RIG_TRY(index(culprit));
        RIG_TRY(index(head));
        if (m_history.unrevertable.count(culprit))
            return fail(ErrorKind::infra, "the revert of " + culprit + " does not apply");
        std::ofstream(file) << "Subject: [PATCH] Revert \"" << subject(at)
                            << "\"\n\nThis reverts commit " << culprit << ".\n";
        return {};
    }

    // A line of its own: a series bisect is driven by the real history only.
    Expected<std::vector<std::string>> commit_series(const std::string&,
                                                     const std::vector<std::string>&) override {
        return fail(ErrorKind::infra, "the fake history makes no commits of a series");
    }

private:
    Expected<int> index(const std::string& sha) const {
        const auto& commits = m_history.m_commits;
        auto found = std::find(commits.begin(), commits.end(), sha);
        if (found == commits.end())
            return fail(ErrorKind::infra, sha + " is not a commit of the fake history");
        return static_cast<int>(found - commits.begin());
    }

    static std::string subject(int at) { return "commit " + std::to_string(at); }

    // The untested commit nearest the middle of (good, bad), or done.
    bisect::GitState state() {
        const auto& commits = m_history.m_commits;
        bisect::GitState out;
        int middle = m_good + (m_bad - m_good) / 2, chosen = -1;
        for (int at = m_good + 1; at < m_bad; ++at)
            if (!m_skipped.count(at) &&
                (chosen < 0 || std::abs(at - middle) < std::abs(chosen - middle)))
                chosen = at;
        if (chosen >= 0) {
            out.next = commits[chosen];
            out.output = "Bisecting: " + std::to_string(m_bad - m_good - 2) +
                         " revisions left to test after this\n[" + out.next + "] " +
                         subject(chosen) + "\n";
            return out;
        }
        out.done = true;
        if (m_bad == m_good + 1) {
            out.culprit = commits[m_bad];
            out.output = out.culprit + " is the first bad commit\n";
            m_log += "# first bad commit: [" + out.culprit + "] " + subject(m_bad) + "\n";
            return out;
        }
        out.output = "There are only 'skip'ped commits left to test.\n"
                     "The first bad commit could be any of:\n";
        for (int at = m_good + 1; at <= m_bad; ++at) {
            out.candidates.push_back(commits[at]);
            out.output += commits[at] + "\n";
        }
        out.output += "We cannot bisect more!\n";
        return out;
    }

    FakeGitHistory& m_history;
    int m_good = 0;
    int m_bad = 0;
    std::set<int> m_skipped;
    std::string m_log;
};

std::unique_ptr<bisect::History> FakeGitHistory::open() {
    return std::make_unique<FakeBisect>(*this);
}

bisect::OpenHistory FakeGitHistory::opener() {
    return
        [this](const fs::path& dir, const fs::path&) -> Expected<std::unique_ptr<bisect::History>> {
            opened.push_back(dir.string());
            return open();
        };
}

} // namespace rig::test
