// SPDX-License-Identifier: MIT
// The metric columns of the results table.
#include "report/metrics.hpp"

#include "core/scenario.hpp"
#include "util/strings.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <limits>
#include <set>

namespace rig::report {

namespace {

constexpr size_t k_type_columns = 3;

// Totals of the share, not request types.
bool is_request_type(std::string_view name) {
    if (!name.starts_with(k_work_prefix))
        return false;
    auto type = name.substr(k_work_prefix.size());
    return !type.empty() && type != "requests" && type != "read_bytes" && type != "write_bytes";
}

struct Spread {
    std::string name;
    double ratio = 1; // highest median / lowest
    double difference = 0;
};

} // namespace

std::vector<std::string> metric_names(const ReportData& data) {
    std::set<std::string, std::less<>> names;
    for (const CellResult& result : data.cells)
        for (const auto& [name, values] : result.metrics)
            names.insert(name);
    return {names.begin(), names.end()};
}

std::string metric_unit(const ReportData& data, const std::string& metric) {
    for (const CellResult& result : data.cells)
        if (const MetricValues* values = find_metric(result, metric))
            return values->unit;
    return {};
}

std::vector<std::string> most_differing_types(const ReportData& data, size_t at_most) {
    std::vector<Spread> spreads;
    for (const auto& name : metric_names(data)) {
        if (!is_request_type(name))
            continue;
        std::vector<double> medians;
        for (const CellResult& result : data.cells)
            if (const MetricValues* values = find_metric(result, name))
                medians.push_back(values->summary.median);
        if (medians.size() < 2)
            continue;
        auto [low, high] = std::minmax_element(medians.begin(), medians.end());
        if (*low == *high)
            continue;
        // From none to some is the largest difference there is.
        double ratio = *low > 0 ? *high / *low : std::numeric_limits<double>::infinity();
        spreads.push_back({name, ratio, *high - *low});
    }
    std::sort(spreads.begin(), spreads.end(), [](const Spread& a, const Spread& b) {
        if (a.ratio != b.ratio)
            return a.ratio > b.ratio;
        if (a.difference != b.difference)
            return a.difference > b.difference;
        return a.name < b.name;
    });
    std::vector<std::string> out;
    for (size_t i = 0; i < spreads.size() && i < at_most; ++i)
        out.push_back(spreads[i].name);
    return out;
}

std::vector<MetricColumn> metric_columns(const ReportData& data,
                                         const std::vector<std::string>& chosen) {
    std::vector<MetricColumn> columns;
    if (!chosen.empty()) {
        for (const auto& metric : chosen) {
            std::string unit = metric_unit(data, metric);
            std::string title = metric;
            if (!unit.empty() && !std::string_view(metric).ends_with(unit))
                title += " (" + unit + ")";
            columns.push_back({title, metric});
        }
        return columns;
    }
    bool counted = std::any_of(data.cells.begin(), data.cells.end(), [](const CellResult& r) {
        return find_metric(r, k_work_requests) != nullptr;
    });
    if (counted)
        columns.push_back({"9p requests", std::string(k_work_requests)});
    // "9p getattr", not a bare "getattr": FUSE and virtiofs have request types of the
    // same names.
    for (const auto& type : most_differing_types(data, k_type_columns))
        columns.push_back({"9p " + type.substr(k_work_prefix.size()), type});
    return columns;
}

std::vector<std::string> table_metric_prefixes(const std::vector<std::string>& chosen) {
    // The coherency table beside the 9p table reads the probe's figures.
    if (chosen.empty())
        return {std::string(k_work_prefix), std::string(core::k_stale_prefix)};
    return chosen;
}

Expected<void> check_metrics(const std::vector<std::string>& names,
                             const std::vector<std::string>& chosen) {
    for (const auto& metric : chosen) {
        if (std::binary_search(names.begin(), names.end(), metric))
            continue;
        if (names.empty())
            return fail(ErrorKind::usage,
                        "--metric " + metric + ": no sample of the selected cells has metrics");
        std::string message = "--metric " + metric + ": no selected cell has it";
        if (std::string guess = util::closest_match(metric, names); !guess.empty())
            return fail(ErrorKind::usage, message + "; did you mean '" + guess + "'?");
        return fail(ErrorKind::usage, message + "; metrics are " + util::join(names, ", "));
    }
    return {};
}

std::string metric_median_text(const CellResult& result, const std::string& metric) {
    const MetricValues* values = find_metric(result, metric);
    return values ? metric_text(values->summary.median) : "n/a";
}

std::string metric_text(double value) {
    if (value == 0)
        return "0"; // not "-0"
    if (std::isfinite(value) && value == std::round(value) && std::fabs(value) < 1e15)
        return fmt::format("{:.0f}", value);
    if (std::fabs(value) >= 1000)
        return fmt::format("{:.1f}", value);
    return fmt::format("{:.4g}", value);
}

} // namespace rig::report
