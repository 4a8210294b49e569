// SPDX-License-Identifier: MIT
// Debian kernel names resolved with apt-cache, whose output is parsed by the pure
// functions at the top so that the tests need no archive.
#include "kernel/debian.hpp"

#include "proc/process.hpp"
#include "util/strings.hpp"

#include <algorithm>
#include <cctype>
#include <regex>

namespace rig::kernel {

namespace {

// linux-image-<series>.<N><-ABI | +debNN>-<flavour>[-unsigned]; -dbg packages carry no
// bootable image and do not match.
const std::regex k_image_name(
    R"(linux-image-([0-9]+\.[0-9]+)\.[0-9]+(?:-[0-9]+|\+deb[0-9]+)-([a-z0-9-]+?)(-unsigned)?)");

struct ImageName {
    std::string series;
    std::string flavour;
    bool unsigned_image = false;
};

std::optional<ImageName> parse_image_name(std::string_view package) {
    std::match_results<std::string_view::const_iterator> match;
    if (!std::regex_match(package.begin(), package.end(), match, k_image_name) ||
        match[2].str().ends_with("-dbg"))
        return std::nullopt;
    return ImageName{"linux-image-" + match[1].str(), match[2].str(), match[3].matched};
}

// Compares digit runs as numbers and everything else as text: 6.1.0-57 after 6.1.0-9.
int natural_compare(std::string_view a, std::string_view b) {
    size_t i = 0, j = 0;
    while (i < a.size() && j < b.size()) {
        if (std::isdigit(static_cast<unsigned char>(a[i])) &&
            std::isdigit(static_cast<unsigned char>(b[j]))) {
            size_t i_end = i, j_end = j;
            while (i_end < a.size() && std::isdigit(static_cast<unsigned char>(a[i_end])))
                ++i_end;
            while (j_end < b.size() && std::isdigit(static_cast<unsigned char>(b[j_end])))
                ++j_end;
            std::string_view x = a.substr(i, i_end - i), y = b.substr(j, j_end - j);
            while (x.size() > 1 && x.front() == '0')
                x.remove_prefix(1);
            while (y.size() > 1 && y.front() == '0')
                y.remove_prefix(1);
            if (x.size() != y.size())
                return x.size() < y.size() ? -1 : 1;
            if (int c = x.compare(y); c != 0)
                return c < 0 ? -1 : 1;
            i = i_end;
            j = j_end;
            continue;
        }
        if (a[i] != b[j])
            return a[i] < b[j] ? -1 : 1;
        ++i;
        ++j;
    }
    return (i < a.size()) - (j < b.size());
}

std::string_view without_unsigned(std::string_view package) {
    constexpr std::string_view k_suffix = "-unsigned";
    if (package.ends_with(k_suffix))
        package.remove_suffix(k_suffix.size());
    return package;
}

Expected<std::string> apt_cache(const std::vector<std::string>& arguments) {
    std::vector<std::string> argv{"apt-cache"};
    argv.insert(argv.end(), arguments.begin(), arguments.end());
    proc::RunOptions options;
    options.timeout = std::chrono::minutes(2);
    // apt's messages are parsed: English, whatever the user's locale.
    options.env = {{"LC_ALL", "C"}};
    auto result = RIG_TRY(proc::run(argv, options));
    if (result.exit_code != 0)
        return fail(ErrorKind::infra,
                    util::join(argv, " ") + " failed: " + std::string(util::trim(result.err)));
    return result.out;
}

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> lines;
    for (const std::string& line : util::split(text, '\n'))
        if (!util::trim(line).empty())
            lines.emplace_back(util::trim(line));
    return lines;
}

// The image packages of `series` in `flavour` that apt can download, package -> version.
Expected<std::map<std::string, std::string>> downloadable(const std::string& series,
                                                          const std::string& flavour) {
    std::vector<std::string> names;
    for (const std::string& name : lines_of(RIG_TRY(apt_cache({"pkgnames", series + "."}))))
        if (in_debian_series(name, series, flavour))
            names.push_back(name);
    if (names.empty())
        return std::map<std::string, std::string>{};
    std::vector<std::string> policy{"policy"};
    policy.insert(policy.end(), names.begin(), names.end());
    return parse_apt_policy(RIG_TRY(apt_cache(policy)));
}

// Newest first.
std::vector<std::string> by_age(const std::map<std::string, std::string>& packages) {
    std::vector<std::string> names;
    for (const auto& [name, version] : packages)
        names.push_back(name);
    std::sort(names.begin(), names.end(),
              [](const std::string& a, const std::string& b) { return newer_image(a, b); });
    return names;
}

Expected<std::string> archive_series_text() {
    auto series = series_among(lines_of(RIG_TRY(apt_cache({"pkgnames", "linux-image-"}))));
    return series.empty() ? std::string("none (are apt's lists there? apt-get update)")
                          : util::join(series, ", ");
}

Expected<DebianPackage> resolve_series(const std::string& series, const std::string& flavour) {
    auto packages = RIG_TRY(downloadable(series, flavour));
    if (packages.empty())
        return fail(ErrorKind::config, "the Debian archive has no " + series +
                                           " package of flavour " + flavour +
                                           "; its series: " + RIG_TRY(archive_series_text()));
    std::string newest = by_age(packages).front();
    return DebianPackage{newest, packages.at(newest)};
}

// A name apt does not know: say which names its series has, newest first, and how to
// follow the series instead of one upload of it.
Expected<Error> unknown_package(const std::string& name) {
    std::string message = "Debian has no package " + name + " (apt-cache knows no such name)";
    auto image = parse_image_name(name);
    if (!image)
        return Error{ErrorKind::config, message + "; kernel series the archive has: " +
                                            RIG_TRY(archive_series_text()) +
                                            " (write e.g. debian: linux-image-6.1)"};
    auto packages = RIG_TRY(downloadable(image->series, image->flavour));
    if (packages.empty())
        return Error{ErrorKind::config, message + "; kernel series the archive has: " +
                                            RIG_TRY(archive_series_text())};
    // An -unsigned twin says nothing new.
    std::vector<std::string> names;
    for (const std::string& candidate : by_age(packages))
        if (!candidate.ends_with("-unsigned") ||
            !packages.contains(std::string(without_unsigned(candidate))))
            names.push_back(candidate);
    const size_t all = names.size();
    if (names.size() > 6)
        names.resize(6);
    return Error{
        ErrorKind::config,
        message + ": Debian replaces kernel ABI names at point releases. " + image->series +
            " has " + util::join(names, ", ") +
            (all > names.size() ? " and " + std::to_string(all - names.size()) + " older" : "") +
            ". Write `debian: " + image->series + "`" +
            (image->flavour == k_default_flavour ? "" : " with `flavour: " + image->flavour + "`") +
            " to follow the series."};
}

std::string field(std::string_view show_text, std::string_view name) {
    std::string result;
    util::for_each_line(show_text, [&](std::string_view line) {
        if (result.empty() && util::starts_with(line, name) && line.size() > name.size() &&
            line[name.size()] == ':')
            result = std::string(util::trim(line.substr(name.size() + 1)));
    });
    return result;
}

} // namespace

std::optional<std::string> debian_series_of(std::string_view package) {
    auto image = parse_image_name(package);
    if (!image)
        return std::nullopt;
    return image->series;
}

bool in_debian_series(std::string_view package, std::string_view series, std::string_view flavour) {
    auto image = parse_image_name(package);
    return image && image->series == series && image->flavour == flavour;
}

std::map<std::string, std::string> parse_apt_policy(std::string_view text) {
    std::map<std::string, std::string> out;
    std::string package;
    util::for_each_line(text, [&](std::string_view line) {
        if (!line.empty() && line.front() != ' ' && line.back() == ':') {
            package = std::string(line.substr(0, line.size() - 1));
            return;
        }
        std::string_view trimmed = util::trim(line);
        constexpr std::string_view k_candidate = "Candidate:";
        if (!package.empty() && util::starts_with(trimmed, k_candidate)) {
            std::string version(util::trim(trimmed.substr(k_candidate.size())));
            if (!version.empty() && version != "(none)")
                out[package] = version;
            package.clear();
        }
    });
    return out;
}

std::vector<std::string> image_dependencies(std::string_view show_text) {
    std::vector<std::string> out;
    for (const std::string& alternatives : util::split(field(show_text, "Depends"), ',')) {
        // "linux-image-6.1.0-57-amd64 (= 6.1.192-3)" or "a | b": the first name counts.
        std::string first = util::split(alternatives, '|').front();
        std::string name(util::trim(first.substr(0, first.find('('))));
        if (util::starts_with(name, "linux-image-"))
            out.push_back(name);
    }
    return out;
}

std::vector<std::string> header_dependencies(std::string_view show_text) {
    std::vector<std::string> out;
    for (const std::string& alternatives : util::split(field(show_text, "Depends"), ',')) {
        std::string first = util::split(alternatives, '|').front();
        std::string name(util::trim(first.substr(0, first.find('('))));
        if (util::starts_with(name, "linux-headers-") || util::starts_with(name, "linux-kbuild-"))
            out.push_back(name);
    }
    return out;
}

Expected<std::vector<std::string>> headers_packages(const std::string& release) {
    std::string headers = "linux-headers-" + release;
    std::string show = RIG_TRY(apt_cache({"show", "--no-all-versions", headers}));
    std::vector<std::string> packages{headers};
    for (std::string& dependency : header_dependencies(show))
        packages.push_back(std::move(dependency));
    if (packages.size() < 3)
        return fail(ErrorKind::infra, headers +
                                          " depends on no linux-headers-*-common and "
                                          "linux-kbuild-* package; apt-cache show says: " +
                                          show.substr(0, 2000));
    return packages;
}

bool newer_image(std::string_view a, std::string_view b) {
    if (int order = natural_compare(without_unsigned(a), without_unsigned(b)); order != 0)
        return order > 0;
    return !a.ends_with("-unsigned") && b.ends_with("-unsigned");
}

std::vector<std::string> series_among(const std::vector<std::string>& packages) {
    std::vector<std::string> series;
    for (const std::string& package : packages)
        if (auto image = parse_image_name(package))
            series.push_back(image->series);
    std::sort(series.begin(), series.end(),
              [](const std::string& a, const std::string& b) { return natural_compare(a, b) < 0; });
    series.erase(std::unique(series.begin(), series.end()), series.end());
    return series;
}

Expected<std::string> archive_sha256(const std::string& package) {
    std::string sha256 =
        field(RIG_TRY(apt_cache({"show", "--no-all-versions", package})), "SHA256");
    if (sha256.empty())
        return fail(ErrorKind::infra, "apt-cache show " + package + " gives no SHA256");
    return sha256;
}

Expected<DebianPackage> resolve_debian(const std::string& name, const std::string& flavour) {
    if (core::is_debian_series(name))
        return resolve_series(name, flavour.empty() ? std::string(k_default_flavour) : flavour);
    // A metapackage depends on one image package, which may itself be a metapackage
    // (linux-image-amd64 -> linux-image-6.1.0-57-amd64); a few hops are enough.
    std::string current = name;
    for (int hop = 0; hop < 4; ++hop) {
        auto show = apt_cache({"show", "--no-all-versions", current});
        if (!show || util::trim(*show).empty())
            return tl::unexpected(RIG_TRY(unknown_package(current)));
        auto targets = image_dependencies(*show);
        if (parse_image_name(current) || targets.size() != 1)
            return DebianPackage{current, field(*show, "Version")};
        current = targets.front();
    }
    return fail(ErrorKind::config, "Debian package " + name +
                                       " leads through more than four metapackages to no image");
}

} // namespace rig::kernel
