// SPDX-License-Identifier: MIT
// A workload's outputs held against the server's copy and known content (run/outputs), and
// the readback workload's files (workload/readback): the guest's awk writes what the host
// expects, run here by the same sh and awk the guest takes from the host's /usr.
#include "proc/process.hpp"
#include "run/outputs.hpp"
#include "run/reference.hpp"
#include "store/store.hpp"
#include "temp_dir.hpp"
#include "util/file.hpp"
#include "util/hash.hpp"
#include "workload/readback.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

namespace fs = std::filesystem;
using rig::run::check_outputs;
using rig::run::hash_folder;
using rig::run::Manifest;
using rig::run::parse_manifest;

namespace {

const std::string k_a(64, 'a');
const std::string k_b(64, 'b');
const std::string k_c(64, 'c');

Manifest manifest(std::map<std::string, std::string> files) {
    return {std::move(files), true};
}

std::vector<std::string> lines_of(const rig::run::OutputCheck& check) {
    std::vector<std::string> lines;
    for (const auto& line : check.wrong)
        lines.push_back(line.signature);
    return lines;
}

} // namespace

TEST(Outputs, ManifestReadsSha256sumsLinesAndNotesWhatItCannot) {
    Manifest m = parse_manifest(k_a + "  units/unit_0.o\n" + k_b + " *prog\n", false);
    EXPECT_TRUE(m.whole);
    EXPECT_EQ(m.files,
              (std::map<std::string, std::string>{{"units/unit_0.o", k_a}, {"prog", k_b}}));
    // An escaped name, junk and a cut last line: whatever parses is kept, and the set is
    // marked as not whole, so a file missing from it proves nothing.
    Manifest cut =
        parse_manifest("\\" + k_a + "  a\\nb\njunk\n" + k_c + "  x.o\n" + k_b + "  y", false);
    EXPECT_FALSE(cut.whole);
    EXPECT_EQ(cut.files.size(), 2u);
    EXPECT_FALSE(parse_manifest(k_a + "  x.o\n", true).whole);
}

TEST(Outputs, TheSameFilesOnBothSidesAreRight) {
    auto check = check_outputs(manifest({{"a.o", k_a}, {"b.o", k_b}}),
                               manifest({{"a.o", k_a}, {"b.o", k_b}}), {});
    EXPECT_EQ(check.files, 2u);
    EXPECT_TRUE(check.wrong.empty());
}

TEST(Outputs, AFileTheGuestSeesOtherwiseOrAloneIsWrong) {
    auto check = check_outputs(manifest({{"a.o", k_a}, {"b.o", k_b}, {"c.o", k_c}}),
                               manifest({{"a.o", k_a}, {"b.o", k_c}, {"d.o", k_c}}), {});
    EXPECT_EQ(check.files, 4u);
    EXPECT_EQ(lines_of(check), (std::vector<std::string>{
                                   "output b.o: the guest sees other content than the server keeps",
                                   "output c.o: the server does not have it",
                                   "output d.o: the guest does not see it"}));
    // The line itself names both hashes, shortened.
    EXPECT_EQ(check.wrong[0].line,
              "output b.o: the guest sees other content than the server keeps (bbbbbbbbbbbb, "
              "server cccccccccccc)");
    EXPECT_EQ(check.wrong[0].source, "outputs");
}

TEST(Outputs, AFileMissingFromASetThatIsNotWholeProvesNothing) {
    Manifest cut = manifest({{"a.o", k_a}});
    cut.whole = false;
    EXPECT_TRUE(check_outputs(cut, manifest({{"a.o", k_a}, {"b.o", k_b}}), {}).wrong.empty());
    EXPECT_TRUE(check_outputs(manifest({{"a.o", k_a}, {"b.o", k_b}}), cut, {}).wrong.empty());
}

TEST(Outputs, KnownContentIsHeldAgainstBothSides) {
    const std::map<std::string, std::string> expected{{"g", k_a}, {"h", k_b}};
    EXPECT_TRUE(check_outputs(manifest({{"g", k_a}, {"h", k_b}}),
                              manifest({{"g", k_a}, {"h", k_b}}), expected)
                    .wrong.empty());
    // The guest wrote g right but the server keeps other bytes; the guest reads h, which
    // the host wrote, otherwise.
    auto check = check_outputs(manifest({{"g", k_a}, {"h", k_c}}),
                               manifest({{"g", k_c}, {"h", k_b}}), expected);
    EXPECT_EQ(lines_of(check), (std::vector<std::string>{
                                   "output g: the server keeps other content than was written",
                                   "output h: the guest reads other content than was written"}));
    // Without the server's side (none known), known content still holds the guest's.
    EXPECT_EQ(lines_of(check_outputs(manifest({{"g", k_a}}), std::nullopt, expected)),
              (std::vector<std::string>{"output h: the guest does not see it"}));
}

TEST(Outputs, TheShareIsHashedByTheGlobsAsTheShellMatchesThemWithoutFollowingLinks) {
    rig::test::TempDir dir;
    const fs::path& d = dir.path();
    fs::create_directories(d / "units" / "deep");
    ASSERT_TRUE(rig::util::write_file_atomically(d / "prog", "program"));
    ASSERT_TRUE(rig::util::write_file_atomically(d / "main.o", "main"));
    ASSERT_TRUE(rig::util::write_file_atomically(d / ".hidden.o", "hidden"));
    ASSERT_TRUE(rig::util::write_file_atomically(d / "units" / "unit_0.o", "unit"));
    ASSERT_TRUE(rig::util::write_file_atomically(d / "units" / "deep" / "x.o", "deep"));
    ASSERT_TRUE(rig::util::write_file_atomically(d / "secret", "root's"));
    // What a guest may leave: links to what it should not read, and a fifo.
    fs::create_symlink(d / "secret", d / "link.o");
    fs::create_directory_symlink("/etc", d / "units" / "etc");
    ASSERT_EQ(::mkfifo((d / "units" / "fifo.o").c_str(), 0600), 0);
    auto hashed = hash_folder(d, {"prog", "*.o", "units/*.o", "units/etc/*"});
    ASSERT_TRUE(hashed) << hashed.error().message;
    EXPECT_TRUE(hashed->whole);
    EXPECT_EQ(hashed->files, (std::map<std::string, std::string>{
                                 {"main.o", rig::util::sha256_hex("main")},
                                 {"prog", rig::util::sha256_hex("program")},
                                 {"units/unit_0.o", rig::util::sha256_hex("unit")}}));
    EXPECT_FALSE(hash_folder(d / "gone", {"*"}));
}

TEST(Readback, EachFileIsLinesOfItsNameAndOffset) {
    std::string text = rig::workload::readback_content("g-0003", 100);
    // 37 bytes a line, rounded up to whole lines.
    EXPECT_EQ(text.size(), 111u);
    EXPECT_EQ(text.substr(0, 74), "rig readback g-0003 0000000000000000\n"
                                  "rig readback g-0003 0000000000000037\n");
    rig::core::ReadbackParams params;
    params.files = 2;
    params.bytes = 100;
    auto expected = rig::workload::readback_expected(params);
    EXPECT_EQ(expected.size(), 4u);
    EXPECT_EQ(expected.at("readback/g-0001"),
              rig::util::sha256_hex(rig::workload::readback_content("g-0001", 100)));
    EXPECT_TRUE(expected.count("readback/h-0000"));
}

// The guest's script, run by this host's sh and awk (a guest's /usr is the host's), writes
// exactly what the host expects, and the host's own files are the rest of the set.
TEST(Readback, TheGuestsScriptWritesWhatTheHostExpects) {
    rig::test::TempDir dir;
    rig::core::ReadbackParams params;
    params.files = 3;
    params.bytes = 70000;
    ASSERT_TRUE(rig::workload::write_readback_files(dir.path(), params));
    rig::proc::RunOptions options;
    options.cwd = dir.path();
    auto ran = rig::proc::run({"/bin/sh", "-c", rig::workload::readback_command(params)}, options);
    ASSERT_TRUE(ran) << ran.error().message;
    ASSERT_EQ(ran->exit_code, 0) << ran->err;
    auto hashed = hash_folder(dir.path(), {"readback/*"});
    ASSERT_TRUE(hashed) << hashed.error().message;
    EXPECT_EQ(hashed->files, rig::workload::readback_expected(params));
}

// A sample's outputs against a reference sample's: the same files, other content, and one
// side only; the reference's name in the line, not in the signature.
TEST(Outputs, AgainstAReferenceEachDifferingFileIsWrong) {
    Manifest mine = manifest({{"prog", k_a}, {"a.o", k_b}, {"new.o", k_c}});
    Manifest reference = manifest({{"prog", k_a}, {"a.o", k_c}, {"gone.o", k_c}});
    auto check = rig::run::check_against(mine, reference, "sample 1 of this cell");
    EXPECT_EQ(check.files, 4u);
    EXPECT_EQ(lines_of(check),
              (std::vector<std::string>{"output a.o: other content than the reference has",
                                        "output gone.o: missing, though the reference has it",
                                        "output new.o: not in the reference"}));
    EXPECT_EQ(check.wrong[0].line,
              "output a.o: other content than the reference has (bbbbbbbbbbbb, "
              "the reference cccccccccccc: sample 1 of this cell)");
    EXPECT_TRUE(rig::run::check_against(mine, mine, "x").wrong.empty());
}

namespace {

rig::core::Cell cell_with(const std::string& id, const std::string& cache) {
    rig::core::Cell cell;
    cell.id = id;
    cell.kernel_name = "deb";
    cell.config = "debian";
    cell.params = {{"fs", "9p"}, {"cache", cache}, {"msize", "512000"}};
    cell.canonical = id;
    return cell;
}

std::string sums(const std::string& hash) {
    return hash + "  prog\n" + k_a + "  a.o\n";
}

// A run of `cells` in a real SQLite file, for samples to be held against each other.
struct RunOf {
    rig::test::TempDir dir;
    std::unique_ptr<rig::store::Database> db;
    int64_t run_id = 0;

    explicit RunOf(const std::vector<rig::core::Cell>& cells) {
        db = std::move(rig::store::Database::open(dir.path() / "rig.db").value());
        rig::store::RunInfo run;
        run.scenario_name = "t";
        run.started_at = "2026-12-07T10:00:00Z";
        run_id = db->begin_run(run).value();
        EXPECT_TRUE(db->add_cells(run_id, cells));
    }
};

} // namespace

// Before a sample is stored, its outputs are held against its cell's cache=none twin, else
// against its own cell's earliest sample; a difference makes it wrong-output, with lines.
TEST(Outputs, ASampleIsHeldAgainstItsTwinOrItsCellsFirstSample) {
    std::vector<rig::core::Cell> cells{cell_with("none00000000", "none"),
                                       cell_with("loose0000000", "loose"),
                                       cell_with("mmap00000000", "mmap")};
    cells[2].params["msize"] = "8192"; // no twin: its own first sample is the reference
    RunOf stored(cells);
    auto& db = stored.db;
    const int64_t run_id = stored.run_id;
    auto sample = [](const std::string& cell, int repetition, const std::string& hash) {
        rig::core::Sample s;
        s.cell_id = cell;
        s.repetition = repetition;
        s.outcome = rig::core::Outcome::ok;
        s.outputs = sums(hash);
        return s;
    };
    auto held = [&](rig::core::Sample s) {
        EXPECT_TRUE(rig::run::hold_against_reference(*db, run_id, cells, s));
        EXPECT_TRUE(db->add_sample(run_id, s));
        return s;
    };
    // The first sample of all has nothing to be held against.
    EXPECT_EQ(held(sample("none00000000", 0, k_b)).outcome, rig::core::Outcome::ok);
    EXPECT_EQ(held(sample("loose0000000", 0, k_b)).outcome, rig::core::Outcome::ok);
    rig::core::Sample off = held(sample("loose0000000", 1, k_c));
    EXPECT_EQ(off.outcome, rig::core::Outcome::wrong_output);
    EXPECT_EQ(off.error_count, 1);
    ASSERT_EQ(off.lines.size(), 1u);
    EXPECT_NE(off.lines[0].line.find("sample 1 of the cache=none twin"), std::string::npos)
        << off.lines[0].line;
    EXPECT_NE(off.evidence.find("outputs that differ from"), std::string::npos);
    // A wrong-output sample is never a reference; the twin's own next sample is held
    // against its first.
    EXPECT_EQ(held(sample("none00000000", 1, k_c)).outcome, rig::core::Outcome::wrong_output);
    EXPECT_EQ(held(sample("mmap00000000", 0, k_c)).outcome, rig::core::Outcome::ok);
    rig::core::Sample second = held(sample("mmap00000000", 1, k_b));
    EXPECT_EQ(second.outcome, rig::core::Outcome::wrong_output);
    EXPECT_NE(second.lines[0].line.find("sample 1 of this cell"), std::string::npos);
    // Nothing hashed, or a failed workload: nothing to hold.
    rig::core::Sample failed = sample("mmap00000000", 2, k_b);
    failed.outcome = rig::core::Outcome::workload_failed;
    EXPECT_EQ(held(failed).outcome, rig::core::Outcome::workload_failed);
    rig::core::Sample unhashed = sample("mmap00000000", 3, k_b);
    unhashed.outputs.clear();
    EXPECT_EQ(held(unhashed).outcome, rig::core::Outcome::ok);
}

// A sample that checks after phases keeps each check's manifest under its heading, and is
// held against the reference check by check: a file wrong only after "build" says so.
TEST(Outputs, EachChecksManifestIsKeptAndHeldAgainstTheReferencesOwn) {
    const std::map<std::string, std::string> by_check{{"", sums(k_b)}, {"build", sums(k_c)}};
    const std::string joined = rig::run::join_manifests(by_check);
    EXPECT_EQ(joined, sums(k_b) + "# after build\n" + sums(k_c));
    EXPECT_EQ(rig::run::split_manifests(joined), by_check);
    EXPECT_EQ(rig::run::join_manifests({{"", sums(k_b)}}), sums(k_b));
    EXPECT_EQ(rig::run::split_manifests(sums(k_b)).size(), 1u);

    std::vector<rig::core::Cell> cells{cell_with("none00000000", "none")};
    RunOf stored(cells);
    auto& db = stored.db;
    const int64_t run_id = stored.run_id;
    rig::core::Sample first;
    first.cell_id = cells[0].id;
    first.outcome = rig::core::Outcome::ok;
    first.outputs = joined;
    ASSERT_TRUE(rig::run::hold_against_reference(*db, run_id, cells, first));
    ASSERT_TRUE(db->add_sample(run_id, first));
    rig::core::Sample second = first;
    second.repetition = 1;
    second.outputs = rig::run::join_manifests({{"", sums(k_b)}, {"build", sums(k_a)}});
    ASSERT_TRUE(rig::run::hold_against_reference(*db, run_id, cells, second));
    EXPECT_EQ(second.outcome, rig::core::Outcome::wrong_output);
    ASSERT_EQ(second.lines.size(), 1u);
    EXPECT_EQ(second.lines[0].signature,
              "after build: output prog: other content than the reference has");
}
