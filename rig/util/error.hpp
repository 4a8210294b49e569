// SPDX-License-Identifier: MIT
// Error values and the Expected<T> alias every layer returns for expected failures.
#pragma once

#include <string>
#include <tl/expected.hpp>
#include <type_traits>
#include <utility>

namespace rig {

// Each kind maps to one exit code in main(); see README "Exit codes".
enum class ErrorKind {
    usage,       // bad command line
    config,      // bad scenario, fragment or option
    infra,       // QEMU, libvirt, disk, git, apt: the machinery failed
    interrupted, // Ctrl-C or SIGTERM stopped the work; a resume carries on
};

struct Error {
    ErrorKind kind = ErrorKind::infra;
    std::string message;
};

template <typename T> using Expected = tl::expected<T, Error>;

inline tl::unexpected<Error> fail(ErrorKind kind, std::string message) {
    return tl::unexpected<Error>(Error{kind, std::move(message)});
}

namespace detail {

// The value of an Expected the caller has checked, moved out; nothing for Expected<void>.
template <typename T, typename E> T take_value(tl::expected<T, E>& result) {
    if constexpr (!std::is_void_v<T>)
        return std::move(*result);
}

} // namespace detail

} // namespace rig

// Unwraps an Expected or returns its error from the enclosing function.
// A GNU statement expression keeps call sites to one line, as in ccache.
#define RIG_TRY(...)                                                                               \
    ({                                                                                             \
        auto&& rig_try_result_ = (__VA_ARGS__);                                                    \
        if (!rig_try_result_)                                                                      \
            return tl::unexpected(std::move(rig_try_result_).error());                             \
        ::rig::detail::take_value(rig_try_result_);                                                \
    })
