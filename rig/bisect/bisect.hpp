// SPDX-License-Identifier: MIT
// `rig bisect`: one cell of a scenario between a good and a bad commit of its git kernel,
// unattended and resumable. Endpoints are checked first, each commit gets a verdict from
// as many samples as the criterion needs, and the culprit is verified before it is named.
// Everything lives in the database: a killed bisect resumes from its stored steps.
#pragma once

#include "bisect/verdict.hpp"
#include "store/store.hpp"
#include "util/error.hpp"
#include "vm/hypervisor.hpp"

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

namespace rig::bisect {

struct StartOptions {
    std::filesystem::path scenario;
    std::string cell; // cell id or prefix, or key=value[,key=value] on kernel/config/axes
    std::string good; // any revision of the kernel's repository
    std::string bad;
    std::string criterion = "errors";
    int samples = 3;            // at each endpoint and for each verification
    double confidence = 0.95;   // of a good verdict (functional criteria)
    int max_samples = 10;       // per commit: the cap (functional) or budget (duration)
    int infra_retries = 3;      // infra errors in a row before the bisect stops
    bool verify_revert = false; // also revert the culprit on BAD and check that it passes
};

// Settings every resume uses, stored with the bisect as key=value lines.
std::string encode_settings(const StartOptions& options);
Expected<StartOptions> decode_settings(const std::string& text);

// The one cell of `cells` that `filter` names, or a usage error listing the candidates.
Expected<size_t> select_cell(const std::vector<core::Cell>& cells, const std::string& filter);

struct Settings {
    std::filesystem::path
        results_dir;                 // results_dir/bisects/<id>: sample logs, rig's git repository
    std::filesystem::path cache_dir; // kernels and initramfs images
    // Where samples run follows the scenario's backend. slurm: each sample is a batch job
    // (run/batch.hpp) whose jobs are named after `db`; `program` is rig's binary on the
    // nodes.
    std::filesystem::path db;
    std::filesystem::path program;
};

// Loads and checks the scenario and the revisions, stores a new bisect (and the run that
// holds its samples) and returns its id. Nothing is built yet.
Expected<int64_t> create_bisect(const StartOptions& options, store::Database& db,
                                const Settings& settings);

enum class Status {
    running,          // not finished: resume it
    culprit,          // found and verified
    unverified,       // found, but the verification did not confirm it
    inconclusive,     // skipped or unsure commits hide the culprit in a range
    not_reproducible, // the endpoints do not test as given
    stopped,          // infra errors in a row: resume once the machinery works
    interrupted,      // Ctrl-C
};
std::string_view to_string(Status status);
Status parse_status(std::string_view text);

// Runs what the bisect still lacks. Samples run on the scenario's backend: `hypervisor`
// (this machine's QEMU) for qemu, the scenario's libvirt URI, or Slurm jobs; kernels are
// built here in every case. Steps already stored are replayed into git, samples
// already stored are reused and a cached build is not rebuilt: only the sample in flight
// when rig was killed is redone.
Expected<Status> run_bisect(int64_t id, store::Database& db, vm::Hypervisor& hypervisor,
                            const Settings& settings, const std::atomic<bool>& interrupted,
                            std::ostream& out);

// The bisect as text: status, endpoints, step table, culprit, confidence, cost, and a
// summary ready to paste into a mail.
Expected<std::string> render_report(int64_t id, store::Database& db, const Settings& settings);
// One line per bisect, or a few for one.
Expected<std::string> render_status(store::Database& db, int64_t id);
// `git bisect log` of the bisect, replayed from its stored steps.
Expected<std::string> bisect_log(int64_t id, store::Database& db, const Settings& settings);

} // namespace rig::bisect
