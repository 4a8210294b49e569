// SPDX-License-Identifier: MIT
// Base64 through OpenSSL's EVP_EncodeBlock and EVP_DecodeBlock.
#include "util/base64.hpp"

#include <openssl/evp.h>

namespace rig::util {

std::string base64_encode(std::string_view data) {
    std::string out((data.size() + 2) / 3 * 4 + 1, '\0');
    int length = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                 reinterpret_cast<const unsigned char*>(data.data()),
                                 static_cast<int>(data.size()));
    out.resize(static_cast<size_t>(length));
    return out;
}

std::optional<std::string> base64_decode(std::string_view text) {
    if (text.size() % 4 != 0)
        return std::nullopt;
    if (text.empty())
        return std::string();
    std::string out(text.size() / 4 * 3, '\0');
    int length = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                 reinterpret_cast<const unsigned char*>(text.data()),
                                 static_cast<int>(text.size()));
    if (length < 0)
        return std::nullopt;
    // EVP_DecodeBlock counts the bytes the '=' padding stands for; drop them.
    size_t padding = text.ends_with("==") ? 2 : text.ends_with("=") ? 1 : 0;
    out.resize(static_cast<size_t>(length) - padding);
    return out;
}

} // namespace rig::util
