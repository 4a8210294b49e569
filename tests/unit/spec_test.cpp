// SPDX-License-Identifier: MIT
// Unit tests of rig::spec on valid scenarios: values, defaults, canonical forms and cells.
#include "core/matrix.hpp"
#include "core/profile.hpp"
#include "spec/spec.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <set>
#include <sstream>

namespace rig::spec {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

fs::path data_dir() {
    const char* dir = std::getenv("RIG_TEST_DATA");
    return dir ? fs::path(dir) : fs::path("tests/data");
}

core::Scenario load_good(const std::string& name) {
    auto scenario = load_scenario(data_dir() / "good" / name);
    EXPECT_TRUE(scenario) << (scenario ? "" : scenario.error().message);
    return scenario ? *scenario : core::Scenario{};
}

core::Scenario parse_ok(const std::string& text) {
    auto scenario = parse_scenario(text, "test.yaml");
    EXPECT_TRUE(scenario) << (scenario ? "" : scenario.error().message);
    return scenario ? *scenario : core::Scenario{};
}

std::vector<core::Cell> cells_of(const core::Scenario& scenario) {
    auto cells = core::expand(scenario);
    EXPECT_TRUE(cells) << (cells ? "" : cells.error().message);
    return cells ? *cells : std::vector<core::Cell>{};
}

std::set<std::string> ids_of(const core::Scenario& scenario) {
    std::set<std::string> ids;
    for (const core::Cell& cell : cells_of(scenario))
        ids.insert(cell.id);
    return ids;
}

// "kernel fs msize cache config" per cell, sorted, to compare against a readable list.
std::set<std::string> describe_cells(const core::Scenario& scenario) {
    std::set<std::string> out;
    for (const core::Cell& cell : cells_of(scenario)) {
        std::string line = cell.kernel_name;
        for (const auto& [axis, value] : cell.params)
            line += " " + axis + "=" + value;
        out.insert(line);
    }
    return out;
}

const core::AxisValues& axis(const core::Scenario& scenario, const std::string& name) {
    static const core::AxisValues k_none;
    for (const core::AxisValues& axis : scenario.matrix)
        if (axis.name == name)
            return axis;
    ADD_FAILURE() << "no axis " << name;
    return k_none;
}

std::vector<std::string> values_of(const std::vector<core::Located>& values) {
    std::vector<std::string> out;
    for (const core::Located& value : values)
        out.push_back(value.value);
    return out;
}

const std::string k_head =
    "name: t\n"
    "kernels:\n"
    "  - {name: deb-6.1, debian: linux-image-6.1.0-57-amd64}\n"
    "  - {name: deb-6.12, debian: linux-image-6.12.113+deb12-amd64-unsigned}\n";

TEST(spec, quickstart_values_and_locations) {
    core::Scenario scenario = load_good("quickstart.yaml");
    EXPECT_EQ(scenario.name, "9p-cache-msize");
    EXPECT_EQ(scenario.file, (data_dir() / "good" / "quickstart.yaml").string());
    std::ifstream in(data_dir() / "good" / "quickstart.yaml");
    std::stringstream raw;
    raw << in.rdbuf();
    EXPECT_EQ(scenario.text, raw.str());

    ASSERT_EQ(scenario.kernels.size(), 2u);
    EXPECT_EQ(scenario.kernels[1].name, "deb-6.12");
    EXPECT_EQ(scenario.kernels[1].source, core::KernelSource::debian);
    EXPECT_EQ(scenario.kernels[1].package, "linux-image-6.12");
    EXPECT_EQ(scenario.kernels[1].path, "kernels[1]");
    EXPECT_EQ(scenario.kernels[1].loc.line, 5);
    EXPECT_EQ(scenario.kernels[1].loc.column, 5);

    const core::AxisValues& msize = axis(scenario, "msize");
    EXPECT_EQ(values_of(msize.values), (std::vector<std::string>{"8192", "524288"}));
    EXPECT_EQ(msize.values[1].path, "matrix.msize[1]");
    EXPECT_EQ(msize.values[1].loc.line, 8);
    EXPECT_EQ(msize.values[1].loc.column, 17);
    EXPECT_EQ(msize.loc.line, 8);
    EXPECT_EQ(msize.loc.column, 10);
    EXPECT_EQ(scenario.matrix_loc.line, 7);
    EXPECT_EQ(scenario.matrix_loc.column, 3);

    ASSERT_EQ(scenario.exclude.size(), 2u);
    EXPECT_EQ(scenario.exclude[1].path, "exclude[1]");
    EXPECT_EQ(scenario.exclude[1].loc.line, 12);
    EXPECT_EQ(scenario.exclude[1].match.at("cache")[0].path, "exclude[1].cache");
    ASSERT_EQ(scenario.include.size(), 1u);
    EXPECT_EQ(values_of(scenario.include[0].match.at("msize")),
              (std::vector<std::string>{"4186112"}));

    EXPECT_EQ(scenario.workload.kind, core::WorkloadKind::generate);
    EXPECT_EQ(scenario.workload.command, "make -j2");
    EXPECT_EQ(scenario.repeat, 3);
    EXPECT_EQ(scenario.warmup, 1);
    EXPECT_EQ(scenario.guest.memory_mib, 1024u);
    EXPECT_EQ(scenario.timeouts.workload, 20min);
}

TEST(spec, quickstart_cells_through_exclude_and_include) {
    core::Scenario scenario = load_good("quickstart.yaml");
    std::set<std::string> cells = describe_cells(scenario);
    // Per kernel: 9p x 2 msizes x 3 caches, and virtiofs with only `none` left by the
    // exclusions; plus the included 4 MiB cell for deb-6.1.
    EXPECT_EQ(cells.size(), 15u);
    EXPECT_TRUE(cells.count("deb-6.1 cache=loose fs=9p msize=4186112"));
    EXPECT_FALSE(cells.count("deb-6.12 cache=loose fs=9p msize=4186112"));
    EXPECT_TRUE(cells.count("deb-6.12 cache=none fs=virtiofs"));
    EXPECT_FALSE(cells.count("deb-6.12 cache=mmap fs=virtiofs"));
    EXPECT_TRUE(cells.count("deb-6.12 cache=mmap fs=9p msize=524288"));
}

TEST(spec, reordered_file_expands_to_the_same_cells) {
    std::set<std::string> ids = ids_of(load_good("quickstart.yaml"));
    EXPECT_EQ(ids.size(), 15u);
    EXPECT_EQ(ids, ids_of(load_good("quickstart-reordered.yaml")));
}

TEST(spec, reordered_seed_scenario_expands_to_the_same_cells) {
    const char* root = std::getenv("RIG_SOURCE_ROOT");
    fs::path seed = fs::path(root ? root : ".") / "scenarios" / "9p-cache-msize.yaml";
    if (!fs::exists(seed))
        GTEST_SKIP() << seed << " not present";
    auto original = load_scenario(seed);
    ASSERT_TRUE(original) << original.error().message;
    std::set<std::string> ids = ids_of(*original);
    EXPECT_FALSE(ids.empty());
    EXPECT_EQ(ids, ids_of(load_good("9p-cache-msize-reordered.yaml")));
}

TEST(spec, every_good_file_and_shipped_scenario_parses) {
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(data_dir() / "good"))
        files.push_back(entry.path());
    if (const char* root = std::getenv("RIG_SOURCE_ROOT");
        root && fs::exists(fs::path(root) / "scenarios"))
        for (const auto& entry : fs::directory_iterator(fs::path(root) / "scenarios"))
            if (entry.path().extension() == ".yaml")
                files.push_back(entry.path());
    EXPECT_GE(files.size(), 5u);
    for (const fs::path& file : files) {
        auto scenario = load_scenario(file);
        EXPECT_TRUE(scenario) << file << ": " << (scenario ? "" : scenario.error().message);
    }
}

TEST(spec, defaults) {
    core::Scenario scenario = load_good("minimal.yaml");
    EXPECT_TRUE(scenario.matrix.empty());
    EXPECT_EQ(scenario.matrix_loc.line, 2); // the top map: no matrix key to point at
    EXPECT_EQ(scenario.matrix_loc.column, 1);
    EXPECT_EQ(scenario.workload.kind, core::WorkloadKind::generate);
    EXPECT_EQ(scenario.workload.generate.units, 40);
    EXPECT_EQ(scenario.workload.generate.headers, 3);
    EXPECT_EQ(scenario.workload.generate.functions, 20);
    EXPECT_EQ(scenario.workload.command, "make -j2");
    EXPECT_EQ(scenario.repeat, 1);
    EXPECT_EQ(scenario.warmup, 0);
    EXPECT_EQ(scenario.guest.memory_mib, 1024u);
    EXPECT_EQ(scenario.guest.cpus, 2);
    EXPECT_EQ(scenario.guest.accel, core::Accel::auto_detect);
    EXPECT_EQ(scenario.timeouts.boot, 2min);
    EXPECT_EQ(scenario.timeouts.workload, 20min);
    EXPECT_EQ(scenario.timeouts.silence, 5min);
    EXPECT_EQ(scenario.backend, core::Backend::qemu);
    EXPECT_TRUE(scenario.hosts.empty());
    // No matrix: one cell per kernel, on the default fs.
    EXPECT_EQ(describe_cells(scenario), (std::set<std::string>{"deb-6.1 fs=9p"}));
}

TEST(spec, generate_defaults_apply_per_key) {
    core::Scenario scenario = parse_ok(k_head + "workload:\n  generate:\n");
    EXPECT_EQ(scenario.workload.generate.units, 40);
    EXPECT_EQ(scenario.workload.command, "make -j2");
    scenario = parse_ok(k_head + "workload: {generate: {units: 7}, command: make}\n");
    EXPECT_EQ(scenario.workload.generate.units, 7);
    EXPECT_EQ(scenario.workload.generate.functions, 20);
    EXPECT_EQ(scenario.workload.command, "make");
    scenario = parse_ok(k_head + "workload: {command: ./run.sh}\n");
    EXPECT_EQ(scenario.workload.kind, core::WorkloadKind::command);
    EXPECT_EQ(scenario.workload.command, "./run.sh");
}

TEST(spec, per_fs_cache) {
    core::Scenario scenario = load_good("per-fs-cache.yaml");
    const core::AxisValues& cache = axis(scenario, "cache");
    EXPECT_TRUE(cache.values.empty());
    ASSERT_EQ(cache.by_fs.size(), 2u);
    EXPECT_EQ(values_of(cache.by_fs.at("virtiofs")), (std::vector<std::string>{"auto", "always"}));
    EXPECT_EQ(cache.by_fs.at("virtiofs")[0].path, "matrix.cache.virtiofs[0]");
    EXPECT_EQ(cache.by_fs.at("virtiofs")[0].loc.line, 10);
    EXPECT_EQ(cache.by_fs.at("virtiofs")[0].loc.column, 16);
    // A single scalar is a one-element list, path without an index.
    const core::AxisValues& msize = axis(scenario, "msize");
    EXPECT_EQ(values_of(msize.values), (std::vector<std::string>{"524288"}));
    EXPECT_EQ(msize.values[0].path, "matrix.msize");
    EXPECT_EQ(describe_cells(scenario), (std::set<std::string>{
                                            "deb-6.12 cache=none fs=9p msize=524288",
                                            "deb-6.12 cache=loose fs=9p msize=524288",
                                            "deb-6.12 cache=mmap fs=9p msize=524288",
                                            "deb-6.12 cache=auto fs=virtiofs",
                                            "deb-6.12 cache=always fs=virtiofs",
                                        }));
}

TEST(spec, git_and_image_kernels_with_rules) {
    core::Scenario scenario = load_good("git-kernels.yaml");
    ASSERT_EQ(scenario.kernels.size(), 2u);
    const core::Kernel& git = scenario.kernels[0];
    EXPECT_EQ(git.source, core::KernelSource::git);
    EXPECT_EQ(git.repo, "/src/linux");
    EXPECT_EQ(git.ref, "v6.1");
    EXPECT_EQ(git.config, (std::vector<std::string>{"base", "debug"}));
    EXPECT_EQ(git.patches, (std::vector<std::string>{"patches/0001-9p-fix.patch"}));
    EXPECT_EQ(git.options, (std::map<std::string, std::string>{{"CONFIG_9P_FS_POSIX_ACL", "y"},
                                                               {"CONFIG_NR_CPUS", "8"}}));
    const core::Kernel& image = scenario.kernels[1];
    EXPECT_EQ(image.source, core::KernelSource::image);
    EXPECT_EQ(image.image, "/boot/vmlinuz-x");
    EXPECT_EQ(image.modules, "/lib/modules/x");
    EXPECT_EQ(scenario.workload.kind, core::WorkloadKind::tree);
    EXPECT_EQ(scenario.workload.tree, "/src/small-project");
    EXPECT_EQ(scenario.workload.command, "make -j4 all");
    // The rule's "8192" was written 8192, the matrix's as 8K: both canonical.
    EXPECT_EQ(values_of(scenario.exclude[0].match.at("msize")), (std::vector<std::string>{"8192"}));

    EXPECT_EQ(describe_cells(scenario), (std::set<std::string>{
                                            // v6.1: config x msize x cache, minus release+none.
                                            "v6.1 cache=none config=debug fs=9p msize=8192",
                                            "v6.1 cache=loose config=debug fs=9p msize=8192",
                                            "v6.1 cache=none config=debug fs=9p msize=65536",
                                            "v6.1 cache=loose config=debug fs=9p msize=65536",
                                            "v6.1 cache=loose config=release fs=9p msize=8192",
                                            "v6.1 cache=loose config=release fs=9p msize=65536",
                                            // mine: no config axis, msize 8192 excluded.
                                            "mine cache=loose fs=9p msize=65536",
                                            "mine cache=none fs=9p msize=65536",
                                            // the include: a virtiofs sub-matrix for mine only.
                                            "mine cache=auto fs=virtiofs",
                                            "mine cache=always fs=virtiofs",
                                        }));
}

TEST(spec, libvirt_backend_guest_and_timeouts) {
    core::Scenario scenario = load_good("libvirt.yaml");
    EXPECT_EQ(scenario.name, "libvirt.hosts_1");
    EXPECT_EQ(scenario.backend, core::Backend::libvirt);
    EXPECT_EQ(scenario.uri, "qemu:///system");
    EXPECT_EQ(scenario.hosts, (std::vector<std::string>{"qemu:///system", "qemu+ssh://b/system"}));
    EXPECT_EQ(scenario.guest.memory_mib, 2048u);
    EXPECT_EQ(scenario.guest.cpus, 4);
    EXPECT_EQ(scenario.guest.accel, core::Accel::tcg);
    EXPECT_EQ(scenario.guest.machine, std::nullopt); // auto
    EXPECT_EQ(parse_ok(k_head + "guest: {machine: q35}\n").guest.machine, core::Machine::q35);
    EXPECT_EQ(parse_ok(k_head + "guest: {machine: auto}\n").guest.machine, std::nullopt);
    EXPECT_EQ(scenario.timeouts.boot, 90s);
    EXPECT_EQ(scenario.timeouts.workload, 90min);
    EXPECT_EQ(scenario.timeouts.silence, 300s);
    EXPECT_EQ(scenario.workload.kind, core::WorkloadKind::command);
}

TEST(spec, scalar_axis_and_rule_values_are_canonical) {
    core::Scenario scenario = parse_ok(k_head + "matrix: {fs: 9p, msize: [4K, 1M], cache: loose}\n"
                                                "exclude: [{msize: 1024K, kernel: deb-6.12}]\n");
    EXPECT_EQ(values_of(axis(scenario, "fs").values), (std::vector<std::string>{"9p"}));
    EXPECT_EQ(values_of(axis(scenario, "msize").values),
              (std::vector<std::string>{"4096", "1048576"}));
    EXPECT_EQ(values_of(scenario.exclude[0].match.at("msize")),
              (std::vector<std::string>{"1048576"}));
    EXPECT_EQ(describe_cells(scenario), (std::set<std::string>{
                                            "deb-6.1 cache=loose fs=9p msize=4096",
                                            "deb-6.1 cache=loose fs=9p msize=1048576",
                                            "deb-6.12 cache=loose fs=9p msize=4096",
                                        }));
}

TEST(spec, include_with_kernel_list_and_cache_override) {
    core::Scenario scenario =
        parse_ok(k_head + "matrix:\n  fs: 9p\n  cache: {9p: [none]}\n"
                          "include:\n  - {kernel: [deb-6.12], fs: virtiofs, cache: always}\n");
    EXPECT_EQ(describe_cells(scenario), (std::set<std::string>{
                                            "deb-6.1 cache=none fs=9p",
                                            "deb-6.12 cache=none fs=9p",
                                            "deb-6.12 cache=always fs=virtiofs",
                                        }));
}

TEST(spec, include_may_repeat_a_main_cell) {
    core::Scenario scenario = parse_ok(
        k_head + "matrix: {cache: [none, loose]}\ninclude: [{kernel: deb-6.1, cache: none}]\n");
    EXPECT_EQ(cells_of(scenario).size(), 4u);
}

TEST(spec, load_reports_the_path_it_was_given) {
    auto scenario = load_scenario(data_dir() / "good" / "minimal.yaml");
    ASSERT_TRUE(scenario);
    EXPECT_EQ(scenario->file, (data_dir() / "good" / "minimal.yaml").string());
}

TEST(spec, fuse_knobs_canonical_and_only_on_fuse_cells) {
    auto scenario = parse_scenario(k_head + "matrix:\n"
                                            "  fs: [9p, fuse]\n"
                                            "  cache: [loose]\n"
                                            "  attr_timeout: [0, 1.0, 0.50]\n"
                                            "  writeback_cache: true\n",
                                   "fuse.yaml");
    ASSERT_TRUE(scenario) << scenario.error().message;
    EXPECT_EQ(values_of(axis(*scenario, "attr_timeout").values),
              (std::vector<std::string>{"0", "1", "0.5"}));
    EXPECT_EQ(axis(*scenario, "attr_timeout").values[2].path, "matrix.attr_timeout[2]");
    std::set<std::string> expected;
    for (std::string kernel : {"deb-6.1", "deb-6.12"}) {
        expected.insert(kernel + " cache=loose fs=9p");
        for (std::string timeout : {"0", "1", "0.5"})
            expected.insert(kernel + " attr_timeout=" + timeout + " fs=fuse writeback_cache=true");
    }
    EXPECT_EQ(describe_cells(*scenario), expected);
}

TEST(spec, fuse_rules_match_canonical_values) {
    auto scenario = parse_scenario(k_head + "matrix:\n"
                                            "  fs: fuse\n"
                                            "  entry_timeout: [0, 1]\n"
                                            "  direct_io: [true, false]\n"
                                            "exclude:\n"
                                            "  - {entry_timeout: 1.000, direct_io: true}\n",
                                   "rules.yaml");
    ASSERT_TRUE(scenario) << scenario.error().message;
    EXPECT_EQ(describe_cells(*scenario).size(), 6u); // 2 kernels x (4 - 1)
    EXPECT_EQ(describe_cells(*scenario).count("deb-6.1 direct_io=true entry_timeout=1 fs=fuse"),
              0u);
}

TEST(spec, nine_p_cell_ids_unchanged_by_fuse_axes) {
    auto plain = parse_scenario(k_head + "matrix:\n  fs: 9p\n  cache: [none, loose]\n", "a.yaml");
    auto with_knobs = parse_scenario(k_head + "matrix:\n  fs: 9p\n  cache: [none, loose]\n"
                                              "  entry_timeout: [0, 1]\n  keep_cache: true\n",
                                     "b.yaml");
    ASSERT_TRUE(plain && with_knobs);
    EXPECT_EQ(ids_of(*plain), ids_of(*with_knobs));
}

TEST(spec, phases_in_file_order_on_generated_and_tree_workloads) {
    core::Scenario scenario =
        parse_ok(k_head + "workload:\n  generate: {units: 3}\n  phases:\n    build: make -j2\n"
                          "    noop: make -j2\n    touch: touch units/unit_0.c && make\n");
    ASSERT_EQ(scenario.workload.phases.size(), 3u);
    EXPECT_EQ(scenario.workload.phases[0].name, "build");
    EXPECT_EQ(scenario.workload.phases[2].name, "touch");
    EXPECT_EQ(scenario.workload.phases[2].command, "touch units/unit_0.c && make");
    scenario = parse_ok(k_head + "workload:\n  tree: /src\n  phases: {a: make, b: make}\n");
    EXPECT_EQ(scenario.workload.kind, core::WorkloadKind::tree);
    EXPECT_EQ(scenario.workload.phases.size(), 2u);
}

TEST(spec, phases_enter_the_cell_id_and_a_plain_command_keeps_its_id) {
    auto plain = parse_scenario(k_head + "workload: {generate: {}, command: make}\n", "a.yaml");
    auto phased =
        parse_scenario(k_head + "workload: {generate: {}, phases: {build: make}}\n", "b.yaml");
    auto reordered = parse_scenario(
        k_head + "workload: {generate: {}, phases: {noop: make, build: make}}\n", "c.yaml");
    auto ordered = parse_scenario(
        k_head + "workload: {generate: {}, phases: {build: make, noop: make}}\n", "d.yaml");
    ASSERT_TRUE(plain && phased && reordered && ordered);
    EXPECT_EQ(plain->workload.canonical(), "generate:units=40,headers=3,functions=20;command=make");
    EXPECT_NE(ids_of(*plain), ids_of(*phased));
    EXPECT_NE(ids_of(*reordered), ids_of(*ordered)) << "phase order is part of the workload";
}

TEST(spec, count_9p_is_not_part_of_the_cell) {
    auto counted = parse_scenario(k_head + "guest: {count_9p: true}\n", "a.yaml");
    auto uncounted = parse_scenario(k_head + "guest: {count_9p: false}\n", "b.yaml");
    ASSERT_TRUE(counted && uncounted);
    EXPECT_TRUE(counted->guest.count_9p);
    EXPECT_FALSE(uncounted->guest.count_9p);
    EXPECT_EQ(ids_of(*counted), ids_of(*uncounted));
}

TEST(spec, scratch_size_is_part_of_the_cell_and_absent_keeps_old_ids) {
    auto none = parse_scenario(k_head, "a.yaml");
    auto small = parse_scenario(k_head + "guest: {scratch: 256M}\n", "b.yaml");
    auto large = parse_scenario(k_head + "guest: {scratch: 1G}\n", "c.yaml");
    ASSERT_TRUE(none && small && large);
    EXPECT_EQ(none->guest.scratch_bytes, 0u);
    EXPECT_EQ(none->guest.canonical(), "memory=1024M;cpus=2");
    EXPECT_EQ(small->guest.scratch_bytes, 256u << 20);
    EXPECT_EQ(small->guest.canonical(), "memory=1024M;cpus=2;scratch=268435456");
    EXPECT_NE(ids_of(*none), ids_of(*small));
    EXPECT_NE(ids_of(*small), ids_of(*large));
}

TEST(spec, module_workload_keeps_its_params_in_order_and_they_enter_the_cell) {
    auto one = parse_scenario(k_head + "workload: {module: m/bench.c, params: {loops: 200000, "
                                       "blocks: 64}}\n",
                              "a.yaml");
    auto other =
        parse_scenario(k_head + "workload: {module: m/bench.c, params: {loops: 10}}\n", "b.yaml");
    ASSERT_TRUE(one && other) << (one ? other.error().message : one.error().message);
    EXPECT_EQ(one->workload.kind, core::WorkloadKind::module);
    EXPECT_EQ(one->workload.module, "m/bench.c");
    using Params = std::vector<std::pair<std::string, std::string>>;
    EXPECT_EQ(one->workload.module_params, (Params{{"loops", "200000"}, {"blocks", "64"}}));
    EXPECT_EQ(one->workload.canonical(), "module=m/bench.c;params=loops=200000,blocks=64,");
    EXPECT_NE(ids_of(*one), ids_of(*other));
}

TEST(spec, outputs_enter_the_cell_only_when_given_and_readback_is_a_workload_of_its_own) {
    auto plain = parse_scenario(k_head + "workload: {generate: {}, command: make}\n", "a.yaml");
    auto given = parse_scenario(
        k_head + "workload: {generate: {}, command: make, outputs: [prog, 'units/*.o']}\n",
        "b.yaml");
    auto readback =
        parse_scenario(k_head + "workload: {readback: {files: 3, size: 1M}}\n", "c.yaml");
    auto defaults = parse_scenario(k_head + "workload: {readback: }\n", "d.yaml");
    ASSERT_TRUE(plain && given && readback && defaults)
        << (given ? (readback ? defaults.error().message : readback.error().message)
                  : given.error().message);
    EXPECT_EQ(plain->workload.canonical(), "generate:units=40,headers=3,functions=20;command=make");
    EXPECT_EQ(given->workload.outputs, (std::vector<std::string>{"prog", "units/*.o"}));
    EXPECT_EQ(given->workload.canonical(),
              "generate:units=40,headers=3,functions=20;command=make;outputs=prog,units/*.o");
    EXPECT_NE(ids_of(*plain), ids_of(*given));
    EXPECT_EQ(readback->workload.kind, core::WorkloadKind::readback);
    EXPECT_EQ(readback->workload.readback.files, 3);
    EXPECT_EQ(readback->workload.readback.bytes, 1u << 20);
    EXPECT_EQ(readback->workload.canonical(), "readback:files=3,bytes=1048576;command=");
    EXPECT_EQ(defaults->workload.readback.files, 8);
    EXPECT_EQ(defaults->workload.readback.bytes, 256u << 10);
    EXPECT_NE(ids_of(*readback), ids_of(*defaults));
}

TEST(spec, coherency_lists_its_changes_and_enters_the_cell) {
    auto plain = parse_scenario(k_head + "workload: {command: make}\n", "a.yaml");
    auto probed = parse_scenario(
        k_head + "workload: {command: make, coherency: {changes: [rewrite, delete, rewrite], "
                 "window: 500ms}}\n",
        "b.yaml");
    auto readback = parse_scenario(
        k_head + "workload: {readback: {files: 1}, coherency: {changes: [append]}}\n", "c.yaml");
    ASSERT_TRUE(plain && probed && readback)
        << (probed ? readback.error().message : probed.error().message);
    using core::Change;
    EXPECT_EQ(probed->workload.coherency.changes,
              (std::vector<Change>{Change::rewrite, Change::remove, Change::rewrite}));
    EXPECT_EQ(probed->workload.coherency.window, std::chrono::milliseconds(500));
    EXPECT_EQ(probed->workload.canonical(),
              "command=make;coherency=rewrite,delete,rewrite,window:500");
    EXPECT_EQ(plain->workload.canonical(), "command=make");
    EXPECT_NE(ids_of(*plain), ids_of(*probed));
    EXPECT_EQ(readback->workload.coherency.window, std::chrono::seconds(3));
    auto missing =
        parse_scenario(k_head + "workload: {command: make, coherency: {window: 1s}}\n", "d.yaml");
    ASSERT_FALSE(missing);
    EXPECT_NE(missing.error().message.find("workload.coherency.changes: missing required key"),
              std::string::npos)
        << missing.error().message;
}

TEST(spec, check_after_names_phases_to_check_after_and_enters_the_cell) {
    const std::string phases = "phases: {build: make, touch: touch h, rebuild: make}";
    auto checked = parse_scenario(k_head + "workload: {generate: {units: 2}, " + phases +
                                      ", coherency: {changes: [rewrite]}, check_after: [build]}\n",
                                  "a.yaml");
    ASSERT_TRUE(checked) << checked.error().message;
    EXPECT_EQ(checked->workload.check_after, std::vector<std::string>{"build"});
    EXPECT_NE(checked->workload.canonical().find(";check_after=build"), std::string::npos);
    auto error_of = [&](const std::string& workload) {
        auto parsed = parse_scenario(k_head + "workload: " + workload + "\n", "b.yaml");
        return parsed ? std::string() : parsed.error().message;
    };
    EXPECT_NE(error_of("{command: make, coherency: {changes: [rewrite]}, check_after: [build]}")
                  .find("give the workload 'phases'"),
              std::string::npos);
    EXPECT_NE(error_of("{generate: {}, " + phases + ", check_after: [biuld]}")
                  .find("unknown phase 'biuld'"),
              std::string::npos);
    EXPECT_NE(error_of("{generate: {}, " + phases + ", check_after: [build, build]}")
                  .find("phase 'build' is given twice"),
              std::string::npos);
    EXPECT_NE(error_of("{" + phases + ", check_after: [build]}").find("nothing to check"),
              std::string::npos);
    // 40 changes at each of two checks.
    std::string many = "[rewrite";
    for (int i = 1; i < 40; ++i)
        many += ", append";
    EXPECT_NE(error_of("{generate: {}, " + phases + ", coherency: {changes: " + many +
                       "]}, check_after: [build]}")
                  .find("would make 80 changes"),
              std::string::npos);
}

TEST(spec, image_kernels_take_a_build_folder_for_modules) {
    auto scenario = parse_scenario("name: t\nkernels:\n  - {name: mine, image: /boot/vmlinuz, "
                                   "build: /usr/src/linux}\nworkload: {module: bench.c}\n",
                                   "a.yaml");
    ASSERT_TRUE(scenario) << scenario.error().message;
    EXPECT_EQ(scenario->kernels[0].build, "/usr/src/linux");
    EXPECT_NE(scenario->kernels[0].canonical().find(";build=/usr/src/linux"), std::string::npos);
}

TEST(spec, debian_names_series_metapackage_and_exact_with_a_flavour_for_series) {
    auto scenario = load_scenario(data_dir() / "good" / "debian-series.yaml");
    ASSERT_TRUE(scenario) << scenario.error().message;
    ASSERT_EQ(scenario->kernels.size(), 4u);
    EXPECT_EQ(scenario->kernels[0].package, "linux-image-6.1");
    EXPECT_EQ(scenario->kernels[0].flavour, "");
    EXPECT_EQ(scenario->kernels[1].flavour, "cloud-amd64");
    EXPECT_NE(scenario->kernels[0].canonical(), scenario->kernels[1].canonical());
    EXPECT_EQ(scenario->kernels[0].canonical(), "name=series;debian=linux-image-6.1")
        << "no flavour given: the text (and so the cell ids) of a scenario without flavours";
    EXPECT_EQ(scenario->kernels[2].package, "linux-image-amd64");
    EXPECT_EQ(scenario->kernels[3].package, "linux-image-6.1.0-57-amd64");
}

} // namespace
TEST(spec, share_limit_is_a_limit_not_part_of_the_cell) {
    auto plain = parse_scenario(k_head, "a.yaml");
    auto capped = parse_scenario(k_head + "guest: {share_limit: 512M}\n", "b.yaml");
    ASSERT_TRUE(plain && capped);
    EXPECT_EQ(plain->guest.share_limit, uint64_t{4} << 30);
    EXPECT_EQ(capped->guest.share_limit, uint64_t{512} << 20);
    EXPECT_EQ(ids_of(*plain), ids_of(*capped));
}

TEST(spec, host_paths_are_part_of_the_cell) {
    auto plain = parse_scenario(k_head, "a.yaml");
    auto shared = parse_scenario(k_head + "guest: {host_paths: [/opt]}\n", "b.yaml");
    ASSERT_TRUE(plain && shared) << (shared ? "" : shared.error().message);
    EXPECT_EQ(shared->guest.host_paths, std::vector<std::string>{"/opt"});
    EXPECT_EQ(shared->guest.canonical(), "memory=1024M;cpus=2;host_path=/opt");
    EXPECT_NE(ids_of(*plain), ids_of(*shared));
}

// A profile's sets stand for their globs (the filesystems' rows and the layers beneath),
// each glob once; it is part of the cell, since the probes cost time.
TEST(spec, profile_sets_expand_to_globs_and_enter_the_cell) {
    auto plain = parse_scenario(k_head, "a.yaml");
    auto profiled = parse_scenario(
        k_head + "guest: {profile: [9p, netfs, p9_client_*, virtiofs, fuse]}\n", "b.yaml");
    ASSERT_TRUE(plain && profiled) << (profiled ? "" : profiled.error().message);
    EXPECT_EQ(profiled->guest.profile,
              (std::vector<std::string>{"9p", "netfs", "p9_client_*", "virtiofs", "fuse"}));
    EXPECT_EQ(core::profile_globs(profiled->guest.profile),
              (std::vector<std::string>{"v9fs_*", "p9_*", "netfs_*", "p9_client_*", "virtio_fs_*",
                                        "fuse_*"}));
    EXPECT_EQ(core::profile_globs({"fscache"}),
              (std::vector<std::string>{"fscache_*", "__fscache_*"}));
    EXPECT_NE(profiled->guest.canonical().find(";profile=9p;profile=netfs"), std::string::npos);
    EXPECT_NE(ids_of(*plain), ids_of(*profiled));
    EXPECT_EQ(core::profile_entry_error("p9_client_?alk"), "");
    EXPECT_NE(core::profile_entry_error("p9*"), "");
    EXPECT_NE(core::profile_entry_error("p9_$(reboot)"), "");
}

// A posted series adds the series axis to its kernel only, without and with unless the
// matrix names it; its base may come from the series, so the ref is not required.
TEST(spec, a_series_measures_its_kernel_without_and_with_it) {
    core::Scenario scenario = parse_ok("name: s\nkernels:\n"
                                       "  - {name: posted, git: /src/linux, series: s.mbox}\n"
                                       "  - {name: deb, debian: linux-image-6.1}\n"
                                       "matrix: {cache: loose}\n");
    EXPECT_EQ(scenario.kernels[0].series, "s.mbox");
    EXPECT_EQ(scenario.kernels[0].ref, "");
    EXPECT_EQ(describe_cells(scenario), (std::set<std::string>{
                                            "posted cache=loose fs=9p series=without",
                                            "posted cache=loose fs=9p series=with",
                                            "deb cache=loose fs=9p",
                                        }));
    core::Scenario only_with =
        parse_ok("name: s\nkernels:\n"
                 "  - {name: posted, git: /src/linux, ref: v6.1, series: s}\n"
                 "matrix: {series: with}\n");
    EXPECT_EQ(describe_cells(only_with), (std::set<std::string>{"posted fs=9p series=with"}));
    // The cells' ids are those of a kernel without a series where it has none.
    core::Scenario plain = parse_ok("name: s\nkernels:\n  - {name: deb, debian: linux-image-6.1}\n"
                                    "matrix: {cache: loose}\n");
    EXPECT_EQ(cells_of(plain).front().id, cells_of(scenario).back().id);

    auto bad_value = parse_scenario("name: s\nkernels:\n  - {name: p, git: /l, series: s}\n"
                                    "matrix: {series: [with, maybe]}\n",
                                    "t.yaml");
    ASSERT_FALSE(bad_value);
    EXPECT_EQ(bad_value.error().message, "t.yaml:4:25: matrix.series[1]: a series is applied or "
                                         "not: 'without' or 'with', got 'maybe'");
    auto on_debian = parse_scenario(
        "name: s\nkernels:\n  - {name: d, debian: linux-image-6.1, series: s}\n", "t.yaml");
    ASSERT_FALSE(on_debian);
    EXPECT_NE(on_debian.error().message.find("'series' applies only to git kernels"),
              std::string::npos)
        << on_debian.error().message;
}

} // namespace rig::spec
