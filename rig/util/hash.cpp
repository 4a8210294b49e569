// SPDX-License-Identifier: MIT
// SHA-256 through OpenSSL's EVP interface, the one libcrypto keeps stable.
#include "util/hash.hpp"

#include <array>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <memory>
#include <openssl/evp.h>
#include <unistd.h>

namespace rig::util {

namespace {

using MdContext = std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)>;

MdContext new_context() {
    MdContext ctx(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
    EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr);
    return ctx;
}

std::string finish(EVP_MD_CTX* ctx) {
    std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
    unsigned int length = 0;
    EVP_DigestFinal_ex(ctx, digest.data(), &length);
    static constexpr char k_hex[] = "0123456789abcdef";
    std::string out;
    out.reserve(length * 2);
    for (unsigned int i = 0; i < length; ++i) {
        out += k_hex[digest[i] >> 4];
        out += k_hex[digest[i] & 0xf];
    }
    return out;
}

} // namespace

std::string sha256_hex(std::string_view data) {
    auto ctx = new_context();
    EVP_DigestUpdate(ctx.get(), data.data(), data.size());
    return finish(ctx.get());
}

Expected<std::string> sha256_file(const std::filesystem::path& path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return fail(ErrorKind::infra, "cannot read " + path.string());
    auto hash = sha256_fd(fd);
    ::close(fd);
    if (!hash)
        return fail(ErrorKind::infra, hash.error().message + " on " + path.string());
    return hash;
}

Expected<std::string> sha256_fd(int fd) {
    auto ctx = new_context();
    std::array<char, 1 << 16> buffer{};
    for (;;) {
        ssize_t got = ::read(fd, buffer.data(), buffer.size());
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            return fail(ErrorKind::infra, std::string("read error: ") + std::strerror(errno));
        if (got == 0)
            break;
        EVP_DigestUpdate(ctx.get(), buffer.data(), static_cast<size_t>(got));
    }
    return finish(ctx.get());
}

} // namespace rig::util
