// SPDX-License-Identifier: MIT
// `rig run` with real QEMU and real Debian kernels: outcomes, metrics, resume, no orphans.
#include "golden.hpp"
#include "rig_binary.hpp"
#include "scratch.hpp"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <fcntl.h>
#include <fstream>
#include <regex>
#include <set>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using rig::test::run_rig;
namespace fs = std::filesystem;

namespace {

using rig::test::one;
using rig::test::processes_mentioning;
using rig::test::query;
using rig::test::Scratch;

const auto k_run_timeout = std::chrono::minutes(15);

// The text of the one sample's file `name` under the scratch folder's runs/, or "" when
// it has none.
std::string sample_file(const Scratch& scratch, const std::string& name) {
    for (const auto& entry : fs::recursive_directory_iterator(scratch.dir / "runs"))
        if (entry.path().filename() == name) {
            std::ifstream in(entry.path(), std::ios::binary);
            return std::string(std::istreambuf_iterator<char>(in), {});
        }
    return "";
}

} // namespace

TEST(Run, NinePAndVirtiofsSamplesFinishOk) {
    Scratch scratch("ok");
    auto result = run_rig({"--db", scratch.db, "run", "tests/data/run/ok.yaml"}, k_run_timeout);
    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    auto rows = query(scratch.db,
                      "SELECT c.fs, s.outcome, s.error_count, s.guest_seconds > 0, "
                      "s.wall_seconds > 0, s.qemu_cpu_seconds > 0, s.host_cpu_percent > 0, "
                      "s.accel FROM samples s JOIN cells c USING (run_id, cell_id) ORDER BY c.fs");
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_EQ(rows[0], "9p\tok\t0\t1\t1\t1\t1\ttcg");
    EXPECT_EQ(rows[1], "virtiofs\tok\t0\t1\t1\t1\t1\ttcg");
    EXPECT_EQ(one(scratch.db, "SELECT msize, msize_negotiated, cache_negotiated FROM samples "
                              "JOIN cells USING (run_id, cell_id) WHERE fs = '9p'"),
              "4186112\t512000\tloose");
    EXPECT_EQ(one(scratch.db, "SELECT helper_cpu_seconds > 0 FROM samples JOIN cells "
                              "USING (run_id, cell_id) WHERE fs = 'virtiofs'"),
              "1");
    // The table shows requested and negotiated msize side by side, as the 9p cache/msize table
    // does.
    EXPECT_NE(result.out.find("4186112→512000"), std::string::npos) << result.out;
    EXPECT_NE(result.out.find("case"), std::string::npos);
    // The guest's own counters over the workload window, per sample: CPU time by kind, page
    // faults and paging, as named metrics. The compile ran in the guest, so it faulted
    // pages in and spent CPU there.
    for (const std::string fs : {"9p", "virtiofs"}) {
        auto counters = query(scratch.db, "SELECT m.name, m.unit FROM metrics m JOIN samples s ON "
                                          "s.id = m.sample_id JOIN cells c USING (run_id, "
                                          "cell_id) WHERE c.fs = '" +
                                              fs + "' AND m.name LIKE 'guest.%' ORDER BY 1");
        for (const char* expected :
             {"guest.cpu.iowait\ts", "guest.cpu.system\ts", "guest.cpu.user\ts",
              "guest.vm.pgfault\tfaults", "guest.vm.pgmajfault\tfaults", "guest.vm.pgpgin\tKiB",
              "guest.vm.pgpgout\tKiB"})
            EXPECT_NE(std::find(counters.begin(), counters.end(), expected), counters.end())
                << fs << " lacks " << expected;
        EXPECT_EQ(one(scratch.db, "SELECT sum(m.value) > 0 FROM metrics m JOIN samples s ON s.id "
                                  "= m.sample_id JOIN cells c USING (run_id, cell_id) WHERE c.fs "
                                  "= '" +
                                      fs +
                                      "' AND m.name IN ('guest.cpu.user', "
                                      "'guest.cpu.system')"),
                  "1");
        EXPECT_EQ(one(scratch.db, "SELECT m.value > 0 FROM metrics m JOIN samples s ON s.id = "
                                  "m.sample_id JOIN cells c USING (run_id, cell_id) WHERE c.fs = "
                                  "'" +
                                      fs + "' AND m.name = 'guest.vm.pgfault'"),
                  "1");
    }
    // 9p requests counted by the host, virtiofs requests by virtiofsd's log; the
    // virtiofs cell has no 9p work share, so its 9p work counts are unknown (absent).
    for (const auto& [fs, name] :
         std::vector<std::pair<std::string, std::string>>{{"9p", "9p.work.requests"},
                                                          {"9p", "9p.root.requests"},
                                                          {"virtiofs", "9p.root.requests"},
                                                          {"virtiofs", "virtiofs.lookup"}})
        EXPECT_EQ(
            one(scratch.db, "SELECT m.value > 0 FROM metrics m JOIN samples s ON s.id = "
                            "m.sample_id JOIN cells c USING (run_id, cell_id) WHERE c.fs = '" +
                                fs + "' AND m.name = '" + name + "'"),
            "1")
            << fs << " " << name;
    // The generated project's outputs (its program and four objects), hashed by the guest
    // through its cache and by rig in the share: the same on both sides.
    EXPECT_EQ(
        query(scratch.db, "SELECT c.fs, m.name, CAST(m.value AS INTEGER) FROM metrics m "
                          "JOIN samples s ON s.id = m.sample_id JOIN cells c USING "
                          "(run_id, cell_id) WHERE m.name LIKE 'outputs.%' ORDER BY 1, 2"),
        (std::vector<std::string>{"9p\toutputs.files\t4", "9p\toutputs.wrong\t0",
                                  "virtiofs\toutputs.files\t4", "virtiofs\toutputs.wrong\t0"}));
    // The scenario names the series linux-image-6.1: the exact package it resolved to and
    // its release are recorded for the artifact the samples ran on, and the report says so.
    const std::string package = one(scratch.db, "SELECT a.package FROM kernel_artifacts a JOIN "
                                                "samples s ON s.kernel_artifact = a.cache_key "
                                                "GROUP BY a.package");
    EXPECT_TRUE(std::regex_match(package, std::regex(R"(linux-image-6\.1\.0-[0-9]+-amd64)")))
        << package;
    EXPECT_EQ(one(scratch.db, "SELECT \"release\" = substr(package, 13) AND image_sha256 <> '' "
                              "AND package_version LIKE '6.1.%' FROM kernel_artifacts"),
              "1");
    auto report = run_rig({"--db", scratch.db, "report"});
    EXPECT_EQ(report.exit_code, 0) << report.err;
    EXPECT_NE(report.out.find("  deb-6.1: " + package + " 6.1."), std::string::npos) << report.out;
    EXPECT_TRUE(processes_mentioning(scratch.dir.string()).empty());

    // `rig reproduce` packs the virtiofs sample; its run.sh starts virtiofsd, then QEMU,
    // without rig: the guest compiles and runs the project again and powers off.
    auto both = run_rig({"--db", scratch.db, "reproduce", "1"});
    EXPECT_EQ(both.exit_code, 2) << both.out << both.err;
    EXPECT_NE(both.err.find("matches 2 cells"), std::string::npos) << both.err;
    const fs::path tarball = scratch.dir / "virtiofs.repro.tar.gz";
    auto packed = run_rig(
        {"--db", scratch.db, "reproduce", "1", "--cell", "fs=virtiofs", "-o", tarball.string()});
    ASSERT_EQ(packed.exit_code, 0) << packed.out << packed.err;
    EXPECT_NE(packed.out.find("tar xf virtiofs.repro.tar.gz && virtiofs.repro/run.sh"),
              std::string::npos)
        << packed.out;
    auto unpacked = rig::proc::run({"tar", "-xf", tarball.string(), "-C", scratch.dir.string()});
    ASSERT_TRUE(unpacked && unpacked->exit_code == 0);
    const fs::path folder = scratch.dir / "virtiofs.repro";
    EXPECT_NE(rig::test::read_text(folder / "run.sh").find("virtiofsd"), std::string::npos);
    rig::proc::RunOptions boot;
    boot.timeout = std::chrono::minutes(5);
    auto booted = rig::proc::run({(folder / "run.sh").string()}, boot);
    ASSERT_TRUE(booted);
    const std::string channel = rig::test::read_text(folder / "channel.log");
    EXPECT_EQ(booted->exit_code, 0) << booted->err << rig::test::read_text(folder / "console.log");
    EXPECT_NE(channel.find("RIG done"), std::string::npos) << channel;
    const size_t end = channel.find("RIG end ");
    ASSERT_NE(end, std::string::npos) << channel;
    const std::string end_line = channel.substr(end, channel.find('\n', end) - end);
    EXPECT_EQ(end_line.substr(end_line.rfind(' ')), " 0") << end_line; // the workload's status
    EXPECT_TRUE(processes_mentioning(folder.string()).empty());
}

// Files of known content written by the guest reach the host and the host's reach the
// guest, through every cache of every filesystem: each side's hash of each file is what it
// was written with (the bisect suite plants a kernel for which they are not). And each
// mount keeps its coherency promise when the host changes a file the guest has read.
TEST(Run, ReadbackHoldsOnEveryFilesystemAndCacheMode) {
    Scratch scratch("readback");
    auto result =
        run_rig({"--db", scratch.db, "run", "tests/data/run/readback.yaml"}, k_run_timeout);
    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_EQ(query(scratch.db,
                    "SELECT c.fs, c.cache, s.outcome, s.error_count, (SELECT CAST(value AS "
                    "INTEGER) FROM metrics WHERE sample_id = s.id AND name = 'outputs.files'), "
                    "(SELECT CAST(value AS INTEGER) FROM metrics WHERE sample_id = s.id AND name "
                    "= 'outputs.wrong') FROM samples s JOIN cells c USING (run_id, cell_id) "
                    "ORDER BY 1, 2"),
              (std::vector<std::string>{"9p\tloose\tok\t0\t8\t0", "9p\tmmap\tok\t0\t8\t0",
                                        "9p\tnone\tok\t0\t8\t0", "fuse\t\tok\t0\t8\t0",
                                        "virtiofs\tauto\tok\t0\t8\t0"}))
        << result.out;
    // Coherency: every mount kept its promise. Those that promise fresh reads gave no stale
    // one; loose, which promises nothing, saw none of the four changes in its window.
    auto metric = [](const std::string& name) {
        return "(SELECT CAST(value AS INTEGER) FROM metrics WHERE sample_id = s.id AND name = '" +
               name + "')";
    };
    EXPECT_EQ(query(scratch.db, "SELECT c.fs, c.cache, " + metric("stale.unseen") + ", " +
                                    metric("stale.broken") +
                                    " FROM samples s JOIN cells c USING (run_id, cell_id) "
                                    "ORDER BY 1, 2"),
              (std::vector<std::string>{"9p\tloose\t4\t0", "9p\tmmap\t0\t0", "9p\tnone\t0\t0",
                                        "fuse\t\t0\t0", "virtiofs\tauto\t0\t0"}))
        << result.out;
    EXPECT_EQ(query(scratch.db, "SELECT DISTINCT m.value FROM metrics m JOIN samples s ON s.id = "
                                "m.sample_id JOIN cells c USING (run_id, cell_id) WHERE c.fs = "
                                "'9p' AND c.cache IN ('none', 'mmap') AND m.name = 'stale.reads'"),
              (std::vector<std::string>{"0.0"}));
    for (const std::string part : {"Coherency:", "> 2.50 s"})
        EXPECT_NE(result.out.find(part), std::string::npos) << part << "\n" << result.out;
}

// Guest and server can agree on a file and still be wrong: each sample's outputs are held
// against its cell's cache=none twin, stored in the database, and a difference is
// wrong-output, the file named.
TEST(Run, OutputsThatDifferFromTheReferenceAfterAPhaseAreWrongOutput) {
    Scratch scratch("reference");
    auto result =
        run_rig({"--db", scratch.db, "run", "tests/data/run/reference.yaml"}, k_run_timeout);
    ASSERT_EQ(result.exit_code, 1) << result.out << result.err;
    EXPECT_EQ(query(scratch.db, "SELECT c.cache, s.outcome, s.error_count, length(s.outputs) > 0 "
                                "FROM samples s JOIN cells c USING (run_id, cell_id) ORDER BY 1"),
              (std::vector<std::string>{"loose\twrong-output\t1\t1", "none\tok\t0\t1"}))
        << result.out;
    // Only the check after the first phase can see it: the end's stamp is a constant.
    EXPECT_EQ(query(scratch.db, "SELECT source, signature FROM error_lines"),
              (std::vector<std::string>{
                  "outputs\tafter stamp: output stamp.txt: other content than the reference has"}));
    EXPECT_EQ(query(scratch.db, "SELECT m.value FROM metrics m JOIN samples s ON s.id = "
                                "m.sample_id WHERE m.name = 'settle/outputs.files'"),
              (std::vector<std::string>{"2.0", "2.0"}));
    EXPECT_NE(
        one(scratch.db, "SELECT line FROM error_lines").find("sample 1 of the cache=none twin"),
        std::string::npos);
}

TEST(Run, PhasesAreTimedAndCountedOnTheirOwn) {
    Scratch scratch("phases");
    auto result = run_rig({"--db", scratch.db, "run", "tests/data/run/phases.yaml"}, k_run_timeout);
    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_EQ(query(scratch.db, "SELECT outcome FROM samples"),
              (std::vector<std::string>{"ok", "ok", "ok"}));
    // Each phase timed, and 9p requests counted by the host per share and phase. The
    // virtiofs cell has no 9p work share: its work counts are unknown (absent), not 0.
    auto metric = [&](const std::string& fs, const std::string& name) {
        return one(scratch.db, "SELECT m.value FROM metrics m JOIN samples s ON s.id = "
                               "m.sample_id JOIN cells c USING (run_id, cell_id) WHERE c.fs = '" +
                                   fs + "' AND m.name = '" + name + "'");
    };
    auto number = [](const std::string& text) { return text.empty() ? -1.0 : std::stod(text); };
    for (const std::string fs : {"9p", "virtiofs"}) {
        EXPECT_GT(number(metric(fs, "build/seconds")), number(metric(fs, "noop/seconds"))) << fs;
        EXPECT_GT(number(metric(fs, "noop/seconds")), 0) << fs;
        EXPECT_GT(number(metric(fs, "9p.root.requests")), 0) << fs << ": the compiler is there";
    }
    double build = number(metric("9p", "build/9p.work.requests"));
    double noop = number(metric("9p", "noop/9p.work.requests"));
    EXPECT_GT(noop, 0) << "a no-op make still looks at every file";
    EXPECT_GT(build, noop);
    EXPECT_EQ(number(metric("9p", "9p.work.requests")), build + noop);
    EXPECT_GT(number(metric("9p", "build/9p.work.read_bytes")), 1000);
    EXPECT_GT(number(metric("9p", "build/9p.work.write_bytes")), 1000) << "objects written";
    EXPECT_EQ(metric("9p", "noop/9p.work.mkdir"), "0.0") << "every type, zero included";
    // The guest's own counters per phase too, named as over the whole window.
    EXPECT_GT(number(metric("9p", "build/guest.vm.pgfault")), 0);
    EXPECT_GT(number(metric("9p", "guest.vm.pgfault")),
              number(metric("9p", "build/guest.vm.pgfault")));
    EXPECT_EQ(metric("virtiofs", "9p.work.requests"), "");
    // virtiofsd's own log counts the virtiofs cell's requests, per phase too.
    EXPECT_GT(number(metric("virtiofs", "build/virtiofs.lookup")), 0);
    EXPECT_GT(number(metric("virtiofs", "noop/virtiofs.requests")), 0);
    EXPECT_EQ(number(metric("virtiofs", "virtiofs.requests")),
              number(metric("virtiofs", "build/virtiofs.requests")) +
                  number(metric("virtiofs", "noop/virtiofs.requests")));
    EXPECT_EQ(metric("9p", "virtiofs.requests"), "");
    // Checked after the build too (the end's check is the noop's), each check on its own,
    // with the probe's promise kept; the check's pause is in no figure of the workload's
    // (the requests' sums above hold, and its time is left out).
    for (const std::string fs : {"9p", "virtiofs", "fuse"}) {
        EXPECT_GT(number(metric(fs, "build/outputs.files")), 0) << fs;
        EXPECT_EQ(number(metric(fs, "build/outputs.wrong")), 0) << fs;
        EXPECT_EQ(number(metric(fs, "noop/outputs.files")),
                  number(metric(fs, "build/outputs.files")))
            << fs;
        EXPECT_EQ(number(metric(fs, "outputs.wrong")), 0) << fs;
        EXPECT_EQ(number(metric(fs, "build/stale.broken")), 0) << fs;
        EXPECT_EQ(number(metric(fs, "noop/stale.broken")), 0) << fs;
        EXPECT_EQ(number(metric(fs, "stale.files")),
                  number(metric(fs, "build/stale.files")) + number(metric(fs, "noop/stale.files")))
            << fs;
    }
    // The check after the build waits out loose's two 1.5 s windows (it sees neither change):
    // counted, the workload would be 3 s longer than its phases. (Between phases the agent
    // reads its counters: a loaded host makes that up to half a second.)
    const double phases =
        number(metric("9p", "build/seconds")) + number(metric("9p", "noop/seconds"));
    const double workload =
        number(one(scratch.db, "SELECT s.guest_seconds FROM samples s JOIN "
                               "cells c USING (run_id, cell_id) WHERE c.fs = '9p'"));
    EXPECT_LT(workload, phases + 1.5);
    // rig-fuse's own counts: the check's requests moved out of the workload's.
    EXPECT_EQ(number(metric("fuse", "fuse.requests")),
              number(metric("fuse", "build/fuse.requests")) +
                  number(metric("fuse", "noop/fuse.requests")));
    // loose keeps the old state: neither change shows within the window, at either check.
    EXPECT_EQ(number(metric("9p", "build/stale.unseen")), 2);
    EXPECT_EQ(number(metric("9p", "noop/stale.unseen")), 2);
    EXPECT_NE(one(scratch.db, "SELECT s.outputs FROM samples s JOIN cells c USING (run_id, "
                              "cell_id) WHERE c.fs = '9p'")
                  .find("# after build\n"),
              std::string::npos);
    // The trace is read and removed: a long compile's runs to tens of megabytes.
    EXPECT_EQ(one(scratch.db, "SELECT count(*) FROM samples"), "3");
    for (const auto& entry : std::filesystem::recursive_directory_iterator(scratch.dir / "runs"))
        EXPECT_TRUE(entry.path().filename() != "9p.trace" &&
                    entry.path().filename() != "virtiofsd-work.log")
            << entry.path();
}

// A Debian kernel boots microvm on the QEMU backend unless the scenario pins q35; the
// rebuilds' exact counts (cache=none: nothing cached, every request reaches the server) are
// the same on both, since they come from the 9p server and virtiofsd, not the transport.
TEST(Run, MicrovmAndQ35CountTheSame) {
    Scratch microvm("machines"), q35("machines-q35");
    auto first =
        run_rig({"--db", microvm.db, "run", "tests/data/run/machines.yaml"}, k_run_timeout);
    ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
    auto second =
        run_rig({"--db", q35.db, "run", "tests/data/run/machines-q35.yaml"}, k_run_timeout);
    ASSERT_EQ(second.exit_code, 0) << second.out << second.err;
    EXPECT_NE(sample_file(microvm, "qemu.argv").find("\nmicrovm,accel=tcg"), std::string::npos);
    EXPECT_NE(sample_file(q35, "qemu.argv").find("\nq35,accel=tcg"), std::string::npos);
    EXPECT_EQ(one(microvm.db, "SELECT group_concat(DISTINCT machine) FROM samples"), "microvm");
    EXPECT_EQ(one(q35.db, "SELECT group_concat(DISTINCT machine) FROM samples"), "q35");
    const std::string counts =
        "SELECT c.fs, m.name, m.value FROM metrics m JOIN samples s ON s.id = m.sample_id JOIN "
        "cells c USING (run_id, cell_id) WHERE (m.name LIKE 'noop/%.requests' OR m.name LIKE "
        "'touch/%.requests') ORDER BY c.fs, m.name";
    auto on_microvm = query(microvm.db, counts);
    // 9p's work and root shares and virtiofs' work share, each after both rebuilds.
    EXPECT_GE(on_microvm.size(), 6u);
    EXPECT_EQ(on_microvm, query(q35.db, counts));
    for (const Scratch* scratch : {&microvm, &q35})
        EXPECT_EQ(
            one(scratch->db, "SELECT group_concat(outcome || ' ' || error_count) FROM samples"),
            "ok 0,ok 0");
}

TEST(Run, PanicIsRecordedAndRigCarriesOn) {
    Scratch scratch("panic");
    auto result = run_rig({"--db", scratch.db, "run", "tests/data/run/panic.yaml"}, k_run_timeout);
    EXPECT_EQ(result.exit_code, 1) << result.out << result.err;
    EXPECT_EQ(one(scratch.db, "SELECT outcome FROM samples"), "kernel-panic");
    EXPECT_NE(one(scratch.db, "SELECT evidence FROM samples").find("Kernel panic"),
              std::string::npos);
    // On microvm, whose pvpanic is the ISA device that ACPI lists.
    EXPECT_NE(sample_file(scratch, "qemu.argv").find("\nmicrovm,"), std::string::npos);
    EXPECT_EQ(one(scratch.db, "SELECT count(*) FROM error_lines WHERE signature LIKE "
                              "'Kernel panic - not syncing%'"),
              "1");
    // The console prints every level during the workload (drop_caches' info line), and
    // only warnings and worse before it (the boot's notice line "Linux version").
    std::string console = sample_file(scratch, "console.log");
    EXPECT_NE(console.find("drop_caches: 3"), std::string::npos) << console;
    EXPECT_EQ(console.find("] Linux version "), std::string::npos) << console;
}

TEST(Run, HangBecomesWorkloadTimeout) {
    Scratch scratch("hang");
    auto started = std::chrono::steady_clock::now();
    auto result = run_rig({"--db", scratch.db, "run", "tests/data/run/hang.yaml"}, k_run_timeout);
    EXPECT_EQ(result.exit_code, 1) << result.out << result.err;
    EXPECT_EQ(one(scratch.db, "SELECT outcome FROM samples"), "workload-timeout");
    // The 20 s workload timeout, not the guest's sleep, ended the sample.
    EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::minutes(4));
    EXPECT_TRUE(processes_mentioning(scratch.dir.string()).empty());
}

TEST(Run, FailingCompileIsWorkloadFailedWithItsErrorLine) {
    Scratch scratch("fail");
    auto result = run_rig({"--db", scratch.db, "run", "tests/data/run/fail.yaml"}, k_run_timeout);
    EXPECT_EQ(result.exit_code, 1) << result.out << result.err;
    EXPECT_EQ(one(scratch.db, "SELECT outcome, exit_status > 0 FROM samples"),
              "workload-failed\t1");
    EXPECT_EQ(one(scratch.db, "SELECT source, signature FROM error_lines"),
              "workload\tbroken.c:N:N: error: ‘x’ undeclared (first use in this function)");
    // A failed sample keeps the whole kernel log, info lines included, which the console
    // does not print.
    std::string kernel_log = sample_file(scratch, "kernel.log");
    EXPECT_NE(kernel_log.find("] Linux version "), std::string::npos) << kernel_log;
    EXPECT_NE(kernel_log.find("9pnet"), std::string::npos) << kernel_log;
    EXPECT_EQ(sample_file(scratch, "console.log").find("] Linux version "), std::string::npos);
}

// Resident memory of a live process in KiB, from /proc/PID/status.
long resident_kib(int pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/status");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind("VmRSS:", 0) == 0)
            return std::stol(line.substr(6));
    return 0;
}

// A rig command run to its end, with its resident memory sampled every 200 ms (wait4's
// rusage would take QEMU's in).
struct Peak {
    long kib = 0;
    std::optional<int> status;
};
Peak sampled_peak_of(std::vector<std::string> args, const fs::path& log) {
    rig::proc::SpawnOptions options;
    options.cwd = rig::test::source_root();
    options.stdout_file = log;
    args.insert(args.begin(), std::getenv("RIG_BINARY"));
    auto rig = rig::proc::Child::spawn(args, options);
    Peak peak;
    if (!rig)
        return peak;
    for (int i = 0; i < 15 * 60 * 5 && !peak.status; ++i) {
        peak.kib = std::max(peak.kib, resident_kib((*rig)->pid()));
        peak.status = (*rig)->wait_for(std::chrono::milliseconds(200));
    }
    return peak;
}

TEST(Run, JunkAndForgedRecordsChangeNothingAndMemoryStaysBounded) {
    Scratch scratch("junk");
    // What rig holds for a sample whose guest prints nothing: the same cell, workload
    // `true`. Its own allocations, and what the sanitizers keep of what it freed (a 16 MB
    // quarantine), are in both runs; only the junk run's guest printed 70 MB.
    Peak quiet = sampled_peak_of(
        {"--db", (scratch.dir / "quiet.db").string(), "run", "tests/data/run/junk-quiet.yaml"},
        scratch.dir / "quiet.log");
    ASSERT_EQ(quiet.status, 0) << rig::test::read_text(scratch.dir / "quiet.log");
    Peak junk = sampled_peak_of({"--db", scratch.db.string(), "run", "tests/data/run/junk.yaml"},
                                scratch.dir / "rig.log");
    ASSERT_TRUE(junk.status);
    EXPECT_EQ(*junk.status, 0) << rig::test::read_text(scratch.dir / "rig.log");
    // rig must not hold the 70 MB the guest printed, nor a large part of it.
    EXPECT_LT(junk.kib, quiet.kib + 32 * 1024) << "the quiet sample: " << quiet.kib << " KiB";
    EXPECT_EQ(one(scratch.db, "SELECT outcome, exit_status FROM samples"), "ok\t0");
    // The metric line printed by the workload is kept; forged "RIG" lines are not records,
    // and a workload cannot forge the guest's own counters.
    EXPECT_EQ(query(scratch.db, "SELECT name, value, unit FROM metrics WHERE name NOT LIKE "
                                "'guest.%' AND name NOT LIKE '9p.%'"),
              std::vector<std::string>{"lookup_ns\t42.5\tns"});
    EXPECT_EQ(one(scratch.db, "SELECT count(*) FROM metrics WHERE name = '9p.work.requests'"), "1");
    EXPECT_EQ(one(scratch.db, "SELECT value <> 7 FROM metrics WHERE name = '9p.work.requests'"),
              "1");
    EXPECT_EQ(one(scratch.db, "SELECT count(*) FROM metrics WHERE name = 'guest.cpu.user'"), "1");
    EXPECT_EQ(one(scratch.db, "SELECT value < 999 FROM metrics WHERE name = 'guest.cpu.user'"),
              "1");
}

TEST(Run, KilledRigLeavesNoGuestsAndResumeDoesNotRepeatSamples) {
    Scratch scratch("resume");
    pid_t rig = rig::test::start_rig_logged(
        {"--db", scratch.db.string(), "run", "tests/data/run/resume.yaml"},
        scratch.dir / "first.log");
    // Wait until one sample is stored and the next guest is running, then kill -9.
    auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(8);
    bool ready = false;
    while (!ready && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::seconds(1));
        ready = fs::exists(scratch.db) && one(scratch.db, "SELECT count(*) FROM samples") == "1" &&
                !processes_mentioning(scratch.dir.string() + "/runs").empty();
    }
    ASSERT_TRUE(ready) << rig::test::read_text(scratch.dir / "first.log");
    std::this_thread::sleep_for(std::chrono::seconds(3));
    EXPECT_TRUE(rig::test::kill_leaves_no_process(rig, scratch.dir.string() + "/runs"));
    std::string first_sample = one(scratch.db, "SELECT id, cell_id, repetition FROM samples");

    auto resumed = run_rig({"--db", scratch.db, "run", "--resume"}, k_run_timeout);
    EXPECT_EQ(resumed.exit_code, 0) << resumed.out << resumed.err;
    EXPECT_NE(resumed.out.find("resuming: 1 samples already done"), std::string::npos)
        << resumed.out;
    EXPECT_EQ(one(scratch.db, "SELECT count(*), count(DISTINCT cell_id || '/' || repetition) "
                              "FROM samples"),
              "3\t3");
    // The finished sample is the same row, not a redone one.
    EXPECT_EQ(one(scratch.db, "SELECT id, cell_id, repetition FROM samples ORDER BY id LIMIT 1"),
              first_sample);
    EXPECT_EQ(one(scratch.db, "SELECT status FROM runs"), "finished");
}

TEST(Run, TreeWorkloadRecordsItsMetric) {
    Scratch scratch("tree");
    auto result = run_rig({"--db", scratch.db, "run", "tests/data/run/tree.yaml"}, k_run_timeout);
    EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_EQ(one(scratch.db, "SELECT outcome FROM samples"), "ok");
    EXPECT_EQ(query(scratch.db, "SELECT name, unit, value > 0 FROM metrics WHERE name NOT LIKE "
                                "'guest.%' AND name NOT LIKE '9p.%'"),
              std::vector<std::string>{"loop_ns_per_op\tns\t1"});
}

TEST(Run, CtrlCAbortsTheSampleAndResumeRedoesOnlyIt) {
    Scratch scratch("interrupt");
    rig::proc::SpawnOptions options;
    options.cwd = rig::test::source_root();
    options.stdout_file = scratch.dir / "rig.log";
    auto rig = rig::proc::Child::spawn({std::getenv("RIG_BINARY"), "--db", scratch.db.string(),
                                        "run", "tests/data/run/resume.yaml"},
                                       options);
    ASSERT_TRUE(rig) << rig.error().message;
    // Interrupt while the first guest runs its workload.
    auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(8);
    while (std::chrono::steady_clock::now() < deadline &&
           rig::test::read_text(scratch.dir / "rig.log").find("running workload") ==
               std::string::npos)
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
    ::kill((*rig)->pid(), SIGINT);
    auto status = (*rig)->wait_for(std::chrono::minutes(1));
    ASSERT_TRUE(status) << "rig did not stop after Ctrl-C";
    EXPECT_EQ(*status, 130) << rig::test::read_text(scratch.dir / "rig.log");
    EXPECT_TRUE(processes_mentioning(scratch.dir.string() + "/runs").empty());
    EXPECT_EQ(one(scratch.db, "SELECT group_concat(outcome) FROM samples"), "aborted");
    EXPECT_EQ(one(scratch.db, "SELECT status FROM runs"), "interrupted");

    auto resumed = run_rig({"--db", scratch.db, "run", "--resume"}, k_run_timeout);
    EXPECT_EQ(resumed.exit_code, 0) << resumed.out << resumed.err;
    EXPECT_EQ(one(scratch.db, "SELECT count(*), sum(outcome = 'ok') FROM samples"), "3\t3");
}

TEST(Run, BootTimeoutAndConsoleSilenceAreOutcomes) {
    for (const auto& [file, outcome] : std::vector<std::pair<std::string, std::string>>{
             {"boot-timeout", "boot-timeout"}, {"silence", "console-silence"}}) {
        Scratch scratch(file);
        auto result =
            run_rig({"--db", scratch.db, "run", "tests/data/run/" + file + ".yaml"}, k_run_timeout);
        EXPECT_EQ(result.exit_code, 1) << result.out << result.err;
        EXPECT_EQ(one(scratch.db, "SELECT outcome FROM samples"), outcome);
        EXPECT_TRUE(processes_mentioning(scratch.dir.string()).empty());
    }
}

TEST(Run, ImageKernelWithModulesFolder) {
    // The Debian kernel that earlier tests fetched, taken as a plain `image:` with its
    // modules folder, as a kernel developer's own build would be.
    fs::path cache = std::getenv("RIG_CACHE");
    Scratch fetch("image-fetch");
    auto fetched = run_rig(
        {"--db", fetch.db, "kernel", "fetch", "tests/data/run/boot-timeout.yaml"}, k_run_timeout);
    ASSERT_EQ(fetched.exit_code, 0) << fetched.out << fetched.err;
    const std::string package = one(fetch.db, "SELECT package FROM kernel_artifacts");
    const std::string release = package.substr(std::string("linux-image-").size());
    fs::path index = cache / "kernels" / "debian" / package;
    ASSERT_TRUE(fs::exists(index));
    std::string id = rig::test::read_text(index);
    id.erase(id.find_last_not_of("\n") + 1);
    fs::path kernel_dir = cache / "kernels" / id;
    Scratch scratch("image");
    fs::path scenario = scratch.dir / "image.yaml";
    std::ofstream(scenario) << "name: run-image\nkernels:\n  - {name: mine, image: "
                            << (kernel_dir / "vmlinuz").string()
                            << ", modules: " << (kernel_dir / "lib/modules" / release).string()
                            << "}\nmatrix: {fs: [9p], cache: [loose]}\n"
                               "workload: {command: \"cat /proc/version\"}\n";
    auto result = run_rig({"--db", scratch.db, "run", scenario}, k_run_timeout);
    EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_EQ(one(scratch.db, "SELECT outcome FROM samples"), "ok");
    EXPECT_EQ(one(scratch.db, "SELECT source, \"release\" FROM kernel_artifacts"),
              "image\t" + release);
}

namespace {

// A scenario whose workload runs `probe` in cells of the filesystems `fs` (a YAML list).
fs::path write_security_scenario(const fs::path& dir, const std::string& fs,
                                 const std::string& probe) {
    fs::path yaml = dir / "security.yaml";
    std::ofstream(yaml) << "name: security\n"
                           "kernels:\n  - {name: deb-6.1, debian: linux-image-6.1}\n"
                           "matrix: {fs: "
                        << fs
                        << ", cache: [none]}\n"
                           "workload:\n  command: |\n    "
                        << probe
                        << "\n"
                           "timeouts: {boot: 3m, workload: 3m, silence: 2m}\n";
    return yaml;
}

} // namespace

// README "Security": the guest's root is the host's /usr and rig's copy of /etc, and QEMU
// runs as rig-qemu. A workload that goes looking for the host's secrets finds none, and
// leaves nothing on the host.
TEST(Run, TheGuestSeesNoHostSecretAndQemuIsNotRoot) {
    if (::geteuid() != 0)
        GTEST_SKIP() << "planting a token under /root needs root (CI runs as root)";
    Scratch scratch("security");
    std::string token = "rig-token-" + std::to_string(::getpid()) + "-" +
                        std::to_string(std::chrono::steady_clock::now().time_since_epoch().count());
    fs::path planted = fs::path("/root") / (".rig-test-" + std::to_string(::getpid()));
    std::ofstream(planted) << token << "\n";
    std::string shadow_root;
    {
        std::ifstream shadow("/etc/shadow");
        std::getline(shadow, shadow_root); // root's hash: its first line on Debian
    }
    // Each attempt prints what it got; the workload fails at the end, so that its whole
    // output is kept as the sample's evidence.
    std::string probe = "for f in /etc/shadow " + planted.string() + " " + scratch.db.string() +
                        "; do echo \"== $f\"; cat \"$f\" 2>&1 | head -c 300; done; "
                        "echo '== /root'; ls -la /root 2>&1 || true; echo '== /home'; "
                        "ls /home 2>&1 || true; echo '== touch'; touch /usr/x 2>&1 || true; "
                        "touch /rig-x 2>&1 || true; "
                        "sleep 6; exit 1";
    fs::path yaml = write_security_scenario(scratch.dir, "[9p, fuse]", probe);
    pid_t rig = rig::test::start_rig_logged({"--db", scratch.db.string(), "run", yaml.string()},
                                            scratch.dir / "run.log");
    // QEMU's user, seen from the host while each guest runs.
    std::set<std::string> qemu_uids;
    int status = 0;
    auto deadline = std::chrono::steady_clock::now() + k_run_timeout;
    while (::waitpid(rig, &status, WNOHANG) == 0 && std::chrono::steady_clock::now() < deadline) {
        for (int pid : processes_mentioning(scratch.dir.string() + "/runs")) {
            std::ifstream proc("/proc/" + std::to_string(pid) + "/status");
            std::ifstream cmdline("/proc/" + std::to_string(pid) + "/cmdline");
            std::string name;
            std::getline(cmdline, name, '\0');
            for (std::string line; std::getline(proc, line);)
                if (line.rfind("Uid:", 0) == 0 && name.find("qemu-system") != std::string::npos)
                    qemu_uids.insert(line);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    fs::remove(planted);
    ASSERT_TRUE(WIFEXITED(status)) << rig::test::read_text(scratch.dir / "run.log");
    EXPECT_EQ(WEXITSTATUS(status), 1) << rig::test::read_text(scratch.dir / "run.log");

    ASSERT_FALSE(qemu_uids.empty()) << "no QEMU seen while the guests ran";
    for (const std::string& uids : qemu_uids)
        EXPECT_EQ(uids.find("\t0\t"), std::string::npos) << "QEMU ran as root: " << uids;
    auto evidence = query(scratch.db, "SELECT outcome, evidence FROM samples ORDER BY cell_id");
    ASSERT_EQ(evidence.size(), 2u);
    std::string everything;
    for (const std::string& row : query(scratch.db, "SELECT evidence FROM samples UNION ALL "
                                                    "SELECT line FROM error_lines"))
        everything += row + "\n";
    for (const std::string& row : evidence) {
        EXPECT_EQ(row.rfind("workload-failed\t", 0), 0u) << row;
        // The attempts ran, and found nothing.
        EXPECT_NE(row.find("== /etc/shadow\ncat: /etc/shadow: No such file"), std::string::npos)
            << row;
        EXPECT_NE(row.find("ls: cannot access '/root'"), std::string::npos) << row;
        EXPECT_NE(row.find("ls: cannot access '/home'"), std::string::npos) << row;
        EXPECT_NE(row.find("'/usr/x': Read-only file system"), std::string::npos) << row;
        EXPECT_NE(row.find("'/rig-x': Read-only file system"), std::string::npos) << row;
    }
    EXPECT_EQ(everything.find(token), std::string::npos);
    EXPECT_EQ(everything.find("SQLite format"), std::string::npos);
    if (!shadow_root.empty()) {
        EXPECT_EQ(everything.find(shadow_root), std::string::npos);
    }
    EXPECT_FALSE(fs::exists("/usr/x"));
    EXPECT_FALSE(fs::exists("/rig-x"));
    EXPECT_TRUE(processes_mentioning(scratch.dir.string()).empty());
}

// README "Security": rig run by a normal user runs QEMU as that user; 9p and fuse cells
// run, and virtiofs cells (virtiofsd needs root) say why they cannot, without stopping
// the others. The user has a cache of its own: nothing of root's is needed.
TEST(Run, ANormalUserRunsNinePAndFuseCellsAndIsToldWhyNotVirtiofs) {
    if (::geteuid() != 0)
        GTEST_SKIP() << "creating the test's user needs root (CI runs as root)";
    const std::string user = "rig-test-user";
    auto exists = rig::proc::run({"id", "-u", user});
    if (!exists || exists->exit_code != 0) {
        auto added = rig::proc::run(
            {"useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", user});
        ASSERT_TRUE(added && added->exit_code == 0) << (added ? added->err : "");
    }
    Scratch scratch("normal-user");
    fs::path yaml = write_security_scenario(
        scratch.dir, "[9p, fuse, virtiofs]",
        "id -u; printf \"int main(void) { return 0; }\\n\" > a.c && gcc -o a a.c && ./a && "
        "echo compiled; exit 1");
    auto chown = rig::proc::run({"chown", "-R", user, scratch.dir.string()});
    ASSERT_TRUE(chown && chown->exit_code == 0);
    const char* binary = std::getenv("RIG_BINARY");
    ASSERT_NE(binary, nullptr);
    rig::proc::RunOptions options;
    options.cwd = scratch.dir;
    options.timeout = k_run_timeout;
    auto result = rig::proc::run({"runuser", "-u", user, "--", "env",
                                  "RIG_CACHE=" + (scratch.dir / "cache").string(), binary, "--db",
                                  scratch.db.string(), "run", yaml.string()},
                                 options);
    ASSERT_TRUE(result);
    EXPECT_EQ(result->exit_code, 1) << result->out << result->err;
    auto rows = query(scratch.db, "SELECT c.fs, s.outcome, s.evidence FROM samples s JOIN cells c "
                                  "USING (run_id, cell_id) ORDER BY c.fs");
    ASSERT_EQ(rows.size(), 3u) << result->out << result->err;
    for (size_t i : {0, 1}) {
        // The guest's root user compiled; exit 1 keeps the output as evidence.
        EXPECT_EQ(rows[i].rfind(i == 0 ? "9p\tworkload-failed\t" : "fuse\tworkload-failed\t", 0),
                  0u)
            << rows[i];
        EXPECT_NE(rows[i].find("compiled"), std::string::npos) << rows[i];
    }
    EXPECT_EQ(rows[2].rfind("virtiofs\tinfra-error\tfs: virtiofs cells need root", 0), 0u)
        << rows[2];
    EXPECT_TRUE(processes_mentioning(scratch.dir.string()).empty());
}

// README "Security": a workload that writes past its share's cap (guest.share_limit) is
// stopped and recorded as disk-quota, and the host's disk takes none of it: the share is
// a tmpfs of the cap's size. This one would write forever, so only the cap stops it.
TEST(Run, AWorkloadWritingPastItsShareCapIsDiskQuota) {
    if (::geteuid() != 0)
        GTEST_SKIP() << "the capped share is a tmpfs rig mounts as root (CI runs as root)";
    Scratch scratch("share-cap");
    fs::path yaml = scratch.dir / "cap.yaml";
    std::ofstream(yaml) << "name: share-cap\n"
                           "kernels:\n  - {name: deb-6.1, debian: linux-image-6.1}\n"
                           "matrix: {fs: [9p], cache: [none]}\n"
                           "workload:\n  command: |\n"
                           "    i=0; while :; do i=$((i + 1)); "
                           "head -c 1048576 /dev/zero > \"f$i\" || sleep 0.2; done\n"
                           "guest: {share_limit: 8M}\n"
                           "timeouts: {boot: 3m, workload: 3m, silence: 2m}\n";
    auto started = std::chrono::steady_clock::now();
    auto result = run_rig({"--db", scratch.db, "run", yaml.string()}, k_run_timeout);
    auto took = std::chrono::steady_clock::now() - started;
    EXPECT_EQ(result.exit_code, 1) << result.out << result.err;
    EXPECT_EQ(one(scratch.db, "SELECT outcome FROM samples"), "disk-quota");
    EXPECT_NE(one(scratch.db, "SELECT evidence FROM samples").find("capped at 8 MiB"),
              std::string::npos)
        << one(scratch.db, "SELECT evidence FROM samples");
    // Stopped by the cap, long before the workload's 3-minute timeout.
    EXPECT_LT(took, std::chrono::minutes(2));
    // The share's tmpfs is gone, with what the workload wrote.
    EXPECT_EQ(sample_file(scratch, "f1"), "");
    EXPECT_EQ(rig::test::read_text("/proc/self/mounts").find(scratch.dir.string()),
              std::string::npos);
    EXPECT_TRUE(processes_mentioning(scratch.dir.string()).empty());
}
