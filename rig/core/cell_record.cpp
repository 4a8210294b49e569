// SPDX-License-Identifier: MIT
// The cell record's one codec: each type's fields are listed once, below.
#include "core/cell_record.hpp"

#include "util/json.hpp"

namespace rig::core {

NLOHMANN_JSON_SERIALIZE_ENUM(KernelSource, {{KernelSource::debian, "debian"},
                                            {KernelSource::image, "image"},
                                            {KernelSource::git, "git"}})
NLOHMANN_JSON_SERIALIZE_ENUM(WorkloadKind, {{WorkloadKind::generate, "generate"},
                                            {WorkloadKind::tree, "tree"},
                                            {WorkloadKind::command, "command"},
                                            {WorkloadKind::module, "module"},
                                            {WorkloadKind::readback, "readback"}})
NLOHMANN_JSON_SERIALIZE_ENUM(Change, {{Change::rewrite, "rewrite"},
                                      {Change::append, "append"},
                                      {Change::rename, "rename"},
                                      {Change::remove, "delete"}})
NLOHMANN_JSON_SERIALIZE_ENUM(Accel, {{Accel::auto_detect, "auto"},
                                     {Accel::kvm, "kvm"},
                                     {Accel::tcg, "tcg"}})

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Loc, line, column)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Kernel, name, source, package, flavour, image,
                                                modules, build, repo, ref, config, patches, options,
                                                series, loc, path)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(GenerateParams, units, headers, functions)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(WorkloadPhase, name, command)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(ReadbackParams, files, bytes)
// The window in milliseconds, as the timeouts below.
void to_json(util::SortedJson& json, const CoherencyParams& params) {
    json = {{"changes", params.changes}, {"window_ms", params.window.count()}};
}

void from_json(const util::SortedJson& json, CoherencyParams& params) {
    CoherencyParams defaults;
    params.changes = json.value("changes", defaults.changes);
    params.window = std::chrono::milliseconds(json.value("window_ms", defaults.window.count()));
}

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Workload, kind, generate, tree, command, phases,
                                                module, module_params, readback, coherency, outputs,
                                                check_after)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Guest, memory_mib, cpus, accel, count_9p,
                                                scratch_bytes, host_paths, share_limit, profile)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Cell, id, key, kernel, kernel_name, params, config,
                                                fragments, canonical)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(StoredFile, name, sha256, text)

// Milliseconds, so that every timeout round-trips exactly.
void to_json(util::SortedJson& json, const Timeouts& timeouts) {
    json = {{"boot_ms", timeouts.boot.count()},
            {"workload_ms", timeouts.workload.count()},
            {"silence_ms", timeouts.silence.count()}};
}

void from_json(const util::SortedJson& json, Timeouts& timeouts) {
    Timeouts defaults;
    auto read = [&](const char* key, std::chrono::milliseconds fallback) {
        return std::chrono::milliseconds(json.value(key, fallback.count()));
    };
    timeouts.boot = read("boot_ms", defaults.boot);
    timeouts.workload = read("workload_ms", defaults.workload);
    timeouts.silence = read("silence_ms", defaults.silence);
}

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(CellRecord, cell, kernel, commit, fragments,
                                                patches, series, series_cover, workload, guest,
                                                timeouts)

std::string encode(const CellRecord& record) {
    return util::SortedJson(record).dump(-1, ' ', false,
                                         util::SortedJson::error_handler_t::replace);
}

Expected<CellRecord> decode_cell_record(std::string_view json, const std::string& what) {
    try {
        return util::SortedJson::parse(json).get<CellRecord>();
    } catch (const util::SortedJson::exception& error) {
        return fail(ErrorKind::infra,
                    what + ": the stored cell is unreadable (" + std::string(error.what()) + ")");
    }
}

} // namespace rig::core
