// SPDX-License-Identifier: MIT
// Tests of core/classify (every branch, in precedence order), core/stats (against R) and
// core/sample's metric lookup; core/results_folder's one rule for a database's folders.
#include "core/cell.hpp"
#include "core/classify.hpp"
#include "core/path_class.hpp"
#include "core/results_folder.hpp"
#include "core/sample.hpp"
#include "core/scenario.hpp"
#include "core/stats.hpp"
#include "core/status.hpp"

#include <algorithm>
#include <gtest/gtest.h>

using namespace rig::core;

namespace {

// A run that went well: the agent said hello and the workload ended with status 0.
SampleFacts clean() {
    SampleFacts facts;
    facts.vm_exit = 0;
    facts.hello = true;
    facts.ended = true;
    return facts;
}

// Everything that can go wrong at once, so each precedence test can show what wins.
SampleFacts everything_wrong() {
    SampleFacts facts;
    facts.interrupted = true;
    facts.start_failed = true;
    facts.helper_failed = true;
    facts.boot_timed_out = true;
    facts.workload_timed_out = true;
    facts.silent = true;
    facts.vm_exit = 1;
    facts.hello = true;
    facts.setup_failed = true;
    facts.ended = false;
    facts.workload_exit = 2;
    facts.panic_on_console = true;
    facts.error_lines = 5;
    return facts;
}

} // namespace

TEST(Classify, Ok) {
    EXPECT_EQ(classify(clean()), Outcome::ok);
}

TEST(Classify, InterruptedWinsOverAll) {
    EXPECT_EQ(classify(everything_wrong()), Outcome::aborted);
}

TEST(Classify, StartOrHelperFailureIsInfra) {
    SampleFacts facts = everything_wrong();
    facts.interrupted = false;
    EXPECT_EQ(classify(facts), Outcome::infra_error);
    facts.start_failed = false;
    EXPECT_EQ(classify(facts), Outcome::infra_error); // helper_failed alone
    facts = clean();
    facts.helper_failed = true;
    EXPECT_EQ(classify(facts), Outcome::infra_error);
}

// A compile that failed because the host's disk was full is the machinery's failure, even
// with the workload's error lines and exit status.
TEST(Classify, OutOfSpaceIsInfraWhateverTheGuestDid) {
    SampleFacts facts = everything_wrong();
    facts.interrupted = false;
    facts.start_failed = false;
    facts.helper_failed = false;
    facts.out_of_space = true;
    EXPECT_EQ(classify(facts), Outcome::infra_error);
    facts.interrupted = true;
    EXPECT_EQ(classify(facts), Outcome::aborted);
    facts = clean();
    facts.out_of_space = true;
    facts.workload_exit = 2;
    facts.error_lines = 3;
    EXPECT_EQ(classify(facts), Outcome::infra_error);
}

TEST(Classify, PanicWinsOverTimeouts) {
    SampleFacts facts = everything_wrong();
    facts.interrupted = facts.start_failed = facts.helper_failed = false;
    EXPECT_EQ(classify(facts), Outcome::kernel_panic);
    facts = clean();
    facts.panic_on_console = true;
    EXPECT_EQ(classify(facts), Outcome::kernel_panic);
}

TEST(Classify, Timeouts) {
    SampleFacts facts = everything_wrong();
    facts.interrupted = facts.start_failed = facts.helper_failed = facts.panic_on_console = false;
    EXPECT_EQ(classify(facts), Outcome::boot_timeout);
    facts.boot_timed_out = false;
    EXPECT_EQ(classify(facts), Outcome::workload_timeout);
    facts.workload_timed_out = false;
    EXPECT_EQ(classify(facts), Outcome::console_silence);
}

TEST(Classify, VmExitStatus) {
    SampleFacts facts = clean();
    facts.vm_exit = 1; // pvpanic after the agent ran
    facts.ended = false;
    EXPECT_EQ(classify(facts), Outcome::kernel_panic);
    facts.hello = false; // QEMU refused its arguments
    EXPECT_EQ(classify(facts), Outcome::infra_error);
    facts.hello = true;
    facts.vm_exit = 137; // killed by a signal
    EXPECT_EQ(classify(facts), Outcome::infra_error);
    facts.vm_exit = 2;
    EXPECT_EQ(classify(facts), Outcome::infra_error);
    // A non-zero exit wins over what the agent said.
    facts = clean();
    facts.vm_exit = 1;
    facts.setup_failed = true;
    EXPECT_EQ(classify(facts), Outcome::kernel_panic);
}

TEST(Classify, SetupFailure) {
    SampleFacts facts = clean();
    facts.setup_failed = true;
    facts.ended = false;
    EXPECT_EQ(classify(facts), Outcome::workload_failed);
    facts.vm_exit.reset(); // rig stopped the VM
    EXPECT_EQ(classify(facts), Outcome::workload_failed);
}

TEST(Classify, NoEnd) {
    SampleFacts facts = clean();
    facts.ended = false;
    EXPECT_EQ(classify(facts), Outcome::workload_failed);
    facts.hello = false; // exit 0 without the agent: never taken as success
    EXPECT_EQ(classify(facts), Outcome::infra_error);
}

TEST(Classify, WorkloadStatusAndErrorLines) {
    SampleFacts facts = clean();
    facts.workload_exit = 2;
    facts.error_lines = 3;
    EXPECT_EQ(classify(facts), Outcome::workload_failed);
    facts.workload_exit = 0;
    EXPECT_EQ(classify(facts), Outcome::errors);
    facts.vm_exit.reset();
    facts.error_lines = 0;
    EXPECT_EQ(classify(facts), Outcome::ok);
}

// Expected values from R 4.x: quantile(x, p) (type 7 is R's default), mean(x), sd(x).
TEST(Stats, QuartilesMatchR) {
    Summary s = summarize({4, 1, 3, 2});
    EXPECT_EQ(s.n, 4u);
    EXPECT_DOUBLE_EQ(s.q1, 1.75);
    EXPECT_DOUBLE_EQ(s.median, 2.5);
    EXPECT_DOUBLE_EQ(s.q3, 3.25);
    EXPECT_DOUBLE_EQ(s.mean, 2.5);
    EXPECT_NEAR(s.stddev, 1.290994, 1e-6);
    EXPECT_DOUBLE_EQ(s.min, 1);
    EXPECT_DOUBLE_EQ(s.max, 4);
}

TEST(Stats, TiesMatchR) {
    Summary s = summarize({9, 2, 4, 7, 4, 5, 4, 5});
    EXPECT_EQ(s.n, 8u);
    EXPECT_DOUBLE_EQ(s.q1, 4);
    EXPECT_DOUBLE_EQ(s.median, 4.5);
    EXPECT_DOUBLE_EQ(s.q3, 5.5);
    EXPECT_DOUBLE_EQ(s.mean, 5);
    EXPECT_NEAR(s.stddev, 2.13809, 1e-5);
    EXPECT_DOUBLE_EQ(s.min, 2);
    EXPECT_DOUBLE_EQ(s.max, 9);
}

TEST(Stats, QuantileMatchesR) {
    std::vector<double> sorted{10, 20, 30, 40, 50};
    EXPECT_DOUBLE_EQ(quantile(sorted, 0), 10);
    EXPECT_DOUBLE_EQ(quantile(sorted, 0.1), 14);
    EXPECT_DOUBLE_EQ(quantile(sorted, 0.9), 46);
    EXPECT_DOUBLE_EQ(quantile(sorted, 1), 50);
    EXPECT_DOUBLE_EQ(quantile({}, 0.5), 0);
    EXPECT_DOUBLE_EQ(quantile({3}, 0.75), 3);
}

TEST(Stats, ADistributionSummarizesAsItsValuesToTheLastBit) {
    // Values whose sum depends on the order of its terms, many of them repeated, added
    // in no order: a product of value and count would round differently.
    std::vector<double> values;
    Distribution distribution;
    for (int i = 0; i < 500; ++i) {
        const double value = 0.1 * ((i * 7919) % 13) + 1e-9 * (i % 3);
        values.push_back(value);
        distribution.add(value);
    }
    EXPECT_EQ(distribution.size(), values.size());
    EXPECT_EQ(distribution.entries().size(), 39u);
    EXPECT_TRUE(std::is_sorted(distribution.entries().begin(), distribution.entries().end(),
                               [](const auto& a, const auto& b) { return a.value < b.value; }));
    const Summary of_values = summarize(values), of_counts = summarize(distribution);
    EXPECT_EQ(of_values.n, of_counts.n);
    EXPECT_EQ(of_values.median, of_counts.median);
    EXPECT_EQ(of_values.q1, of_counts.q1);
    EXPECT_EQ(of_values.q3, of_counts.q3);
    EXPECT_EQ(of_values.mean, of_counts.mean);
    EXPECT_EQ(of_values.stddev, of_counts.stddev);
    EXPECT_EQ(of_values.min, of_counts.min);
    EXPECT_EQ(of_values.max, of_counts.max);
    // Counts add up, in any order of arrival.
    Distribution counted;
    counted.add(3, 2);
    counted.add(1);
    counted.add(3);
    counted.add(2, 0);
    EXPECT_EQ(counted, Distribution({1.0, 3.0, 3.0, 3.0}));
    EXPECT_EQ(counted.at(0), 1);
    EXPECT_EQ(counted.at(3), 3);
    EXPECT_TRUE(Distribution({4.0, 4.0}).without_spread());
    EXPECT_FALSE(Distribution({4.0}).without_spread()) << "one value says nothing of spread";
    EXPECT_FALSE(counted.without_spread());
}

TEST(Stats, EmptyAndSingle) {
    Summary none = summarize(std::vector<double>{});
    EXPECT_EQ(none.n, 0u);
    EXPECT_EQ(none.median, 0);
    EXPECT_EQ(none.q1, 0);
    EXPECT_EQ(none.q3, 0);
    EXPECT_EQ(none.stddev, 0);

    Summary one = summarize({7.25});
    EXPECT_EQ(one.n, 1u);
    EXPECT_DOUBLE_EQ(one.median, 7.25);
    EXPECT_DOUBLE_EQ(one.q1, 7.25);
    EXPECT_DOUBLE_EQ(one.q3, 7.25);
    EXPECT_DOUBLE_EQ(one.mean, 7.25);
    EXPECT_DOUBLE_EQ(one.min, 7.25);
    EXPECT_DOUBLE_EQ(one.max, 7.25);
    EXPECT_EQ(one.stddev, 0); // R gives NA; rig reports no spread
}

TEST(SampleMetrics, ALackingMetricIsUnknownNotZero) {
    Sample sample;
    sample.metrics = {{"9p.work.getattr", 0, ""}, {"noop/9p.work.getattr", 12, ""}};
    EXPECT_EQ(metric_value(sample, "9p.work.getattr"), 0.0);
    EXPECT_EQ(metric_value(sample, "noop/9p.work.getattr"), 12.0);
    EXPECT_FALSE(metric_value(sample, "9p.work.walk"));
    EXPECT_FALSE(metric_value(Sample{}, "9p.work.getattr"));
}

TEST(StatusWords, RoundTripAndUnknownTextIsAnError) {
    for (auto status : {RunStatus::running, RunStatus::finished, RunStatus::interrupted})
        EXPECT_EQ(*parse_run_status(to_string(status)), status);
    for (auto role : {StepRole::bad_endpoint, StepRole::good_endpoint, StepRole::bisect,
                      StepRole::verify_culprit, StepRole::verify_parent, StepRole::verify_revert})
        EXPECT_EQ(*parse_step_role(to_string(role)), role);
    EXPECT_EQ(to_string(BisectStatus::not_reproducible), "not-reproducible");
    EXPECT_EQ(*parse_bisect_status("not-reproducible"), BisectStatus::not_reproducible);
    EXPECT_EQ(to_string(BuildOutcome::build_failed), "build-failed");
    EXPECT_EQ(*parse_host_status("dropped"), HostStatus::dropped);
    EXPECT_EQ(*parse_verdict("unsure"), Verdict::unsure);
    for (auto backend : {Backend::qemu, Backend::libvirt, Backend::slurm})
        EXPECT_EQ(*parse_backend(to_string(backend)), backend);
    EXPECT_FALSE(parse_backend("kvm"));
    EXPECT_EQ(backend_words(), (std::vector<std::string>{"qemu", "libvirt", "slurm"}));
    auto unknown = parse_bisect_status("");
    ASSERT_FALSE(unknown);
    EXPECT_EQ(unknown.error().message,
              "'' is not a bisect status (running, culprit, unverified, inconclusive, "
              "not-reproducible, stopped, capped, interrupted)");
    EXPECT_FALSE(parse_verdict("Good"));
}

TEST(Accelerators, ReadBothWaysAsTheStoredWords) {
    for (auto accelerator : {Accelerator::kvm, Accelerator::tcg})
        EXPECT_EQ(*parse_accelerator(to_string(accelerator)), accelerator);
    // The samples table holds these words: changing them would misread stored runs.
    EXPECT_EQ(to_string(Accelerator::kvm), "kvm");
    EXPECT_EQ(to_string(Accelerator::tcg), "tcg");
    EXPECT_FALSE(parse_accelerator("auto")) << "auto is a request, never what a guest ran on";
    EXPECT_FALSE(parse_accelerator("KVM"));
    EXPECT_EQ(parse_accelerator("").error().message, "'' is not an accelerator (kvm, tcg)");

    for (auto accel : {Accel::auto_detect, Accel::kvm, Accel::tcg})
        EXPECT_EQ(*parse_accel(to_string(accel)), accel);
    EXPECT_EQ(accel_words(), (std::vector<std::string>{"auto", "kvm", "tcg"}));
    EXPECT_FALSE(parse_accel("auto_detect"));
}

TEST(CellFilter, IdPrefixOrKeyValuePairsTheSameForEverySubcommand) {
    Cell cell;
    cell.id = "9b72f4aa0011";
    cell.kernel_name = "deb-6.12";
    cell.config = "debian";
    cell.params = {{"cache", "loose"}, {"fs", "9p"}};
    EXPECT_TRUE(*cell_matches(cell, "9b72"));
    EXPECT_FALSE(*cell_matches(cell, "9b73"));
    EXPECT_FALSE(*cell_matches(cell, ""));
    EXPECT_TRUE(*cell_matches(cell, "cache=loose"));
    EXPECT_TRUE(*cell_matches(cell, "kernel=deb-6.12, fs=9p"));
    EXPECT_FALSE(*cell_matches(cell, "cache=loose,fs=virtiofs"));
    EXPECT_TRUE(*cell_matches(cell, "cell=9b72f4aa0011"));
    auto malformed = cell_matches(cell, "cache=loose,fs");
    ASSERT_FALSE(malformed);
    EXPECT_EQ(malformed.error().kind, rig::ErrorKind::usage);
}

// The default database keeps the layout it always had; any other gets folders named after
// its whole file name, so no two databases of one folder share one.
TEST(ResultsFolder, OneFolderPerDatabase) {
    EXPECT_EQ(results_folder("/r", "/r/rig.db", Kept::runs), "/r/runs");
    EXPECT_EQ(results_folder("/r", "rig.db", Kept::bisects), "/r/bisects");
    EXPECT_EQ(results_folder("/r", "", Kept::runs), "/r/runs");
    EXPECT_EQ(results_folder("/r", "/r/fast.db", Kept::runs), "/r/fast.db.runs");
    EXPECT_EQ(results_folder("/r", "/r/fast.db", Kept::bisects), "/r/fast.db.bisects");
    EXPECT_EQ(results_folder("/r", "/r/fast.sqlite", Kept::runs), "/r/fast.sqlite.runs");
    // Under backend slurm the root is the shared folder; the database still names it.
    EXPECT_EQ(results_folder("/shared", "/home/u/slow.db", Kept::runs), "/shared/slow.db.runs");
}

// A workload that filled its capped share (guest.share_limit) is disk-quota, whatever it
// did after its writes failed; a panic or the host's own full disk still say more.
TEST(Classify, AFullShareIsDiskQuotaOverWhatTheWorkloadDidAfter) {
    SampleFacts facts = clean();
    facts.share_full = true;
    facts.workload_exit = 1;
    facts.error_lines = 3;
    EXPECT_EQ(classify(facts), Outcome::disk_quota);
    facts.ended = false;
    facts.workload_timed_out = true;
    EXPECT_EQ(classify(facts), Outcome::disk_quota);
    facts.panic_on_console = true;
    EXPECT_EQ(classify(facts), Outcome::kernel_panic);
    facts.out_of_space = true;
    EXPECT_EQ(classify(facts), Outcome::infra_error);
    EXPECT_EQ(to_string(Outcome::disk_quota), "disk-quota");
    EXPECT_EQ(parse_outcome("disk-quota"), Outcome::disk_quota);
}

// Wrong output is worse than error lines (they may be its consequence), and a failed
// workload says more than its outputs do.
TEST(Classify, WrongOutputsOverErrorLinesButNotOverAFailedWorkload) {
    SampleFacts facts = clean();
    facts.wrong_outputs = 2;
    EXPECT_EQ(classify(facts), Outcome::wrong_output);
    facts.error_lines = 3;
    EXPECT_EQ(classify(facts), Outcome::wrong_output);
    facts.workload_exit = 2;
    EXPECT_EQ(classify(facts), Outcome::workload_failed);
    EXPECT_EQ(to_string(Outcome::wrong_output), "wrong-output");
    EXPECT_EQ(parse_outcome("wrong-output"), Outcome::wrong_output);
    EXPECT_TRUE(measured(Outcome::wrong_output)) << "the workload ran to its end";
}

TEST(Workload, OutputGlobsAreRelativeBeneathTheShareAndEachKindHasItsOwn) {
    for (const char* good : {"prog", "*.o", "units/*.o", "build/**/x?.o", ".config", "a-b_c.d"})
        EXPECT_TRUE(is_output_glob(good)) << good;
    for (const char* bad : {"", "/etc/passwd", "../x", "a/../b", "a//b", "./x", "a/", ".*", "x/.?",
                            "a b", "$(x)", "a;b", "a..b"})
        EXPECT_FALSE(is_output_glob(bad)) << bad;
    Workload workload;
    EXPECT_EQ(output_globs(workload), (std::vector<std::string>{"prog", "*.o", "units/*.o"}));
    workload.kind = WorkloadKind::command;
    EXPECT_TRUE(output_globs(workload).empty());
    workload.kind = WorkloadKind::readback;
    EXPECT_EQ(output_globs(workload), (std::vector<std::string>{"readback/*"}));
    workload.outputs = {"out/*"};
    EXPECT_EQ(output_globs(workload), (std::vector<std::string>{"out/*"}));
}

// What the progress line and the run's table say of a sample that is not ok.
TEST(SampleWhy, AnInfraErrorGivesItsReasonAFailedWorkloadItsLastLine) {
    Sample sample;
    sample.outcome = Outcome::infra_error;
    sample.evidence = "qemu could not open the results folder\nconsole (tail):\nboot\n";
    EXPECT_EQ(why_not_ok(sample), "qemu could not open the results folder");
    EXPECT_EQ(outcome_text(sample), "infra-error (qemu could not open the results folder)");

    sample.outcome = Outcome::workload_failed;
    sample.evidence =
        "workload output (tail):\ncc -c main.c\nmake: *** [Makefile:3: all] Error 1\n\n";
    EXPECT_EQ(why_not_ok(sample), "last output: make: *** [Makefile:3: all] Error 1");
    // Error lines say why themselves (rig report --errors).
    sample.error_count = 1;
    EXPECT_EQ(why_not_ok(sample), "");
    sample.error_count = 0;
    // Nothing printed after the heading: nothing to say.
    sample.evidence = "workload output (tail):\n";
    EXPECT_EQ(why_not_ok(sample), "");
    // What the guest printed is shown safely, and cut.
    sample.evidence = "workload output (tail):\n\x1b[31mboom\x07" + std::string(300, 'x') + "\n";
    const std::string shown = why_not_ok(sample);
    EXPECT_EQ(shown.rfind("last output: ?[31mboom?xxx", 0), 0u) << shown;
    EXPECT_EQ(shown.size(), std::string("last output: ").size() + 160 + 3) << shown;

    sample.outcome = Outcome::ok;
    EXPECT_EQ(why_not_ok(sample), "");
    EXPECT_EQ(outcome_text(sample), "ok");
}

TEST(PathClass, FilesGoByFolderAndExtensionFoldersByThemselves) {
    EXPECT_EQ(path_class("/", "include", true), "include/");
    EXPECT_EQ(path_class("include/", "common_0.h", false), "include/%.h");
    EXPECT_EQ(path_class("/", "main.c", false), "%.c");
    EXPECT_EQ(path_class("/", "Makefile", false), "%");
    // A leading dot is a hidden name, not an extension; nor is a long tail.
    EXPECT_EQ(path_class("units/", ".depend", false), "units/%");
    EXPECT_EQ(path_class("/", "notes.markdown-text", false), "%");
    EXPECT_EQ(path_class("a/", "b", true), "a/b/");
}

TEST(PathClass, HostileNamesStayTokensOfBoundedLength) {
    // Spaces, newlines, '%' and '/' could forge a class or a record field: they become '_'.
    EXPECT_EQ(path_class("/", "x y\n%/z", true), "x_y___z/");
    EXPECT_EQ(path_class("/", "a%b.h", false), "%.h");
    std::string deep;
    for (int i = 0; i < 40; ++i)
        deep = path_class(deep.empty() ? "/" : deep, "folder" + std::to_string(i), true);
    EXPECT_EQ(deep.size(), k_max_path_class);
    EXPECT_EQ(deep.rfind("...", 0), 0u);
    EXPECT_EQ(deep.substr(deep.size() - 9), "folder39/");
}

TEST(PhaseName, AWordOfAtMost32LettersDigitsUnderscoresAndDashes) {
    EXPECT_TRUE(is_phase_name("noop"));
    EXPECT_TRUE(is_phase_name("Build_2-a"));
    EXPECT_TRUE(is_phase_name(std::string(k_max_phase_name, 'x')));
    EXPECT_FALSE(is_phase_name(std::string(k_max_phase_name + 1, 'x')));
    EXPECT_FALSE(is_phase_name(""));
    // A metric name's part before a path class's '/' is no phase.
    EXPECT_FALSE(is_phase_name("fuse.path.open:include"));
    EXPECT_FALSE(is_phase_name("a b"));
}

TEST(Cell, ATwinDiffersInTheOneAxisAlone) {
    auto cell = [](std::string id, std::string cache, std::string msize) {
        rig::core::Cell c;
        c.id = std::move(id);
        c.kernel = 1;
        c.config = "debian";
        c.params = {{"fs", "9p"}, {"cache", std::move(cache)}, {"msize", std::move(msize)}};
        return c;
    };
    std::vector<rig::core::Cell> cells{cell("a", "none", "8192"), cell("b", "loose", "8192"),
                                       cell("c", "none", "512000"), cell("d", "loose", "4096")};
    cells.push_back(cell("e", "none", "4096"));
    cells.back().kernel = 0;
    const rig::core::Cell* twin = rig::core::twin_of(cells[1], cells, "cache", "none");
    ASSERT_NE(twin, nullptr);
    EXPECT_EQ(twin->id, "a");
    EXPECT_EQ(rig::core::twin_of(cells[0], cells, "cache", "none"), nullptr) << "its own value";
    EXPECT_EQ(rig::core::twin_of(cells[3], cells, "cache", "none"), nullptr) << "another kernel";
}
