// SPDX-License-Identifier: MIT
// Subcommands that fit in a few lines each.
#include "cli/commands.hpp"

#include "core/matrix.hpp"
#include "guest/fuse.hpp"
#include "host/doctor.hpp"
#include "kernel/artifact.hpp"
#include "report/plan.hpp"
#include "report/table.hpp"
#include "spec/spec.hpp"

#include <csignal>
#include <iostream>

namespace rig::cli {

namespace {

std::atomic<bool> g_interrupted{false};

void on_signal(int) {
    g_interrupted = true;
}

} // namespace

const std::map<std::string, report::PlanFormat>& plan_format_words() {
    static const std::map<std::string, report::PlanFormat> words{
        {"text", report::PlanFormat::text}, {"json", report::PlanFormat::json}};
    return words;
}

const std::map<std::string, report::Format>& report_format_words() {
    static const std::map<std::string, report::Format> words{{"text", report::Format::text},
                                                             {"markdown", report::Format::markdown},
                                                             {"csv", report::Format::csv},
                                                             {"json", report::Format::json},
                                                             {"html", report::Format::html}};
    return words;
}

const std::map<std::string, core::Test>& test_words() {
    static const std::map<std::string, core::Test> words{
        {"welch", core::Test::welch}, {"mann-whitney", core::Test::mann_whitney}};
    return words;
}

const std::atomic<bool>& catch_interrupts() {
    struct sigaction action {};
    action.sa_handler = on_signal;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, nullptr);
    sigaction(SIGTERM, &action, nullptr);
    sigaction(SIGHUP, &action, nullptr);
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &ignore, nullptr);
    return g_interrupted;
}

void wait_for_locks(store::Database& db, const std::atomic<bool>& interrupted) {
    store::LockWait wait;
    wait.notice = [](const std::string& message) {
        std::cerr << "rig: " << message
                  << " (Ctrl-C stops; nothing finished is lost, a resume carries on)\n";
    };
    wait.stop = &interrupted;
    db.wait_for_locks(std::move(wait));
}

int exit_code_for(const Error& error) {
    switch (error.kind) {
    case ErrorKind::usage:
    case ErrorKind::config:
        return k_exit_usage;
    case ErrorKind::infra:
        return k_exit_infra;
    case ErrorKind::interrupted:
        return k_exit_interrupted;
    }
    return k_exit_infra;
}

int report_error(const Error& error) {
    std::cerr << "rig: " << error.message << "\n";
    return exit_code_for(error);
}

int plan_command(const GlobalOptions&, const std::filesystem::path& file,
                 report::PlanFormat format) {
    auto scenario = spec::load_scenario(file);
    if (!scenario)
        return report_error(scenario.error());
    auto cells = core::expand(*scenario);
    if (!cells)
        return report_error(cells.error());
    std::cout << report::render_plan(*scenario, *cells, format);
    return k_exit_ok;
}

namespace {

// The results database, read-only: SQLite's quick_check, so that a damaged file is named
// before a run or a report meets it. A database not yet created is fine.
host::Check database_check(const std::filesystem::path& db) {
    host::Check check{"database", host::Status::ok, "", ""};
    std::error_code ec;
    if (!std::filesystem::exists(db, ec)) {
        check.detail = db.string() + " not created yet (rig run creates it)";
        return check;
    }
    auto integrity = store::Database::check_integrity(db);
    if (!integrity) {
        check.status = host::Status::failed;
        check.detail = integrity.error().message;
    } else {
        check.status = integrity->ok ? host::Status::ok : host::Status::failed;
        check.detail = integrity->ok ? db.string() + ": " + integrity->detail : integrity->detail;
    }
    return check;
}

// rig-fuse, which fs: fuse cells need: where this rig finds it, the build tree's or the
// installed one (guest/fuse.hpp), so that an installed rig shows it uses its own.
host::Check fuse_daemon_check() {
    auto daemon = guest::find_fuse_daemon();
    if (!daemon)
        return {"rig-fuse", host::Status::warn,
                daemon.error().message + "; needed for fs: fuse cells", ""};
    return {"rig-fuse", host::Status::ok, daemon->string(), ""};
}

} // namespace

int doctor_command(const GlobalOptions& global) {
    auto checks = host::run_checks(global.db.parent_path(), kernel::default_cache_dir());
    checks.push_back(fuse_daemon_check());
    checks.push_back(database_check(global.db));
    report::Table table({{"check"}, {"status"}, {"detail"}});
    std::vector<std::string> packages;
    bool missing = false;
    for (const auto& check : checks) {
        const char* status = check.status == host::Status::ok       ? "ok"
                             : check.status == host::Status::warn   ? "warn"
                             : check.status == host::Status::failed ? "FAILED"
                                                                    : "MISSING";
        std::string detail = check.detail;
        if (check.status != host::Status::ok && !check.package.empty()) {
            detail += " [package: " + check.package + "]";
            if (check.status == host::Status::missing)
                packages.push_back(check.package);
        }
        missing |= check.status == host::Status::missing || check.status == host::Status::failed;
        table.add_row({check.name, status, detail});
    }
    std::cout << table.to_text();
    if (!packages.empty()) {
        std::cout << "\nto install what is missing: apt-get install";
        for (const auto& package : packages)
            std::cout << " " << package;
        std::cout << "\n";
    }
    return missing ? k_exit_infra : k_exit_ok;
}

} // namespace rig::cli
