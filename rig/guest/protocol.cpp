// SPDX-License-Identifier: MIT
// Parsing of the agent's records.
#include "guest/protocol.hpp"

#include "core/scenario.hpp"
#include "util/base64.hpp"
#include "util/strings.hpp"

#include <charconv>
#include <cmath>

namespace rig::guest {

namespace {

// The agent's milestones (guests/README.md).
bool is_stage_name(std::string_view name) {
    return name == "channel" || name == "modules" || name == "mounted" || name == "collected";
}

// "metric NAME VALUE UNIT". Name and unit are tokens, as the agent sends them: they are
// stored and printed by every report, and JSON takes UTF-8 only. The value is finite:
// from_chars also reads "nan" and "inf", and the store refuses a NaN (SQLite would keep
// it as NULL), which would stop the run.
std::optional<core::Metric> parse_metric(const std::vector<std::string>& fields) {
    if (!is_token(fields[0]) || !is_token(fields[2]))
        return std::nullopt;
    // guests/init lets "[-+]?[0-9]..." through; from_chars takes no leading '+'.
    std::string_view text = fields[1];
    if (text.size() > 1 && text[0] == '+' && text[1] >= '0' && text[1] <= '9')
        text.remove_prefix(1);
    double value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value))
        return std::nullopt;
    return core::Metric{fields[0], value, fields[2]};
}

// Appends one decoded chunk of a base64 stream, up to `cap` bytes in all.
bool append_chunk(std::string& into, const std::string& field, size_t cap) {
    auto chunk = util::base64_decode(field);
    if (!chunk)
        return false;
    // Filling up to the cap, rather than skipping a chunk that does not fit, keeps a
    // prefix of the stream: a later short chunk cannot be spliced on after a gap.
    if (into.size() < cap)
        into.append(*chunk, 0, cap - into.size());
    return true;
}

std::optional<uint64_t> to_u64(std::string_view text) {
    uint64_t value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size())
        return std::nullopt;
    return value;
}

// A malformed record leaves what an earlier one set: an end already seen stays seen.
bool set_number(std::optional<uint64_t>& into, std::string_view text) {
    auto value = to_u64(text);
    if (value)
        into = value;
    return value.has_value();
}

// A token field is plain text, "-" for empty, or "b64:" + base64 of anything else.
std::string token(const std::string& field) {
    if (field == "-")
        return {};
    if (util::starts_with(field, "b64:"))
        return util::base64_decode(std::string_view(field).substr(4)).value_or("?");
    return field;
}

} // namespace

bool is_token(std::string_view text) {
    if (text.empty())
        return false;
    for (char c : text)
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              std::string_view("_.:/%+,=-").find(c) != std::string_view::npos))
            return false;
    return true;
}

std::vector<Record> ChannelParser::feed(std::string_view bytes) {
    std::vector<Record> records;
    for (char c : bytes) {
        if (c != '\n') {
            if (m_discarding)
                continue;
            if (m_partial.size() >= k_max_line) {
                m_discarding = true;
                m_partial.clear();
                continue;
            }
            m_partial += c;
            continue;
        }
        if (m_discarding) {
            m_discarding = false;
            ++m_junk;
            continue;
        }
        std::string_view line(m_partial);
        if (!line.empty() && line.back() == '\r')
            line.remove_suffix(1);
        if (util::starts_with(line, "RIG ")) {
            auto parts = util::split(line.substr(4), ' ');
            Record record{parts.front(), {parts.begin() + 1, parts.end()}};
            records.push_back(std::move(record));
        } else if (!line.empty()) {
            ++m_junk;
        }
        m_partial.clear();
    }
    return records;
}

void AgentReport::apply(const Record& record) {
    const auto& f = record.fields;
    const std::string& type = record.type;
    bool ok = true;
    if (type == "hello" && f.size() >= 2) {
        hello = true;
        kernel_release = token(f[1]);
    } else if (type == "boot" && !f.empty()) {
        ok = set_number(boot_ns, f[0]);
    } else if (type == "start" && f.size() == 1) {
        ok = set_number(start_ns, f[0]);
    } else if (type == "end" && f.size() == 2) {
        auto end = to_u64(f[0]), status = to_u64(f[1]);
        ok = end && status && *status < 1000;
        if (ok) {
            end_ns = end;
            exit_status = static_cast<int>(*status);
        }
    } else if (type == "phase" && f.size() == 4) {
        auto start = to_u64(f[1]), end = to_u64(f[2]), status = to_u64(f[3]);
        ok = core::is_phase_name(f[0]) && start && end && status && *status < 1000 &&
             phases.size() < k_max_phases;
        if (ok)
            phases.push_back({f[0], *start, *end, static_cast<int>(*status)});
    } else if (type == "output" && f.size() == 1) {
        ok = set_number(output_bytes, f[0]);
    } else if (type == "mounts" && f.size() == 1) {
        ok = append_chunk(mounts_text, f[0], k_max_mounts);
    } else if (type == "tail" && f.size() == 1) {
        ok = append_chunk(tail, f[0], k_max_tail);
    } else if (type == "outputs" && f.size() == 1) {
        ok = append_chunk(outputs_text, f[0], k_max_outputs);
    } else if (type == "served" && f.size() == 1) {
        ok = append_chunk(served_text, f[0], k_max_outputs);
    } else if (type == "hashed" && f.size() == 1 && (f[0] == "outputs" || f[0] == "served")) {
        (f[0] == "outputs" ? outputs_hashed : served_hashed) = true;
    } else if (type == "hashed" && f.size() == 2 && (f[0] == "outputs" || f[0] == "served")) {
        // A check's: its text moves aside, and the next check's starts empty.
        std::string& text = f[0] == "outputs" ? outputs_text : served_text;
        auto& at = f[0] == "outputs" ? outputs_at : served_at;
        ok = core::is_phase_name(f[1]) && at.size() < k_max_phases;
        if (ok)
            at.emplace(f[1], std::move(text));
        text.clear();
    } else if (type == "hash" && f.size() == 1) {
        ok = core::is_phase_name(f[0]) && hash_requests.size() < k_max_phases;
        if (ok)
            hash_requests.push_back(f[0]);
    } else if (type == "pause" && f.size() == 1) {
        auto at = to_u64(f[0]);
        ok = at && !paused() && pauses.size() < k_max_phases;
        if (ok)
            pauses.push_back({*at, std::nullopt});
    } else if (type == "resume" && f.size() == 1) {
        auto at = to_u64(f[0]);
        ok = at && paused() && *at >= pauses.back().start_ns;
        if (ok)
            pauses.back().end_ns = *at;
    } else if (type == "klog" && f.size() == 1) {
        ok = append_chunk(kernel_log, f[0], k_max_kernel_log);
    } else if (type == "metric" && f.size() == 3) {
        auto metric = parse_metric(f);
        ok = metric.has_value();
        if (ok && metrics.size() < k_max_metrics)
            metrics.push_back(std::move(*metric));
    } else if (type == "module" && f.size() >= 2) {
        if (f[1] == "fail" && module_failures.size() < k_max_module_failures)
            module_failures.push_back(token(f[0]) + ": " +
                                      (f.size() > 2 ? util::base64_decode(f[2]).value_or("") : ""));
    } else if (type == "change" && f.size() == 1) {
        ok = is_token(f[0]) && change_requests.size() < k_max_coherency;
        if (ok)
            change_requests.push_back(f[0]);
    } else if (type == "stale" && f.size() == 4) {
        auto reads = to_u64(f[1]), ns = to_u64(f[2]);
        ok = is_token(f[0]) && reads && ns && (f[3] == "0" || f[3] == "1") &&
             stale.size() < k_max_coherency;
        if (ok)
            stale.push_back({f[0], *reads, *ns, f[3] == "1"});
    } else if (type == "error" && f.size() == 2) {
        setup_error = token(f[0]) + ": " + util::base64_decode(f[1]).value_or("?");
    } else if (type == "done") {
        done = true;
    } else if (type == "stage" && f.size() == 2) {
        // A milestone of the agent's for the benchmark's breakdown of a sample's time,
        // which reads it from channel.log; the sample has no use for it.
        ok = is_stage_name(f[0]) && to_u64(f[1]).has_value();
    } else if (type == "warn") {
        // informational: an unknown job key and the like
    } else {
        ok = false;
    }
    if (!ok)
        ++malformed;
}

double AgentReport::workload_seconds() const {
    if (!start_ns || !end_ns || *end_ns < *start_ns)
        return 0;
    uint64_t paused = 0;
    for (const Pause& pause : pauses)
        if (pause.end_ns)
            paused += *pause.end_ns - pause.start_ns;
    const uint64_t span = *end_ns - *start_ns;
    return static_cast<double>(span > paused ? span - paused : 0) / 1e9;
}

std::vector<std::string> AgentReport::mounts() const {
    std::vector<std::string> lines;
    for (std::string& line : util::split(mounts_text, '\n'))
        if (!line.empty())
            lines.push_back(std::move(line));
    return lines;
}

std::optional<MountLine> find_mount(const std::vector<std::string>& mounts,
                                    std::string_view mount_point) {
    for (const std::string& line : mounts) {
        auto parts = util::split(line, ' ');
        if (parts.size() >= 4 && parts[1] == mount_point)
            return MountLine{parts[0], parts[1], parts[2], parts[3]};
    }
    return std::nullopt;
}

} // namespace rig::guest
