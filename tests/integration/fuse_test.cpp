// SPDX-License-Identifier: MIT
// `fs: fuse` cells on a real guest: rig-fuse serves a compile with different attribute
// timeouts, and its invalidation benchmark fills the FUSE invalidation table.
#include "rig_binary.hpp"
#include "scratch.hpp"

#include <chrono>

using rig::test::one;
using rig::test::processes_mentioning;
using rig::test::query;
using rig::test::run_rig;
using rig::test::Scratch;

TEST(Fuse, CompileWithAttrTimeoutZeroAndOne) {
    Scratch scratch("fuse-compile");
    auto result = run_rig({"--db", scratch.db, "run", "tests/data/fuse/compile.yaml"},
                          std::chrono::minutes(20));
    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    auto rows =
        query(scratch.db, "SELECT c.fs, s.outcome, s.guest_seconds > 0, s.wall_seconds > 0, "
                          "s.mount_requested FROM samples s JOIN cells c USING (run_id, cell_id) "
                          "ORDER BY s.mount_requested");
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_EQ(rows[0], "fuse\tok\t1\t1\trig-fuse --attr-timeout 0");
    EXPECT_EQ(rows[1], "fuse\tok\t1\t1\trig-fuse --attr-timeout 1");
    // The workload ran on rig-fuse's mount, not on the 9p share.
    for (const std::string& mount : query(scratch.db, "SELECT mount_negotiated FROM samples"))
        EXPECT_EQ(mount.rfind("fuse.rig-fuse ", 0), 0u) << mount;
    // rig-fuse counts the requests it serves, per phase too. attr_timeout 0 sends every
    // stat to it; 1 s lets the kernel answer repeated ones: an exact difference.
    auto count = [&](const std::string& timeout, const std::string& name) {
        std::string text = one(scratch.db, "SELECT m.value FROM metrics m JOIN samples s ON s.id = "
                                           "m.sample_id WHERE s.mount_requested = 'rig-fuse "
                                           "--attr-timeout " +
                                               timeout + "' AND m.name = '" + name + "'");
        return text.empty() ? -1.0 : std::stod(text);
    };
    for (const std::string timeout : {"0", "1"}) {
        EXPECT_GT(count(timeout, "fuse.requests"), 0) << timeout;
        EXPECT_GT(count(timeout, "build/fuse.lookup"), 0) << timeout;
        EXPECT_EQ(count(timeout, "fuse.requests"),
                  count(timeout, "build/fuse.requests") + count(timeout, "noop/fuse.requests"));
        // The 9p work share is only copied into the guest before the workload starts.
        EXPECT_EQ(count(timeout, "9p.work.requests"), 0) << timeout;
    }
    EXPECT_GT(count("0", "fuse.getattr"), count("1", "fuse.getattr"))
        << count("0", "fuse.getattr") << " against " << count("1", "fuse.getattr");
    // Where the requests went: rig-fuse's path classes. The compile's headers are one
    // class, "include/%.h", which every unit's compile stats and reads through the mount.
    EXPECT_GT(std::stod(one(scratch.db, "SELECT count(*) FROM metrics WHERE name LIKE "
                                        "'build/fuse.path.open:%include/\\%.h' ESCAPE '\\' "
                                        "AND value > 0")),
              0)
        << [&] {
               std::string text;
               for (const std::string& row : query(scratch.db, "SELECT name, value FROM metrics "
                                                               "WHERE name LIKE '%fuse.path.%'"))
                   text += row + "\n";
               return text;
           }();
    // At most five classes per opcode and window, none counting more than its opcode did.
    EXPECT_EQ(one(scratch.db,
                  "SELECT count(*) FROM (SELECT m.sample_id, substr(m.name, 1, instr(m.name, ':')) "
                  "AS op FROM metrics m WHERE m.name LIKE '%fuse.path.%' GROUP BY 1, 2 "
                  "HAVING count(*) > 5)"),
              "0");
    EXPECT_EQ(one(scratch.db,
                  "SELECT count(*) FROM (SELECT p.sample_id, replace(substr(p.name, 1, "
                  "instr(p.name, ':') - 1), 'fuse.path.', 'fuse.') AS op, sum(p.value) AS paths "
                  "FROM metrics p WHERE p.name LIKE '%fuse.path.%' GROUP BY 1, 2) t "
                  "JOIN metrics o ON o.sample_id = t.sample_id AND o.name = t.op "
                  "WHERE t.paths > o.value"),
              "0");
    EXPECT_EQ(one(scratch.db, "SELECT count(*) FROM metrics WHERE name LIKE 'build/fuse.path.%' "
                              "AND value > 0"),
              one(scratch.db, "SELECT count(*) FROM metrics WHERE name LIKE 'build/fuse.path.%'"));
    // Both cells carry their knob in the table.
    EXPECT_NE(result.out.find("attr_timeout"), std::string::npos) << result.out;
    EXPECT_TRUE(processes_mentioning(scratch.dir.string()).empty());
}

TEST(Fuse, InvalidationBenchmarkOnDebian61) {
    Scratch scratch("fuse-invalidation");
    auto result = run_rig({"--db", scratch.db, "run", "tests/data/fuse/invalidation.yaml"},
                          std::chrono::minutes(40));
    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_EQ(one(scratch.db, "SELECT outcome FROM samples"), "ok");
    auto metric = [&](const std::string& name) {
        return one(scratch.db, "SELECT value FROM metrics WHERE name = '" + name + "'");
    };
    // Real figures: a round over 8000 inodes costs more than one over 20.
    EXPECT_EQ(one(scratch.db, "SELECT (SELECT value FROM metrics WHERE name = "
                              "'inval_inode_us_20') > 0 AND (SELECT value FROM metrics WHERE "
                              "name = 'inval_inode_us_8000') > (SELECT value FROM metrics "
                              "WHERE name = 'inval_inode_us_20')"),
              "1");
    // Each round's cache walk looked every inode up again: the invalidation took effect.
    EXPECT_EQ(metric("inval_lookups_20"), "20.0");
    EXPECT_EQ(metric("inval_lookups_8000"), "8000.0");
    EXPECT_EQ(metric("inval_notify_errors_8000"), "0.0");
    // 6.1 speaks FUSE 7.38 (the epoch notify needs 7.44): no epoch figure may exist.
    EXPECT_EQ(metric("inval_epoch_supported"), "0.0");
    EXPECT_EQ(metric("fuse_proto_minor"), "38.0");
    EXPECT_EQ(one(scratch.db, "SELECT count(*) FROM metrics WHERE name LIKE 'inval_epoch_us%'"),
              "0");
    EXPECT_NE(result.out.find("NOTIFY_INVAL_*"), std::string::npos) << result.out;
    EXPECT_NE(result.out.find("8000 inodes"), std::string::npos) << result.out;
    EXPECT_NE(result.out.find("unsupported"), std::string::npos) << result.out;
    EXPECT_TRUE(processes_mentioning(scratch.dir.string()).empty());
}
