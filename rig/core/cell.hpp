// SPDX-License-Identifier: MIT
// A cell: one point of the matrix, with a stable id derived from its canonical parameters.
#pragma once

#include "core/fs.hpp"
#include "core/scenario.hpp"
#include "util/error.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rig::core {

struct Cell {
    std::string id; // 12 hex digits of sha256(canonical)
    // The same of the canonical text with the kernel's revision (a git ref) taken out: one
    // cell of a branch across the commits it is tested at.
    std::string key;
    size_t kernel = 0; // index into Scenario::kernels
    std::string kernel_name;
    std::map<std::string, std::string> params; // applicable axes only, canonical values
    std::string config;                        // label: "debug", "base", "debian", "image"
    std::vector<std::string> fragments;        // git kernels: fragments in apply order
    std::string canonical;

    // The row of the cell's `fs`; the default one for a cell without.
    const Filesystem& fs() const;
    std::optional<uint64_t> msize() const;
    std::string cache() const; // "" = the filesystem's default
    std::string param(const std::string& axis) const;
    // The axis values as "key=value", in key order.
    std::vector<std::string> param_pairs() const;
    // What a person reads for the cell: kernel, config and the key=value pairs.
    std::string label() const;
};

// The cell of `cells` that differs from `cell` only in `axis`, where it has `value` (the
// cache=none twin a cell's outputs are held against); nullptr when there is none, or when
// `cell` has that value itself.
const Cell* twin_of(const Cell& cell, const std::vector<Cell>& cells, const std::string& axis,
                    const std::string& value);

// Whether `filter`, the --cell of every subcommand, names `cell`: a cell id or its prefix,
// or KEY=VALUE[,KEY=VALUE...] on kernel, config, cell or an axis, every pair matching. A
// pair without '=' is a usage error.
Expected<bool> cell_matches(const Cell& cell, std::string_view filter);
// Whether `cell` matches one of `filters` (any cell when there are none); a filter that is
// not well formed matches nothing, so callers refuse one with cell_matches first.
bool cell_matches_any(const Cell& cell, const std::vector<std::string>& filters);

// Fills id, key, canonical, config and fragments from kernel, params and the scenario.
Cell make_cell(const Scenario& scenario, size_t kernel, std::map<std::string, std::string> params);

} // namespace rig::core
