// SPDX-License-Identifier: MIT
// What an RFC 5322 message in an mbox file needs of its text: headers that any mail reader
// takes (RFC 2047 words, quoted names, the date), and a body an mbox reader splits right.
#pragma once

#include <chrono>
#include <string>

namespace rig::util {

// RFC 2047: a header value with bytes outside ASCII as one UTF-8 encoded-word.
std::string header_value(const std::string& text);
// "Name <user@host>" with the name encoded so, or quoted when it holds specials.
std::string address_value(const std::string& address);
// "Fri, 04 Dec 2026 15:23:05 +0000"
std::string rfc5322_date(std::chrono::system_clock::time_point time);
// The domain of "Name <user@domain>"; localhost when it has none.
std::string domain_of(const std::string& address);
// The body with each line that an mbox reader would take for the next message's "From "
// quoted (mboxrd), and one newline at its end.
std::string mbox_body(const std::string& body);

} // namespace rig::util
