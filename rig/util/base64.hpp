// SPDX-License-Identifier: MIT
// Base64 decoding of the guest agent's payloads.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace rig::util {

// Standard base64 with padding, one line.
std::string base64_encode(std::string_view data);
// nullopt for text that is not canonical base64 (bad characters, bad length).
std::optional<std::string> base64_decode(std::string_view text);

} // namespace rig::util
