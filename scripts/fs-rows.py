#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Writes the one translation unit of the filesystem table's rows: an #include of every
# .cpp in rig/core/fs/, and the function rig/core/fs.cpp calls so that the linker keeps
# the rows' registrars. The depfile names the folder, so ninja runs this again when a
# file is added or removed there (a folder's mtime changes then); meson lists no row.
#   scripts/fs-rows.py ROWS_DIR OUTPUT DEPFILE
import pathlib, sys

rows_dir, output, depfile = pathlib.Path(sys.argv[1]), sys.argv[2], sys.argv[3]
rows = sorted(path.name for path in rows_dir.glob("*.cpp"))
text = "// Generated from rig/core/fs/ by scripts/fs-rows.py; do not edit.\n"
text += "".join(f'#include "core/fs/{row}"\n' for row in rows)
text += "\nnamespace rig::core {\nvoid link_filesystem_rows() {}\n} // namespace rig::core\n"
pathlib.Path(output).write_text(text)
# The rows themselves are the compiler's dependencies of the output, not this script's.
folder = str(rows_dir.resolve()).replace(" ", "\\ ")
pathlib.Path(depfile).write_text(f"{output}: {folder}\n")
