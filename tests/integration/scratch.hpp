// SPDX-License-Identifier: MIT
// What integration tests share: a fresh folder and database per test, reading the
// database as a user's script would, and finding processes a test started.
#pragma once

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <gtest/gtest.h>
#include <map>
#include <pwd.h>
#include <regex>
#include <set>
#include <sqlite3.h>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace rig::test {

// A fresh database per test under the build folder; kernels and initramfs images are
// shared through RIG_CACHE, which meson points at one folder for the whole suite.
struct Scratch {
    std::filesystem::path dir;
    std::filesystem::path db;
    explicit Scratch(const std::string& name, const std::string& folder = "test-runs") {
        const char* root = std::getenv("RIG_BUILD_ROOT");
        dir = std::filesystem::path(root ? root : "/tmp") / folder / name;
        std::filesystem::remove_all(dir);
        std::filesystem::create_directories(dir);
        db = dir / "rig.db";
    }
};

// Rows of a query as tab-joined strings.
inline std::vector<std::string> query(const std::filesystem::path& db, const std::string& sql) {
    sqlite3* handle = nullptr;
    std::vector<std::string> rows;
    if (sqlite3_open_v2(db.c_str(), &handle, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
        sqlite3_close(handle);
        ADD_FAILURE() << "cannot open " << db;
        return rows;
    }
    // rig may be writing, or still making the file (its schema, the switch to WAL): wait
    // as rig's own connections do rather than fail with "database is locked".
    sqlite3_busy_timeout(handle, 10000);
    sqlite3_stmt* statement = nullptr;
    if (sqlite3_prepare_v2(handle, sql.c_str(), -1, &statement, nullptr) != SQLITE_OK) {
        ADD_FAILURE() << sqlite3_errmsg(handle) << ": " << sql;
    } else {
        while (sqlite3_step(statement) == SQLITE_ROW) {
            std::string row;
            for (int i = 0; i < sqlite3_column_count(statement); ++i) {
                auto text = sqlite3_column_text(statement, i);
                row += (i ? "\t" : "") +
                       std::string(text ? reinterpret_cast<const char*>(text) : "NULL");
            }
            rows.push_back(row);
        }
    }
    sqlite3_finalize(statement);
    sqlite3_close(handle);
    return rows;
}

inline std::string one(const std::filesystem::path& db, const std::string& sql) {
    auto rows = query(db, sql);
    return rows.empty() ? "" : rows.front();
}

// Processes whose command line mentions `needle`: QEMU and virtiofsd carry the sample's
// folder in their arguments, so this finds exactly what a test started.
inline std::vector<int> processes_mentioning(const std::string& needle) {
    std::vector<int> pids;
    for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
        std::string name = entry.path().filename().string();
        if (name.find_first_not_of("0123456789") != std::string::npos)
            continue;
        // A process may end while it is read: reading its cmdline then fails with ESRCH,
        // which an istreambuf_iterator would throw; operator<< only sets failbit.
        std::ifstream in(entry.path() / "cmdline", std::ios::binary);
        std::ostringstream text;
        text << in.rdbuf();
        std::string cmdline = text.str();
        if (cmdline.find(needle) != std::string::npos && std::stoi(name) != ::getpid())
            pids.push_back(std::stoi(name));
    }
    return pids;
}

// The uid of the local account `name`, -2 when there is none (so it matches no process).
inline long account_uid(const char* name) {
    const struct passwd* entry = ::getpwnam(name);
    return entry ? static_cast<long>(entry->pw_uid) : -2;
}

// How make names a git kernel's build folder on its command line: /tmp/out when rig is
// root (kernel/confine.hpp binds it there), the folder under the cache's git/ otherwise.
inline std::string make_out_argument() {
    if (::geteuid() == 0)
        return "O=/tmp/out";
    return "O=" + (std::filesystem::absolute(std::getenv("RIG_CACHE")) / "git").string();
}

// Processes running as `uid`: a kernel build's make, sub-makes and compilers when rig is
// root (they run as rig-qemu, kernel/confine.hpp), and the QEMUs of guests. A suite that
// runs beside others (scripts/test) sees their guests' QEMUs too: `builds_only` leaves
// QEMU out. A zombie runs nothing (its reaping is its parent's or init's business): left
// out.
inline std::vector<int> processes_of_user(long uid, bool builds_only = false) {
    std::vector<int> pids;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
        std::string name = entry.path().filename().string();
        if (name.find_first_not_of("0123456789") != std::string::npos)
            continue;
        if (builds_only) {
            std::ifstream comm(entry.path() / "comm");
            std::string command;
            if (std::getline(comm, command) && command.rfind("qemu", 0) == 0)
                continue;
        }
        std::ifstream status(entry.path() / "status");
        for (std::string line; std::getline(status, line);) {
            if (line.rfind("State:", 0) == 0 && line.find("Z (zombie)") != std::string::npos)
                break;
            if (line.rfind("Uid:", 0) == 0 && std::stol(line.substr(4)) == uid)
                pids.push_back(std::stoi(name));
        }
    }
    return pids;
}

// A running QEMU of a test and where its threads may run, from the kernel's own view.
struct GuestThreads {
    int pid = 0;
    std::string cmdline;             // NULs as spaces
    std::set<std::string> cpu_lists; // the Cpus_allowed_list of each of its threads
    long uid = -1;                   // the user it runs as (real uid)
};

// The QEMU processes whose command line mentions `needle`, each with its threads' CPUs:
// what --jobs' pinning must show whichever backend started them.
inline std::vector<GuestThreads> qemu_threads(const std::string& needle) {
    std::vector<GuestThreads> guests;
    for (int pid : processes_mentioning(needle)) {
        std::filesystem::path proc = "/proc/" + std::to_string(pid);
        std::ifstream in(proc / "cmdline", std::ios::binary);
        std::ostringstream text;
        text << in.rdbuf();
        GuestThreads guest{pid, text.str(), {}};
        if (guest.cmdline.find("qemu-system") == std::string::npos)
            continue;
        std::replace(guest.cmdline.begin(), guest.cmdline.end(), '\0', ' ');
        std::ifstream process_status(proc / "status");
        for (std::string line; std::getline(process_status, line);)
            if (line.rfind("Uid:", 0) == 0)
                guest.uid = std::stol(line.substr(4));
        std::error_code ec;
        for (const auto& task : std::filesystem::directory_iterator(proc / "task", ec)) {
            std::ifstream status(task.path() / "status");
            for (std::string line; std::getline(status, line);)
                if (line.rfind("Cpus_allowed_list:", 0) == 0)
                    guest.cpu_lists.insert(line.substr(line.find_first_not_of(" \t", 18)));
        }
        guests.push_back(std::move(guest));
    }
    return guests;
}

// What the threads of each sample's QEMU were allowed, by "CELL/REPETITION" (from the
// sample folder in its command line), seen while rig runs; and how many guests ran at
// once at most.
struct SeenGuests {
    std::map<std::string, std::set<std::string>> cpus;
    size_t most_at_once = 0;
    std::set<long> uids; // the users their QEMU ran as
};

// One look at the QEMU processes of a test's folder `needle`, added to `seen`; how many
// it saw, so that a caller waiting for guests judges by the same look it recorded.
inline size_t look_at_guests(const std::string& needle, SeenGuests& seen) {
    // In a path QEMU opens, or in the -name of a QEMU run as rig-qemu (vm/qemu_user.hpp),
    // which ends with the folder.
    static const std::regex sample_dir("/runs/[0-9]+/([0-9a-f]{12})/([0-9]+)[/ ]");
    auto guests = qemu_threads(needle);
    seen.most_at_once = std::max(seen.most_at_once, guests.size());
    for (const auto& guest : guests) {
        seen.uids.insert(guest.uid);
        std::smatch match;
        if (std::regex_search(guest.cmdline, match, sample_dir))
            seen.cpus[match[1].str() + "/" + match[2].str()].insert(guest.cpu_lists.begin(),
                                                                    guest.cpu_lists.end());
    }
    return guests.size();
}

// Each stored sample is ok, ran on one of the host's CPUs 0 and 1 (two one-vCPU guests at
// once on this two-CPU machine), and every thread of its QEMU (vCPU, I/O, main loop) was
// seen allowed that CPU only; each cell's samples went round both CPUs.
inline void expect_samples_ran_where_recorded(const std::filesystem::path& db,
                                              const SeenGuests& seen, size_t samples) {
    auto stored = query(db, "SELECT cell_id || '/' || repetition, cpus, outcome FROM samples "
                            "ORDER BY cell_id, repetition");
    ASSERT_EQ(stored.size(), samples);
    std::map<std::string, std::set<std::string>> cpus_of_cell;
    for (const std::string& row : stored) {
        std::istringstream fields(row);
        std::string sample, cpus, outcome;
        std::getline(fields, sample, '\t');
        std::getline(fields, cpus, '\t');
        std::getline(fields, outcome, '\t');
        EXPECT_EQ(outcome, "ok") << row;
        EXPECT_TRUE(cpus == "0" || cpus == "1") << row;
        auto observed = seen.cpus.find(sample);
        ASSERT_NE(observed, seen.cpus.end()) << "never saw the QEMU of " << sample;
        EXPECT_EQ(observed->second, std::set<std::string>({cpus})) << sample;
        cpus_of_cell[sample.substr(0, 12)].insert(cpus);
    }
    for (const auto& [cell, cpus] : cpus_of_cell)
        EXPECT_EQ(cpus.size(), 2u) << cell;
}

// Looks at the test's guests every 100 ms until rig exits or `limit` passes; rig's wait
// status, or -1 when it was still running.
inline int watch_guests_until_exit(pid_t rig, const std::string& needle, SeenGuests& seen,
                                   std::chrono::milliseconds limit) {
    int status = 0;
    auto deadline = std::chrono::steady_clock::now() + limit;
    while (::waitpid(rig, &status, WNOHANG) != rig) {
        if (std::chrono::steady_clock::now() > deadline)
            return -1;
        look_at_guests(needle, seen);
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return status;
}

// kill -9 of rig, as a crash or an impatient user would. True when no process mentioning
// `needle` is left within `limit`: PR_SET_PDEATHSIG takes QEMU and virtiofsd down at once;
// libvirtd destroys autodestroy domains once it sees the connection closed, which took
// over 5 s with a kernel build beside the suite.
inline bool kill_leaves_no_process(pid_t rig, const std::string& needle,
                                   std::chrono::milliseconds limit = std::chrono::seconds(5)) {
    ::kill(rig, SIGKILL);
    ::waitpid(rig, nullptr, 0);
    auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline && !processes_mentioning(needle).empty())
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    return processes_mentioning(needle).empty();
}

// Polls until `ready()` holds (true), or rig exits or `limit` passes first (false): for a
// test that interrupts or kills rig at a chosen moment.
inline bool wait_while_running(pid_t rig, std::chrono::milliseconds limit,
                               const std::function<bool()>& ready,
                               std::chrono::milliseconds poll = std::chrono::milliseconds(500)) {
    auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
        if (ready())
            return true;
        if (::waitpid(rig, nullptr, WNOHANG) == rig)
            return false;
        std::this_thread::sleep_for(poll);
    }
    return false;
}

// Ctrl-C to rig; its exit code, or -1 when it did not exit normally.
inline int interrupt(pid_t rig) {
    int status = 0;
    ::kill(rig, SIGINT);
    if (::waitpid(rig, &status, 0) != rig || !WIFEXITED(status))
        return -1;
    return WEXITSTATUS(status);
}

} // namespace rig::test
