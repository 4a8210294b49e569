// SPDX-License-Identifier: MIT
// Mail headers and mbox bodies.
#include "util/mail.hpp"

#include "util/base64.hpp"
#include "util/strings.hpp"

#include <ctime>

namespace rig::util {

// The domain of "Name <user@domain>".
std::string domain_of(const std::string& address) {
    size_t at = address.rfind('@');
    if (at == std::string::npos)
        return "localhost";
    std::string domain = address.substr(at + 1);
    if (size_t end = domain.find('>'); end != std::string::npos)
        domain.resize(end);
    return domain.empty() ? "localhost" : domain;
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

} // namespace rig::util
