// SPDX-License-Identifier: MIT
// What an RFC 5322 message in an mbox file needs of its text: headers that any mail reader
// takes (RFC 2047 words, quoted names, the date), and a body an mbox reader splits right.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

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

// "A U Thor <author@example.org>" as its display name (unquoted) and address; a bare
// address is both.
struct Mailbox {
    std::string name;
    std::string address;
};
Mailbox parse_mailbox(std::string_view text);
// An address list split at the commas outside quotes and angle brackets:
// "\"Thor, A\" <a@b>, c@d" is two mailboxes. Empty entries are dropped.
std::vector<std::string> split_addresses(std::string_view list);

// The headers of a message rig writes: an mbox's "From " line, then RFC 5322 headers in
// plain UTF-8 text (encoded as header_value and address_value say).
struct MessageHeaders {
    std::string envelope = "rig"; // the word after the "From " line's "From "
    std::string from;
    std::string to;
    std::vector<std::string> cc;
    std::string subject;
    std::chrono::system_clock::time_point date;
    std::string message_id;  // without the angle brackets
    std::string in_reply_to; // without the angle brackets; none when empty
    std::string references;  // as the header holds them: "<a@b> <c@d>"; none when empty
};
// One mbox message: the headers, a blank line and mbox_body(body).
std::string mbox_message(const MessageHeaders& headers, const std::string& body);

} // namespace rig::util
