// SPDX-License-Identifier: MIT
// rig as `meson install` puts it in place, run from there: the installed tree, `rig
// doctor` and `rig plan` from it, rig-fuse found in its libexec folder, the man pages
// (rendered without a warning, and listing every subcommand and option `--help` lists),
// and the bash completion.
#include "rig_binary.hpp"
#include "scratch.hpp"
#include "store/store.hpp"

#include <filesystem>
#include <map>
#include <regex>
#include <sys/stat.h>

namespace {

namespace fs = std::filesystem;

std::string env(const char* name) {
    const char* value = std::getenv(name);
    EXPECT_NE(value, nullptr) << name << " is set by meson test";
    return value ? value : "";
}

// Where meson installed a configured folder (absolute, under the prefix) into `destdir`.
fs::path under(const fs::path& destdir, const std::string& folder) {
    return destdir / fs::path(folder).relative_path();
}

rig::proc::RunResult run(std::vector<std::string> argv,
                         const std::map<std::string, std::string>& variables = {},
                         std::chrono::milliseconds timeout = std::chrono::minutes(2)) {
    rig::proc::RunOptions options;
    options.cwd = rig::test::source_root();
    options.timeout = timeout;
    options.env = variables;
    auto result = rig::proc::run(argv, options);
    EXPECT_TRUE(result) << (result ? "" : result.error().message);
    return result ? *result : rig::proc::RunResult{};
}

std::string read_text(const fs::path& file) {
    std::ifstream in(file);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

// One `meson install --destdir` for the whole suite: what every test below looks at.
class Installed : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        s_scratch = new rig::test::Scratch("install");
        s_destdir = s_scratch->dir / "root";
        auto installed = run({"meson", "install", "-C", env("RIG_BUILD_ROOT"), "--no-rebuild",
                              "--quiet", "--destdir", s_destdir.string()},
                             {}, std::chrono::minutes(5));
        s_install_ok = installed.exit_code == 0;
        s_install_log = installed.out + installed.err;
    }
    static void TearDownTestSuite() { delete s_scratch; }

    void SetUp() override {
        ASSERT_TRUE(s_install_ok) << "meson install failed:\n" << s_install_log;
    }

    static fs::path rig() { return under(s_destdir, env("RIG_INSTALL_BINDIR")) / "rig"; }
    static fs::path libexec() { return under(s_destdir, env("RIG_INSTALL_LIBEXECDIR")); }
    static fs::path man_page(const std::string& section, const std::string& name) {
        return under(s_destdir, env("RIG_INSTALL_MANDIR")) / ("man" + section) /
               (name + "." + section);
    }
    static fs::path data(const std::string& path) {
        return under(s_destdir, env("RIG_INSTALL_DATADIR")) / path;
    }

    static inline rig::test::Scratch* s_scratch = nullptr;
    static inline fs::path s_destdir;
    static inline bool s_install_ok = false;
    static inline std::string s_install_log;
};

bool is_executable(const fs::path& file) {
    return fs::is_regular_file(file) && ::access(file.c_str(), X_OK) == 0;
}

TEST_F(Installed, TreeHasEverythingRigNeeds) {
    EXPECT_TRUE(is_executable(rig())) << rig();
    EXPECT_TRUE(is_executable(libexec() / "rig-fuse")) << libexec();
    EXPECT_TRUE(fs::is_regular_file(man_page("1", "rig")));
    EXPECT_TRUE(fs::is_regular_file(man_page("5", "rig-scenario")));
    EXPECT_TRUE(fs::is_regular_file(data("bash-completion/completions/rig")));
    EXPECT_TRUE(fs::is_regular_file(data("rig/scenarios/quickstart.yaml")));
    EXPECT_TRUE(fs::is_regular_file(data("rig/scenarios/README.md")));
}

// The checks and their statuses, by name, from `rig doctor`'s table.
std::map<std::string, std::string> doctor_statuses(const std::string& out) {
    std::map<std::string, std::string> statuses;
    static const std::regex row(R"(^(\S.*?)\s{2,}(ok|warn|FAILED|MISSING)\s)");
    std::istringstream in(out);
    for (std::string line; std::getline(in, line);) {
        std::smatch match;
        if (std::regex_search(line, match, row))
            statuses[match[1]] = match[2];
    }
    return statuses;
}

TEST_F(Installed, DoctorPassesTheSameChecksAsTheBuildTree) {
    std::string db = (s_scratch->dir / "rig.db").string();
    auto installed = run({rig().string(), "--db", db, "doctor"});
    auto built = run({env("RIG_BINARY"), "--db", db, "doctor"});
    EXPECT_EQ(installed.exit_code, built.exit_code) << installed.out << built.out;
    auto statuses = doctor_statuses(installed.out);
    EXPECT_GE(statuses.size(), 15u) << installed.out;
    EXPECT_EQ(statuses, doctor_statuses(built.out)) << installed.out << "\n" << built.out;
    // Each finds its own rig-fuse: the installed one in its libexec folder.
    std::string fuse = rig::test::doctor_line(installed.out, "rig-fuse");
    EXPECT_NE(fuse.find(" ok "), std::string::npos) << fuse;
    EXPECT_NE(fuse.find((libexec() / "rig-fuse").string()), std::string::npos) << fuse;
    EXPECT_NE(rig::test::doctor_line(built.out, "rig-fuse").find("/guests/rig-fuse"),
              std::string::npos)
        << built.out;
}

// The watch's units as installed, checked by systemd itself: each with its ExecStart
// pointing at the installed rig (systemd-analyze checks that it is executable), as an
// instance of its template.
TEST_F(Installed, WatchUnitsPassSystemdAnalyzeVerify) {
    fs::path units = s_destdir / fs::path(env("RIG_INSTALL_SYSTEMDDIR")).relative_path();
    fs::path checked = s_scratch->dir / "units";
    fs::create_directories(checked);
    const std::string bindir = env("RIG_INSTALL_BINDIR");
    for (const std::string unit :
         {"rig-watch@.service", "rig-watch-once@.service", "rig-watch-once@.timer"}) {
        std::string text = read_text(units / unit);
        ASSERT_FALSE(text.empty()) << units / unit;
        if (unit.ends_with(".service")) {
            const std::string exec = "ExecStart=" + bindir + "/rig ";
            ASSERT_NE(text.find(exec), std::string::npos) << text;
            text.replace(text.find(exec), exec.size(), "ExecStart=" + rig().string() + " ");
        }
        std::string instance = unit;
        instance.insert(instance.find('@') + 1, "test");
        std::ofstream(checked / instance) << text;
    }
    // --man=no: the man pages are installed into the scratch root, not where man looks.
    auto verified =
        run({"systemd-analyze", "verify", "--man=no", (checked / "rig-watch@test.service").string(),
             (checked / "rig-watch-once@test.service").string(),
             (checked / "rig-watch-once@test.timer").string()});
    EXPECT_EQ(verified.exit_code, 0) << verified.out << verified.err;
    EXPECT_EQ(verified.err, "") << verified.err;
}

TEST_F(Installed, PlansAnInstalledScenario) {
    auto installed = run({rig().string(), "plan", data("rig/scenarios/quickstart.yaml").string()});
    auto built = run({env("RIG_BINARY"), "plan", "scenarios/quickstart.yaml"});
    ASSERT_EQ(installed.exit_code, 0) << installed.err;
    ASSERT_EQ(built.exit_code, 0) << built.err;
    // The first line names the file; the cells are the same.
    EXPECT_EQ(installed.out.substr(installed.out.find('\n')),
              built.out.substr(built.out.find('\n')));
}

TEST_F(Installed, ManPagesRenderWithoutWarnings) {
    for (const fs::path& page : {man_page("1", "rig"), man_page("5", "rig-scenario")}) {
        auto groff = run({"groff", "-ww", "-man", "-Tutf8", "-rLL=80n", page.string()});
        EXPECT_EQ(groff.exit_code, 0) << page;
        EXPECT_EQ(groff.err, "") << page;
        auto man = run({"man", "--warnings=w", "-l", page.string()}, {{"MANWIDTH", "80"}});
        EXPECT_EQ(man.exit_code, 0) << page;
        EXPECT_EQ(man.err, "") << page;
        EXPECT_GT(man.out.size(), 2000u) << page;
    }
}

// A man page's text without roff's font changes and escapes, by .SS heading ("" before
// the first).
std::map<std::string, std::string> subsections(const std::string& roff) {
    std::map<std::string, std::string> sections;
    std::string heading;
    bool next_is_heading = false;
    std::istringstream in(roff);
    for (std::string line; std::getline(in, line);) {
        for (const char* escape : {"\\fB", "\\fR", "\\fI", "\\fP", "\\&", "\\"})
            for (size_t at; (at = line.find(escape)) != std::string::npos;)
                line.erase(at, std::string(escape).size());
        if (next_is_heading) {
            heading = line;
            next_is_heading = false;
        } else if (line == ".SS" || line == ".SH") {
            next_is_heading = true;
        } else {
            sections[heading] += line + "\n";
        }
    }
    return sections;
}

// Whether `text` names `option` as a word of its own (-j, and not the -j of --jobs).
bool mentions(const std::string& text, const std::string& option) {
    for (size_t at = text.find(option); at != std::string::npos; at = text.find(option, at + 1)) {
        char before = at == 0 ? ' ' : text[at - 1];
        char after = at + option.size() < text.size() ? text[at + option.size()] : ' ';
        if (std::string(" \n,([").find(before) != std::string::npos &&
            std::string(" \n,=)]").find(after) != std::string::npos)
            return true;
    }
    return false;
}

struct Help {
    std::vector<std::string> options; // each spelling: -j, --jobs
    std::vector<std::string> subcommands;
};

Help parse_help(const std::string& out) {
    Help help;
    std::string section;
    std::istringstream in(out);
    for (std::string line; std::getline(in, line);) {
        if (!line.empty() && line[0] != ' ') {
            section = line;
            continue;
        }
        std::smatch match;
        static const std::regex entry(R"(^  (\S+))");
        if (!std::regex_search(line, match, entry))
            continue;
        if (section == "Options:") {
            std::istringstream names(match[1].str());
            for (std::string name; std::getline(names, name, ',');)
                help.options.push_back(name);
        } else if (section == "Subcommands:") {
            help.subcommands.push_back(match[1]);
        }
    }
    return help;
}

// Every subcommand `rig --help` lists has a subsection of rig(1) named after it, and every
// option the help of rig or of a subcommand lists is in that subsection (rig's own
// anywhere): a new flag without its line in man/rig.1.md fails here.
TEST_F(Installed, ManPageHasEverySubcommandAndOptionOfTheHelp) {
    auto sections = subsections(read_text(man_page("1", "rig")));
    std::string whole;
    for (const auto& [heading, text] : sections)
        whole += heading + "\n" + text;
    size_t checked = 0;
    std::vector<std::vector<std::string>> pending{{}};
    while (!pending.empty()) {
        std::vector<std::string> path = pending.back();
        pending.pop_back();
        std::vector<std::string> argv{rig().string()};
        argv.insert(argv.end(), path.begin(), path.end());
        argv.push_back("--help");
        auto result = run(argv);
        ASSERT_EQ(result.exit_code, 0) << result.err;
        Help help = parse_help(result.out);
        std::string name = "rig";
        for (const std::string& word : path)
            name += " " + word;
        std::string text = whole;
        if (!path.empty()) {
            text.clear();
            for (const auto& [heading, body] : sections)
                if (heading == name || heading.rfind(name + " ", 0) == 0)
                    text += body;
            if (help.subcommands.empty()) {
                EXPECT_FALSE(text.empty()) << "rig(1) has no subsection for " << name;
            }
        }
        for (const std::string& option : help.options) {
            if (!path.empty() && (option == "-h" || option == "--help"))
                continue; // once, among rig's own
            ++checked;
            EXPECT_TRUE(mentions(text, option))
                << name << " " << option << " is not in its part of rig(1)";
        }
        for (const std::string& sub : help.subcommands) {
            ++checked;
            EXPECT_NE(whole.find(name + " " + sub), std::string::npos)
                << name << " " << sub << " is not in rig(1)";
            auto next = path;
            next.push_back(sub);
            pending.push_back(next);
        }
    }
    EXPECT_GE(checked, 50u);
}

// The installed completion file, run as bash runs it at a Tab after `words`.
std::vector<std::string> complete(const fs::path& script, const std::vector<std::string>& words) {
    std::vector<std::string> argv{
        "bash", "-c",
        "source \"$1\"; shift; COMP_WORDS=(\"$@\"); "
        "COMP_CWORD=$(($# - 1)); _rig; printf '%s\\n' \"${COMPREPLY[@]}\"",
        "bash", script.string()};
    argv.insert(argv.end(), words.begin(), words.end());
    auto result = run(argv);
    EXPECT_EQ(result.exit_code, 0) << result.err;
    std::vector<std::string> lines;
    std::istringstream in(result.out);
    for (std::string line; std::getline(in, line);)
        if (!line.empty())
            lines.push_back(line);
    return lines;
}

using Words = std::vector<std::string>;

TEST_F(Installed, BashCompletesSubcommandsOptionsScenariosAndIds) {
    fs::path script = data("bash-completion/completions/rig");
    std::string rig_path = rig().string();
    EXPECT_EQ(complete(script, {rig_path, ""}), (Words{"plan", "run", "sample", "doctor", "report",
                                                       "kernel", "bisect", "watch", "reproduce"}));
    EXPECT_EQ(complete(script, {rig_path, "bisect", "re"}), (Words{"resume", "report"}));
    EXPECT_EQ(complete(script, {rig_path, "kernel", "build", "--j"}), (Words{"--jobs"}));
    EXPECT_EQ(complete(script, {rig_path, "report", "--format", "j"}), (Words{"json"}));
    EXPECT_EQ(complete(script, {rig_path, "run", "--backend", ""}),
              (Words{"qemu", "libvirt", "slurm"}));
    // Scenario files and folders, from the working directory (the source tree).
    Words scenarios = complete(script, {rig_path, "plan", "scenarios/q"});
    EXPECT_EQ(scenarios, (Words{"scenarios/quickstart.yaml"}));
    Words folders = complete(script, {rig_path, "run", "scen"});
    EXPECT_EQ(folders, (Words{"scenarios"}));

    // Run ids from the database that --db names.
    fs::path db = s_scratch->dir / "ids.db";
    {
        auto opened = rig::store::Database::open(db);
        ASSERT_TRUE(opened) << opened.error().message;
        rig::store::RunInfo info;
        info.scenario_name = "ids";
        info.started_at = "2026-01-01T00:00:00Z";
        for (int i = 0; i < 3; ++i)
            ASSERT_TRUE((*opened)->begin_run(info));
    }
    EXPECT_EQ(complete(script, {rig_path, "--db", db.string(), "report", "--run", ""}),
              (Words{"1", "2", "3"}));
    EXPECT_EQ(complete(script, {rig_path, "--db", db.string(), "reproduce", ""}),
              (Words{"1", "2", "3"}));
    EXPECT_EQ(complete(script, {rig_path, "run", "--resume", "2", "--db", db.string(), "--j"}),
              (Words{"--jobs"}));
    EXPECT_EQ(complete(script, {rig_path, "--db", db.string(), "bisect", "status", ""}), Words{});
}

} // namespace
