// SPDX-License-Identifier: MIT
// Mail headers and mbox bodies.
#include "util/mail.hpp"

#include "util/base64.hpp"
#include "util/strings.hpp"

#include <ctime>

namespace rig::util {

// The domain of "Name <user@domain>".
std::string domain_of(const std::string& address) {
    std::string mailbox = parse_mailbox(address).address;
    size_t at = mailbox.rfind('@');
    if (at == std::string::npos || at + 1 == mailbox.size())
        return "localhost";
    return mailbox.substr(at + 1);
}

// Mail wants CRLF-free lines and no line of a lone "From " that an mbox reader would take
// for the next message: such lines are quoted (mboxrd).
std::string mbox_body(const std::string& body) {
    std::string out;
    for (const std::string& line : split(body, '\n')) {
        size_t quotes = 0;
        while (quotes < line.size() && line[quotes] == '>')
            ++quotes;
        if (line.compare(quotes, 5, "From ") == 0)
            out += '>';
        out += line;
        out += '\n';
    }
    while (out.size() > 1 && out[out.size() - 1] == '\n' && out[out.size() - 2] == '\n')
        out.pop_back();
    return out;
}

std::string header_value(const std::string& text) {
    bool ascii = true;
    for (unsigned char c : text)
        ascii = ascii && c >= 0x20 && c < 0x7f;
    if (ascii)
        return text;
    return "=?UTF-8?B?" + util::base64_encode(text) + "?=";
}

std::string address_value(const std::string& address) {
    size_t open = address.find('<');
    if (open == std::string::npos)
        return address;
    std::string name = address.substr(0, open);
    while (!name.empty() && name.back() == ' ')
        name.pop_back();
    if (name.empty())
        return address.substr(open);
    std::string encoded = header_value(name);
    // A display name with specials is quoted; an encoded-word never is.
    if (encoded == name && name.front() != '"' &&
        name.find_first_of("()<>[]:;@\\,.\"") != std::string::npos)
        encoded = "\"" + name + "\"";
    return encoded + " " + address.substr(open);
}

std::string rfc5322_date(std::chrono::system_clock::time_point time) {
    std::time_t seconds = std::chrono::system_clock::to_time_t(time);
    std::tm utc{};
    gmtime_r(&seconds, &utc);
    char text[64];
    std::strftime(text, sizeof text, "%a, %d %b %Y %H:%M:%S +0000", &utc);
    return text;
}

Mailbox parse_mailbox(std::string_view text) {
    text = trim(text);
    size_t open = text.rfind('<'), close = text.rfind('>');
    if (open == std::string_view::npos || close == std::string_view::npos || close < open)
        return {std::string(text), std::string(text)};
    std::string_view name = trim(text.substr(0, open));
    if (name.size() >= 2 && name.front() == '"' && name.back() == '"')
        name = name.substr(1, name.size() - 2);
    std::string address(text.substr(open + 1, close - open - 1));
    return {name.empty() ? address : std::string(name), address};
}

std::vector<std::string> split_addresses(std::string_view list) {
    std::vector<std::string> found;
    std::string current;
    bool quoted = false, angled = false;
    auto flush = [&] {
        if (std::string_view one = trim(current); !one.empty())
            found.emplace_back(one);
        current.clear();
    };
    for (size_t i = 0; i < list.size(); ++i) {
        char c = list[i];
        if (quoted && c == '\\' && i + 1 < list.size()) {
            current += c;
            current += list[++i];
            continue;
        }
        if (c == '"' && !angled)
            quoted = !quoted;
        else if (c == '<' && !quoted)
            angled = true;
        else if (c == '>' && !quoted)
            angled = false;
        else if (c == ',' && !quoted && !angled) {
            flush();
            continue;
        }
        current += c;
    }
    flush();
    return found;
}

std::string mbox_message(const MessageHeaders& headers, const std::string& body) {
    std::string text = "From " + headers.envelope + " Mon Sep 17 00:00:00 2001\n";
    text += "From: " + address_value(headers.from) + "\n";
    text += "To: " + address_value(headers.to) + "\n";
    if (!headers.cc.empty()) {
        std::vector<std::string> cc;
        for (const std::string& address : headers.cc)
            cc.push_back(address_value(address));
        text += "Cc: " + join(cc, ",\n\t") + "\n";
    }
    text += "Subject: " + header_value(headers.subject) + "\n";
    text += "Date: " + rfc5322_date(headers.date) + "\n";
    text += "Message-ID: <" + headers.message_id + ">\n";
    if (!headers.in_reply_to.empty())
        text += "In-Reply-To: <" + headers.in_reply_to + ">\n";
    if (!headers.references.empty())
        text += "References: " + headers.references + "\n";
    text += "MIME-Version: 1.0\n";
    text += "Content-Type: text/plain; charset=UTF-8\n";
    text += "Content-Transfer-Encoding: 8bit\n";
    return text + "\n" + mbox_body(body);
}

} // namespace rig::util
