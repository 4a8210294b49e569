// SPDX-License-Identifier: MIT
// `rig watch status`: each watch's heads with their verdicts, and its regressions.
#include "report/table.hpp"
#include "watch/watch.hpp"

namespace rig::watch {

Expected<std::string> render_status(store::Database& db, const std::string& watch) {
    std::string out;
    for (const std::string& name : RIG_TRY(db.watches())) {
        if (!watch.empty() && name != watch)
            continue;
        report::Table heads({{"head"},
                             {"status"},
                             {"run", report::Align::right},
                             {"against"},
                             {"suspects", report::Align::right},
                             {"tested"},
                             {"note"}});
        for (const store::WatchHead& head : RIG_TRY(db.watch_heads(name))) {
            auto findings = RIG_TRY(db.watch_findings(head.id));
            heads.add_row({head.commit.substr(0, 12), std::string(core::to_string(head.status)),
                           head.run_id ? std::to_string(head.run_id) : "-",
                           head.baseline.substr(0, 12), std::to_string(findings.size()),
                           head.updated_at, head.note});
        }
        out += "watch " + name + "\n\n" + heads.to_text();
        auto regressions = RIG_TRY(db.watch_regressions(name));
        if (regressions.empty()) {
            out += "\nno regressions reported\n";
        } else {
            report::Table table({{"culprit"},
                                 {"status"},
                                 {"criterion"},
                                 {"found on"},
                                 {"fixed in"},
                                 {"bisect", report::Align::right},
                                 {"mail"}});
            for (const store::WatchRegression& regression : regressions)
                table.add_row({regression.culprit.substr(0, 12),
                               std::string(core::to_string(regression.status)),
                               regression.criterion, regression.found_on.substr(0, 12),
                               regression.fixed_in.substr(0, 12),
                               std::to_string(regression.bisect_id), regression.mail});
            out += "\nregressions:\n" + table.to_text();
        }
        out += "\n";
    }
    if (out.empty())
        return std::string(watch.empty() ? "no watch has tested a head in this database\n"
                                         : "no watch " + watch + " in this database\n");
    return out;
}

} // namespace rig::watch
