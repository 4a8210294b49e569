// SPDX-License-Identifier: MIT
// The error and warning lines by signature.
#include "report/errors.hpp"

#include "report/cells.hpp"
#include "report/csv.hpp"
#include "report/table.hpp"

#include <fmt/format.h>

namespace rig::report {

using util::Json;

namespace {

std::string indent(const std::string& text, const std::string& prefix) {
    std::string out;
    size_t start = 0;
    while (start < text.size()) {
        size_t end = text.find('\n', start);
        if (end == std::string::npos)
            end = text.size();
        out += prefix + text.substr(start, end - start) + "\n";
        start = end + 1;
    }
    return out;
}

std::string severity_text(core::Severity severity) {
    return severity == core::Severity::error ? "error" : "warning";
}

std::string plural(int64_t n, const std::string& word) {
    return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

// The failures no error line explains, each with the last lines its first sample printed.
std::string failures_text(const ReportData& data, Format format) {
    const bool markdown = format == Format::markdown;
    std::string out =
        markdown ? "### failed without an error line\n\n" : "failed without an error line\n";
    for (const Failure& failure : data.failures) {
        std::string where =
            fmt::format("{}: {} in {}/{}; first in sample #{}", describe_cell(data, failure.cell),
                        core::to_string(failure.outcome), failure.samples,
                        data.cells[failure.cell].samples, failure.repetition);
        std::string lines;
        for (const std::string& line : failure.last_output)
            lines += "| " + line + "\n";
        if (lines.empty())
            lines = "(nothing printed)\n";
        out += markdown ? "- " + where + "\n\n" + indent(lines, "      ") + "\n"
                        : "  " + where + "\n" + indent(lines, "      ");
    }
    return out;
}

} // namespace

std::string signatures_text(const ReportData& data, Format format) {
    if (data.signatures.empty())
        return "no error or warning lines in the selected cells\n" +
               (data.failures.empty() ? "" : "\n" + failures_text(data, format));
    std::string out;
    const bool markdown = format == Format::markdown;
    for (const auto& group : data.signatures) {
        std::string head = fmt::format(
            "{} in {}, {}: {}", plural(group.lines, "line"), plural(group.samples, "sample"),
            plural(static_cast<int64_t>(group.cells.size()), "cell"), group.signature);
        out += markdown
                   ? "### " + severity_text(group.severity) + ": `" + group.signature + "`\n\n" +
                         plural(group.lines, "line") + " in " + plural(group.samples, "sample") +
                         ", " + plural(static_cast<int64_t>(group.cells.size()), "cell") + "\n\n"
                   : severity_text(group.severity) + "  " + head + "\n";
        for (const auto& occurrence : group.cells) {
            const CellResult& result = data.cells[occurrence.cell];
            std::string where = fmt::format(
                "{}: {} in {}/{}; first in sample #{} ({})", describe_cell(data, occurrence.cell),
                plural(occurrence.lines, "line"), occurrence.samples, result.samples,
                occurrence.repetition, or_dash(occurrence.source));
            if (markdown)
                out += "- " + where + "\n\n" + indent(occurrence.excerpt, "      ") + "\n";
            else
                out += "  " + where + "\n" + indent(occurrence.excerpt, "      ");
        }
        if (!markdown)
            out += "\n";
    }
    if (!data.failures.empty())
        return out + failures_text(data, format);
    if (!markdown)
        out.pop_back();
    return out;
}

std::string signatures_csv(const ReportData& data) {
    std::string out = csv_line({"severity", "signature", "case", "run", "cell", "kernel", "lines",
                                "samples", "first_repetition", "first_source", "first_line"});
    for (const auto& group : data.signatures)
        for (const auto& occurrence : group.cells) {
            const CellResult& result = data.cells[occurrence.cell];
            out += csv_line(
                {severity_text(group.severity), group.signature, case_name(occurrence.cell),
                 std::to_string(result.run_id), result.cell.id, result.cell.kernel_name,
                 std::to_string(occurrence.lines), std::to_string(occurrence.samples),
                 std::to_string(occurrence.repetition), occurrence.source, occurrence.line});
        }
    // A failure without error lines: its outcome stands where a signature would, and
    // why_not_ok where the first line would.
    for (const Failure& failure : data.failures) {
        const CellResult& result = data.cells[failure.cell];
        out += csv_line({"failed", std::string(core::to_string(failure.outcome)),
                         case_name(failure.cell), std::to_string(result.run_id), result.cell.id,
                         result.cell.kernel_name, "0", std::to_string(failure.samples),
                         std::to_string(failure.repetition), "", failure.why});
    }
    return out;
}

Json signatures_json(const ReportData& data) {
    Json out = Json::array();
    for (const auto& group : data.signatures) {
        Json entry;
        entry["severity"] = group.severity == core::Severity::error ? "error" : "warning";
        entry["signature"] = group.signature;
        entry["lines"] = group.lines;
        entry["samples"] = group.samples;
        entry["cells"] = Json::array();
        for (const auto& occurrence : group.cells) {
            const CellResult& result = data.cells[occurrence.cell];
            entry["cells"].push_back({{"case", case_name(occurrence.cell)},
                                      {"run", result.run_id},
                                      {"cell", result.cell.id},
                                      {"lines", occurrence.lines},
                                      {"samples", occurrence.samples},
                                      {"first",
                                       {{"repetition", occurrence.repetition},
                                        {"source", occurrence.source},
                                        {"line", occurrence.line},
                                        {"excerpt", occurrence.excerpt}}}});
        }
        out.push_back(std::move(entry));
    }
    return out;
}

Json failures_json(const ReportData& data) {
    Json out = Json::array();
    for (const Failure& failure : data.failures) {
        const CellResult& result = data.cells[failure.cell];
        out.push_back({{"case", case_name(failure.cell)},
                       {"run", result.run_id},
                       {"cell", result.cell.id},
                       {"outcome", std::string(core::to_string(failure.outcome))},
                       {"samples", failure.samples},
                       {"first", {{"repetition", failure.repetition}, {"why", failure.why}}},
                       {"last_output", failure.last_output}});
    }
    return out;
}

} // namespace rig::report
