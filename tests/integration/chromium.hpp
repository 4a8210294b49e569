// SPDX-License-Identifier: MIT
// Headless Chromium for the tests that check that rig's pages render: the DOM it built
// from a page, and a screenshot of it. Installed by scripts/install-deps.
#pragma once

#include "golden.hpp"
#include "proc/process.hpp"

#include <cstdint>
#include <filesystem>
#include <gtest/gtest.h>
#include <string>
#include <vector>

namespace rig::test {

struct Rendered {
    std::string dom;    // what --dump-dom printed: the DOM Chromium parsed and laid out
    std::string png;    // the screenshot's bytes
    uint32_t width = 0; // from its IHDR
    uint32_t height = 0;
};

// Renders `page` with a profile and home under `dir`. Failures are the test's.
inline Rendered render_in_chromium(const std::filesystem::path& page,
                                   const std::filesystem::path& dir, int width, int height) {
    Rendered rendered;
    auto chromium = rig::proc::find_program("chromium");
    EXPECT_TRUE(chromium) << "chromium is installed by scripts/install-deps";
    if (!chromium)
        return rendered;
    std::vector<std::string> common{chromium->string(),
                                    "--headless",
                                    "--no-sandbox",
                                    "--disable-gpu",
                                    "--disable-dev-shm-usage",
                                    "--disable-background-networking",
                                    "--disable-component-update",
                                    "--disable-sync",
                                    "--no-first-run",
                                    "--user-data-dir=" + (dir / "profile").string()};
    rig::proc::RunOptions options;
    options.timeout = std::chrono::minutes(2);
    options.env["HOME"] = dir.string();

    auto dump = common;
    dump.insert(dump.end(), {"--dump-dom", "file://" + page.string()});
    auto dom = rig::proc::run(dump, options);
    EXPECT_TRUE(dom && dom->exit_code == 0) << (dom ? dom->err : dom.error().message);
    if (dom)
        rendered.dom = dom->out;

    auto shot = common;
    std::filesystem::path png = dir / (page.stem().string() + ".png");
    shot.insert(shot.end(),
                {"--screenshot=" + png.string(),
                 "--window-size=" + std::to_string(width) + "," + std::to_string(height),
                 "--hide-scrollbars", "file://" + page.string()});
    auto screenshot = rig::proc::run(shot, options);
    EXPECT_TRUE(screenshot && screenshot->exit_code == 0)
        << (screenshot ? screenshot->err : screenshot.error().message);
    if (std::filesystem::exists(png))
        rendered.png = read_text(png);
    const std::string& bytes = rendered.png;
    EXPECT_GT(bytes.size(), 24u);
    if (bytes.size() > 24) {
        EXPECT_EQ(bytes.substr(1, 3), "PNG");
        auto be32 = [&](size_t at) {
            return (static_cast<uint32_t>(static_cast<unsigned char>(bytes[at])) << 24) |
                   (static_cast<uint32_t>(static_cast<unsigned char>(bytes[at + 1])) << 16) |
                   (static_cast<uint32_t>(static_cast<unsigned char>(bytes[at + 2])) << 8) |
                   static_cast<uint32_t>(static_cast<unsigned char>(bytes[at + 3]));
        };
        rendered.width = be32(16);
        rendered.height = be32(20);
    }
    return rendered;
}

} // namespace rig::test
