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

json lines_json(const std::vector<core::ErrorLine>& lines) {
    json out = json::array();
    for (const core::ErrorLine& line : lines)
        out.push_back({{"severity", line.severity == core::Severity::error ? "error" : "warning"},
                       {"source", line.source},
                       {"line", line.line},
                       {"signature", line.signature}});
    return out;
}

json metrics_json(const std::vector<core::Metric>& metrics) {
    json out = json::array();
    for (const core::Metric& metric : metrics)
        out.push_back({{"name", metric.name}, {"value", metric.value}, {"unit", metric.unit}});
    return out;
}

core::Sample sample_from(const json& value) {
    core::Sample sample;
    sample.cell_id = value.at("cell_id").get<std::string>();
    sample.repetition = value.at("repetition").get<int>();
    sample.outcome = core::parse_outcome(value.at("outcome").get<std::string>())
                         .value_or(core::Outcome::infra_error);
    sample.accel = value.at("accel").get<std::string>();
    sample.kernel_artifact = value.at("kernel_artifact").get<std::string>();
    sample.guest_seconds = value.at("guest_seconds").get<double>();
    sample.wall_seconds = value.at("wall_seconds").get<double>();
    sample.total_seconds = value.at("total_seconds").get<double>();
    sample.qemu_cpu_seconds = value.at("qemu_cpu_seconds").get<double>();
    sample.helper_cpu_seconds = value.at("helper_cpu_seconds").get<double>();
    sample.host_cpu_seconds = value.at("host_cpu_seconds").get<double>();
    sample.host_cpu_percent = value.at("host_cpu_percent").get<double>();
    sample.mount_requested = value.at("mount_requested").get<std::string>();
    sample.mount_negotiated = value.at("mount_negotiated").get<std::string>();
    if (!value.at("msize_negotiated").is_null())
        sample.msize_negotiated = value.at("msize_negotiated").get<uint64_t>();
    sample.cache_negotiated = value.at("cache_negotiated").get<std::string>();
    sample.exit_status = value.at("exit_status").get<int>();
    sample.error_count = value.at("error_count").get<int>();
    sample.warning_count = value.at("warning_count").get<int>();
    sample.evidence = value.at("evidence").get<std::string>();
    sample.started_at = value.at("started_at").get<std::string>();
    sample.cpus = value.value("cpus", std::string());
    for (const json& line : value.at("lines"))
        sample.lines.push_back(
            {line.at("severity").get<std::string>() == "error" ? core::Severity::error
                                                               : core::Severity::warning,
             line.at("source").get<std::string>(), line.at("line").get<std::string>(),
             line.at("signature").get<std::string>()});
    for (const json& metric : value.at("metrics"))
        sample.metrics.push_back({metric.at("name").get<std::string>(),
                                  metric.at("value").get<double>(),
                                  metric.at("unit").get<std::string>()});
    return sample;
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
    json value{{"format", k_record_format},
               {"node", node},
               {"cell_id", sample.cell_id},
               {"repetition", sample.repetition},
               {"outcome", std::string(core::to_string(sample.outcome))},
               {"accel", sample.accel},
               {"kernel_artifact", sample.kernel_artifact},
               {"guest_seconds", sample.guest_seconds},
               {"wall_seconds", sample.wall_seconds},
               {"total_seconds", sample.total_seconds},
               {"qemu_cpu_seconds", sample.qemu_cpu_seconds},
               {"helper_cpu_seconds", sample.helper_cpu_seconds},
               {"host_cpu_seconds", sample.host_cpu_seconds},
               {"host_cpu_percent", sample.host_cpu_percent},
               {"mount_requested", sample.mount_requested},
               {"mount_negotiated", sample.mount_negotiated},
               {"msize_negotiated",
                sample.msize_negotiated ? json(*sample.msize_negotiated) : json(nullptr)},
               {"cache_negotiated", sample.cache_negotiated},
               {"exit_status", sample.exit_status},
               {"error_count", sample.error_count},
               {"warning_count", sample.warning_count},
               {"evidence", sample.evidence},
               {"started_at", sample.started_at},
               {"cpus", sample.cpus},
               {"lines", lines_json(sample.lines)},
               {"metrics", metrics_json(sample.metrics)}};
    return write_json(path, value);
}

Expected<core::Sample> read_record(const fs::path& path) {
    json value = RIG_TRY(read_json(path, k_record_format));
    try {
        return sample_from(value);
    } catch (const json::exception& e) {
        return fail(ErrorKind::infra, path.string() + ": not a whole record: " + e.what());
    }
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
    core::Sample sample;
    if (!accel) {
        sample.cell_id = cell.id;
        sample.repetition = job.repetition;
        sample.kernel_artifact = job.kernel_id;
        sample.outcome = core::Outcome::infra_error;
        sample.evidence = accel.error().message + " on " + node_name() + "\n";
    } else {
        SampleContext context{scenario,        cell,    job.repetition, kernel,
                              job.base_initrd, job.dir, *accel,         *hypervisor,
                              interrupted,     nullptr, nullptr};
        // A full folder here is the sample's evidence; the coordinator reads it as such.
        sample = run_sample(context).sample;
    }
    RIG_TRY(write_record(job.record, sample, node_name()));
    return sample;
}

} // namespace rig::run
