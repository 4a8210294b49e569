// SPDX-License-Identifier: MIT
// A model of a bisect's wall time on hosts of more guest slots than this machine has: rig's
// own bisect driver and git's own bisect over the fake kernel provider and fake guests, on
// a line of COMMITS tiny commits with a planted count regression at 3/4 (criterion
// metric:guest.getattr:+50%, as tests/bench/bisect-multisection plants one in 9p's getattr), each
// build, step and sample charged the costs measured on a real host, in real time scaled down SCALE
// times (the guests of one round run side by side, as rig runs them, so the scaled clock sees the
// overlap). The driver's own time at zero cost is measured the same way and taken off.
// Prints, for each number of slots, the modelled wall, builds and boots of the bisect one
// commit at a time (--jobs K) and in multisection rounds (--jobs K --multisection), and
// their ratio.
//
//   bisect-model BUILD_S SAMPLE_S STEP_S [COMMITS] [SCALE] [SLOTS...]
#include "bisect/bisect.hpp"
#include "fake_clock.hpp"
#include "fake_commit_builder.hpp"
#include "fake_hypervisor.hpp"
#include "fake_probe.hpp"
#include "proc/process.hpp"
#include "store/store.hpp"
#include "util/strings.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

using namespace rig;
namespace fs = std::filesystem;
using std::chrono::milliseconds;

namespace {

struct Costs {
    double build = 0, sample = 0, step = 0; // seconds on the modelled host
    int scale = 20;
};

struct Outcome {
    double wall = 0; // seconds on the modelled host
    size_t builds = 0;
    size_t boots = 0;
    int steps = 0; // prepared (each one's own work charged once)
    std::string status;
};

milliseconds scaled(double seconds, int scale) {
    return milliseconds(static_cast<long>(seconds * 1000 / scale));
}

// git, which must succeed: its output.
std::string git(const fs::path& repo, std::vector<std::string> args) {
    args.insert(args.begin(), {"git", "-C", repo.string()});
    proc::RunOptions options;
    options.env = {{"GIT_AUTHOR_NAME", "m"},
                   {"GIT_AUTHOR_EMAIL", "m@m"},
                   {"GIT_COMMITTER_NAME", "m"},
                   {"GIT_COMMITTER_EMAIL", "m@m"}};
    auto result = proc::run(args, options);
    if (!result || result->exit_code != 0) {
        std::cerr << "bisect-model: git " << args[3] << " failed\n";
        std::exit(1);
    }
    return std::string(util::trim(result->out));
}

// A line of `size` commits in a new repository at `repo`, oldest first.
std::vector<std::string> make_repository(const fs::path& repo, int size) {
    fs::create_directories(repo);
    git(repo, {"init", "-q", "-b", "master"});
    std::vector<std::string> ids;
    for (int i = 0; i < size; ++i) {
        std::ofstream(repo / "Makefile") << "# " << i << "\nall:\n";
        git(repo, {"add", "Makefile"});
        git(repo, {"commit", "-q", "-m", "commit " + std::to_string(i)});
        ids.push_back(git(repo, {"rev-parse", "HEAD"}));
    }
    return ids;
}

// One bisect of `commits` commits with `slots` guests at once, in real seconds.
Outcome bisect_once(int commits, int slots, bool multisection, const Costs& costs) {
    char pattern[] = "/tmp/bisect-model-XXXXXX";
    fs::path dir = ::mkdtemp(pattern);
    std::ofstream(dir / "hunt.yaml") << "name: model\n"
                                        "kernels:\n"
                                        "  - {name: linux, git: linux, ref: master, config: "
                                        "[base]}\n"
                                        "matrix: {fs: 9p, cache: loose}\n"
                                        "workload: {command: make}\n"
                                        "guest: {cpus: 1, accel: tcg, count_9p: false}\n";
    // A real repository of tiny commits, bisected by git's own bisect as the real run's
    // is: the same commits tested in the same order.
    const std::vector<std::string> ids = make_repository(dir / "linux", commits + 1);
    const std::set<std::string> bad(ids.begin() + (3 * commits) / 4, ids.end());
    test::FakeCommitBuilder builder(dir / "kernels");
    builder.build_cost = scaled(costs.build, costs.scale);
    builder.step_cost = scaled(costs.step, costs.scale);
    // GOOD is the tree the suites built before: a cache hit, as in the real run.
    builder.charged.insert(ids.front());
    test::FakeProbe probe;
    test::FakeClock clock;
    bisect::Settings settings;
    settings.results_dir = dir / "results";
    settings.cache_dir = dir / "cache";
    settings.builder = &builder;
    settings.probe = &probe;
    settings.clock = &clock;
    settings.pacing.poll = milliseconds(2);
    const milliseconds sample = scaled(costs.sample, costs.scale);
    test::FakeHypervisor hypervisor([&](const vm::GuestSpec& spec) {
        bool regressed = bad.count(test::FakeCommitBuilder::commit_of(spec.kernel)) > 0;
        test::GuestScript script;
        script.hello(milliseconds(0))
            .workload(milliseconds(1), sample, 0)
            .channel(sample, regressed ? "metric guest.getattr 1393 requests"
                                       : "metric guest.getattr 72 requests")
            .done(sample)
            .exit(sample, 0);
        return script;
    });
    // Cores enough for every slot and the reserve rig keeps (one in eight).
    std::vector<core::HostCpu> cpus;
    for (int cpu = 0; cpu < 2 * slots + 2; ++cpu)
        cpus.push_back({cpu, cpu, 0, 0});
    hypervisor.set_host_cpus(cpus);

    auto db = std::move(store::Database::open(dir / "rig.db").value());
    bisect::StartOptions options;
    options.scenario = dir / "hunt.yaml";
    options.good = ids.front();
    options.bad = ids.back();
    options.criterion = "metric:guest.getattr:+50%";
    options.samples = 2;
    options.jobs = slots;
    options.multisection = multisection;
    Outcome outcome;
    auto id = bisect::create_bisect(options, *db, settings);
    if (!id) {
        std::cerr << "bisect-model: " << id.error().message << "\n";
        std::exit(1);
    }
    std::atomic<bool> interrupted{false};
    std::ostringstream out;
    auto started = std::chrono::steady_clock::now();
    auto status = bisect::run_bisect(*id, *db, hypervisor, settings, interrupted, out);
    outcome.wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (!status) {
        std::cerr << "bisect-model: " << status.error().message << "\n" << out.str();
        std::exit(1);
    }
    outcome.status = std::string(core::to_string(*status));
    std::set<std::string> built(builder.built.begin(), builder.built.end());
    outcome.builds = built.size() - built.count(ids.front());
    outcome.boots = hypervisor.started().size();
    outcome.steps = builder.steps_prepared;
    fs::remove_all(dir);
    return outcome;
}

// The modelled host's seconds: real seconds at these costs, less the driver's own at zero
// cost, scaled up.
Outcome model(int commits, int slots, bool multisection, const Costs& costs) {
    Costs free = costs;
    free.build = free.sample = free.step = 0;
    Outcome charged = bisect_once(commits, slots, multisection, costs);
    Outcome own = bisect_once(commits, slots, multisection, free);
    charged.wall = std::max(0.0, charged.wall - own.wall) * costs.scale;
    return charged;
}

} // namespace

int main(int argc, char** argv) {
    if (argc < 4) {
        std::cerr << "usage: bisect-model BUILD_S SAMPLE_S STEP_S [COMMITS] [SCALE] [SLOTS...]\n";
        return 2;
    }
    Costs costs;
    costs.build = std::atof(argv[1]);
    costs.sample = std::atof(argv[2]);
    costs.step = std::atof(argv[3]);
    int commits = argc > 4 ? std::atoi(argv[4]) : 24;
    costs.scale = argc > 5 ? std::atoi(argv[5]) : 20;
    std::vector<int> slots;
    for (int i = 6; i < argc; ++i)
        slots.push_back(std::atoi(argv[i]));
    if (slots.empty())
        slots = {2, 4, 8, 16};
    std::printf("model: %d commits, build %.1f s, sample %.1f s, step %.1f s, time scaled 1:%d\n",
                commits, costs.build, costs.sample, costs.step, costs.scale);
    for (int k : slots) {
        Outcome binary = model(commits, k, false, costs);
        Outcome multi = model(commits, k, true, costs);
        std::printf("model %2d slots: binary %6.1f min (%zu builds, %zu boots, %s), multisection "
                    "%6.1f min (%zu builds, %zu boots, %s), ratio %.2f\n",
                    k, binary.wall / 60, binary.builds, binary.boots, binary.status.c_str(),
                    multi.wall / 60, multi.builds, multi.boots, multi.status.c_str(),
                    multi.wall / binary.wall);
        std::printf("seconds %d %.1f %.1f %d\n", k, binary.wall, multi.wall, binary.steps);
        std::fflush(stdout);
    }
    return 0;
}
