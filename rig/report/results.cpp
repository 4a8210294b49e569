// SPDX-License-Identifier: MIT
// The results table of one run, through the one renderer.
#include "report/results.hpp"

#include "report/data.hpp"

namespace rig::report {

std::string render_results(const std::vector<core::Cell>& cells,
                           const std::vector<core::Sample>& samples) {
    // Plain text without a baseline or pivot has no key to get wrong: it cannot fail.
    auto text = render(from_samples(cells, samples), RenderOptions{});
    return text ? *text : text.error().message + "\n";
}

} // namespace rig::report
