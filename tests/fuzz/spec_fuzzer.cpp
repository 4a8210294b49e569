// SPDX-License-Identifier: MIT
// libFuzzer entry: any bytes given to parse_scenario must yield a Scenario or an Error.
#include "core/matrix.hpp"
#include "spec/spec.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string_view text(reinterpret_cast<const char*>(data), size);
    auto scenario = rig::spec::parse_scenario(text, "fuzz.yaml");
    if (scenario) {
        // parse already expanded once; the caller expands again, so must this.
        auto cells = rig::core::expand(*scenario);
        if (!cells)
            __builtin_trap(); // parse accepted a scenario that expand rejects
    }
    return 0;
}
