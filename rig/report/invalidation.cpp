// SPDX-License-Identifier: MIT
// The invalidation table.
#include "report/invalidation.hpp"

#include "core/stats.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <optional>
#include <set>

namespace rig::report {

namespace {

constexpr std::string_view k_inode_prefix = "inval_inode_us_";
constexpr std::string_view k_epoch_prefix = "inval_epoch_us_";

struct CellFigures {
    std::map<size_t, std::vector<double>> per_inode; // inode count -> sample values
    std::map<size_t, std::vector<double>> epoch;
    std::vector<double> epoch_supported;
    std::vector<double> rounds;
    std::vector<double> proto_minor;
    size_t samples = 0;
};

std::optional<size_t> count_after(std::string_view name, std::string_view prefix) {
    if (name.substr(0, prefix.size()) != prefix || name.size() == prefix.size())
        return std::nullopt;
    size_t count = 0;
    for (char c : name.substr(prefix.size())) {
        if (c < '0' || c > '9')
            return std::nullopt;
        count = count * 10 + static_cast<size_t>(c - '0');
    }
    return count;
}

std::string micros_text(const std::vector<double>& values) {
    core::Summary summary = core::summarize(values);
    std::string text = fmt::format("{:.0f} us", summary.median);
    if (summary.n > 1)
        text += fmt::format(" (n={})", summary.n);
    return text;
}

// The seed's layout: dashes and '+' between columns, '|' around cells.
std::string rule(const std::vector<size_t>& widths) {
    std::string line = "|";
    for (size_t i = 0; i < widths.size(); ++i)
        line += std::string(widths[i] + 2, '-') + (i + 1 < widths.size() ? "+" : "|");
    return line + "\n";
}

std::string row(const std::vector<std::string>& cells, const std::vector<size_t>& widths) {
    std::string line = "|";
    for (size_t i = 0; i < cells.size(); ++i)
        line += " " + fmt::format("{:<{}}", cells[i], widths[i]) + " |";
    return line + "\n";
}

// Display width: "µ" is two bytes but one column.
size_t width_of(const std::string& text) {
    size_t width = 0;
    for (unsigned char c : text)
        width += (c & 0xC0) != 0x80;
    return width;
}

// The benchmark's figures of each cell's samples, merged; `counts` gains every inode count
// seen. A sample without per-inode figures did not run the benchmark and is left out.
std::map<std::string, CellFigures> figures_by_cell(const std::vector<core::Sample>& samples,
                                                   std::set<size_t>& counts) {
    std::map<std::string, CellFigures> by_cell;
    for (const core::Sample& sample : samples) {
        CellFigures figures;
        bool any = false;
        for (const core::Metric& metric : sample.metrics) {
            if (auto count = count_after(metric.name, k_inode_prefix)) {
                figures.per_inode[*count].push_back(metric.value);
                counts.insert(*count);
                any = true;
            } else if (auto epoch_count = count_after(metric.name, k_epoch_prefix)) {
                figures.epoch[*epoch_count].push_back(metric.value);
                counts.insert(*epoch_count);
            } else if (metric.name == "inval_epoch_supported") {
                figures.epoch_supported.push_back(metric.value);
            } else if (metric.name == "inval_rounds") {
                figures.rounds.push_back(metric.value);
            } else if (metric.name == "fuse_proto_minor") {
                figures.proto_minor.push_back(metric.value);
            }
        }
        if (!any)
            continue;
        CellFigures& merged = by_cell[sample.cell_id];
        ++merged.samples;
        auto append = [](std::vector<double>& to, const std::vector<double>& from) {
            to.insert(to.end(), from.begin(), from.end());
        };
        for (const auto& [count, values] : figures.per_inode)
            append(merged.per_inode[count], values);
        for (const auto& [count, values] : figures.epoch)
            append(merged.epoch[count], values);
        append(merged.epoch_supported, figures.epoch_supported);
        append(merged.rounds, figures.rounds);
        append(merged.proto_minor, figures.proto_minor);
    }
    return by_cell;
}

} // namespace

std::string render_invalidation(const std::vector<core::Cell>& cells,
                                const std::vector<core::Sample>& samples) {
    std::set<size_t> counts;
    std::map<std::string, CellFigures> by_cell = figures_by_cell(samples, counts);
    if (by_cell.empty())
        return {};

    std::vector<std::string> header{"kernel", "method"};
    for (size_t count : counts)
        header.push_back(fmt::format("{} inodes", count));
    std::vector<std::vector<std::string>> body;
    std::set<double> rounds;
    for (const core::Cell& cell : cells) {
        auto it = by_cell.find(cell.id);
        if (it == by_cell.end())
            continue;
        const CellFigures& figures = it->second;
        rounds.insert(figures.rounds.begin(), figures.rounds.end());
        std::string kernel = cell.kernel_name;
        if (!figures.proto_minor.empty())
            kernel += fmt::format(" (FUSE 7.{:.0f})", figures.proto_minor.front());
        std::vector<std::string> inode_row{kernel, "NOTIFY_INVAL_*"};
        std::vector<std::string> epoch_row{"", "NOTIFY_INC_EPOCH"};
        // One sample saying "0" means the kernel lacks it; no figure is shown then.
        bool unsupported =
            std::any_of(figures.epoch_supported.begin(), figures.epoch_supported.end(),
                        [](double value) { return value == 0; });
        for (size_t count : counts) {
            auto inode = figures.per_inode.find(count);
            inode_row.push_back(inode == figures.per_inode.end() ? "-"
                                                                 : micros_text(inode->second));
            auto epoch = figures.epoch.find(count);
            epoch_row.push_back(unsupported                    ? "unsupported"
                                : epoch == figures.epoch.end() ? "-"
                                                               : micros_text(epoch->second));
        }
        body.push_back(std::move(inode_row));
        body.push_back(std::move(epoch_row));
    }

    std::vector<size_t> widths(header.size(), 0);
    for (size_t i = 0; i < header.size(); ++i)
        widths[i] = width_of(header[i]);
    for (const auto& line : body)
        for (size_t i = 0; i < line.size(); ++i)
            widths[i] = std::max(widths[i], width_of(line[i]));

    std::string rounds_text =
        rounds.size() == 1 ? fmt::format("{:.0f} rounds", *rounds.begin()) : "rounds";
    std::string out = "cache invalidation, µs per full round (mean of " + rounds_text +
                      "; median over samples when n>1)\n";
    out += rule(widths) + row(header, widths) + rule(widths);
    for (const auto& line : body)
        out += row(line, widths);
    out += rule(widths);
    return out;
}

} // namespace rig::report
