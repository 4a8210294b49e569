#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Two databases of the same cell, one per side of a switch (counting on and off, a
# function profile on and off): each side's median sample and workload time with their
# spread, the ratio of the first side to the second against a target, and the spread of
# the named counts over the first side's samples.
#   compare-sides.py DB_A DB_B LABEL_A LABEL_B TARGET [METRIC ...]
import sqlite3
import statistics
import sys


def column(db, sql):
    return [row[0] for row in sqlite3.connect(db).execute(sql)]


def spread(values):
    mean = statistics.mean(values)
    cv = statistics.stdev(values) / mean * 100 if len(values) > 1 and mean else 0.0
    return (f"median {statistics.median(values):.2f} (min {min(values):.2f}, "
            f"max {max(values):.2f}, cv {cv:.1f} %)")


a_db, b_db, a_label, b_label, target = sys.argv[1:6]
ok = "FROM samples WHERE outcome = 'ok'"
for label, sql in (("sample time, boot to power-off", f"SELECT total_seconds {ok}"),
                   ("workload time in the guest   ", f"SELECT guest_seconds {ok}")):
    a, b = column(a_db, sql), column(b_db, sql)
    print(f"{label}: {a_label:13} {spread(a)} s, n={len(a)}")
    print(f"{label}: {b_label:13} {spread(b)} s, n={len(b)}")
    print(f"{label}: ratio {a_label}/{b_label} "
          f"{statistics.median(a) / statistics.median(b):.3f} (target <= {target})")
for name in sys.argv[6:]:
    values = [row[0] for row in sqlite3.connect(a_db).execute(
        "SELECT value FROM metrics WHERE name = ?", (name,))]
    if values:
        print(f"{name:40} {spread(values)}, n={len(values)}")
