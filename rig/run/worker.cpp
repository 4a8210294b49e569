// SPDX-License-Identifier: MIT
// Job files and records as JSON, and the worker's one sample.
#include "run/worker.hpp"

#include "host/kvm_probe.hpp"
#include "kernel/artifact.hpp"
#include "run/cells.hpp"
#include "run/sample.hpp"
#include "util/file.hpp"
#include "util/json.hpp"
#include "vm/libvirt.hpp"
#include "vm/qemu.hpp"

#include <set>
#include <string_view>
#include <unistd.h>

namespace rig::run {

namespace fs = std::filesystem;
using json = util::Json;

namespace {

// Raised when a reader meets a file of another version; a new field with a default needs
// no new version.
constexpr int k_job_format = 1;
constexpr int k_record_format = 1;

Expected<void> write_json(const fs::path& path, const json& value) {
    return util::write_file_atomically(path, value.dump(1));
}

// The file's JSON, or an infra error naming it: a file the coordinator wrote (or a worker
// finished) is never half there, so a bad one means the shared folder failed.
Expected<json> read_json(const fs::path& path, int format) {
    std::error_code ec;
    if (!fs::exists(path, ec))
        return fail(ErrorKind::infra, path.string() + ": no such file");
    json value = json::parse(util::read_file(path), nullptr, false);
    if (value.is_discarded() || !value.is_object())
        return fail(ErrorKind::infra, path.string() + ": not a JSON object");
    if (value.value("format", 0) != format)
        return fail(ErrorKind::infra, path.string() + ": format " +
                                          std::to_string(value.value("format", 0)) +
                                          ", this rig reads " + std::to_string(format));
    return value;
}

std::string backend_name(core::Backend backend) {
    return backend == core::Backend::libvirt ? "libvirt" : "qemu";
}

std::string node_name() {
    char name[256] = {};
    ::gethostname(name, sizeof name - 1);
    return name;
}

} // namespace

Expected<void> write_job(const fs::path& path, const SampleJob& job) {
    return write_json(path, {{"format", k_job_format},
                             {"cell", json::parse(core::encode(job.cell))},
                             {"repetition", job.repetition},
                             {"kernel_id", job.kernel_id},
                             {"boot_image", job.boot_image.string()},
                             {"base_initrd", job.base_initrd.string()},
                             {"dir", job.dir.string()},
                             {"hypervisor", backend_name(job.hypervisor)},
                             {"uri", job.uri},
                             {"attempt", job.attempt},
                             {"record", job.record.string()}});
}

Expected<SampleJob> read_job(const fs::path& path) {
    json value = RIG_TRY(read_json(path, k_job_format));
    // nlohmann reports a missing or mistyped field by exception; it stops here.
    try {
        SampleJob job;
        job.cell = RIG_TRY(core::decode_cell_record(value.at("cell").dump(), path.string()));
        job.repetition = value.at("repetition").get<int>();
        job.kernel_id = value.at("kernel_id").get<std::string>();
        job.boot_image = value.at("boot_image").get<std::string>();
        job.base_initrd = value.at("base_initrd").get<std::string>();
        job.dir = value.at("dir").get<std::string>();
        std::string hypervisor = value.at("hypervisor").get<std::string>();
        if (hypervisor != "qemu" && hypervisor != "libvirt")
            return fail(ErrorKind::usage, path.string() + ": hypervisor '" + hypervisor +
                                              "' is neither qemu nor libvirt");
        job.hypervisor = hypervisor == "libvirt" ? core::Backend::libvirt : core::Backend::qemu;
        job.uri = value.at("uri").get<std::string>();
        job.attempt = value.at("attempt").get<int>();
        job.record = value.at("record").get<std::string>();
        return job;
    } catch (const json::exception& e) {
        return fail(ErrorKind::usage, path.string() + ": not a rig job file: " + e.what());
    }
}

Expected<void> write_record(const fs::path& path, const core::Sample& sample,
                            const std::string& node) {
    // The sample's own fields beside the record's two: the file reads as it always has.
    json value{{"format", k_record_format}, {"node", node}};
    value.update(json::parse(core::encode(sample)));
    return write_json(path, value);
}

Expected<core::Sample> read_record(const fs::path& path) {
    json value = RIG_TRY(read_json(path, k_record_format));
    // Every field a worker of this format writes must be there: a record without one was
    // not written by rig. Fields added since read as their defaults from older workers.
    static const std::set<std::string_view> k_added_since_format_1 = {"cpus", "outputs", "machine"};
    core::Sample sample;
    std::string missing;
    core::fields(sample, [&](const char* name, const auto&) {
        if (missing.empty() && !value.contains(name) && !k_added_since_format_1.contains(name))
            missing = name;
    });
    if (!missing.empty())
        return fail(ErrorKind::infra, path.string() + ": not a whole record: no " + missing);
    return core::decode_sample(value.dump(), path.string());
}

Expected<core::Sample> run_job(const SampleJob& job, const std::atomic<bool>& interrupted) {
    core::Scenario scenario = sample_scenario(job.cell);
    const core::Cell& cell = job.cell.cell;
    kernel::Artifact kernel;
    kernel.id = job.kernel_id;
    kernel.boot_image = job.boot_image;
    std::unique_ptr<vm::Hypervisor> hypervisor = job.hypervisor == core::Backend::libvirt
                                                     ? vm::make_libvirt_hypervisor(job.uri)
                                                     : vm::make_qemu_hypervisor();
    // The node's own probe and accelerator: a cluster's nodes need not match the
    // coordinator. The answer is kept per node in the node's cache.
    auto accel = host::choose_accel(scenario.guest.accel, kernel::default_cache_dir());
    // The guest root from the node's own /usr and /etc, as its QEMU shares them.
    auto root = accel ? guest::prepare_guest_root(kernel::default_cache_dir())
                      : Expected<guest::GuestRoot>(tl::unexpected(accel.error()));
    core::Sample sample;
    if (!root) {
        sample.cell_id = cell.id;
        sample.repetition = job.repetition;
        sample.kernel_artifact = job.kernel_id;
        sample.outcome = core::Outcome::infra_error;
        sample.evidence = root.error().message + " on " + node_name() + "\n";
    } else {
        SampleContext context{
            scenario,    cell,        job.repetition, kernel,  job.base_initrd, job.dir, *accel,
            *hypervisor, interrupted, nullptr,        nullptr, nullptr,         {},      *root};
        // A full folder here is the sample's evidence; the coordinator reads it as such.
        sample = run_sample(context).sample;
    }
    RIG_TRY(write_record(job.record, sample, node_name()));
    return sample;
}

} // namespace rig::run
