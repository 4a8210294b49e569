#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Turns a text file into a C++ source defining `extern const char NAME[]`, so that rig
# carries its guest agent inside the binary.
import sys

source, output, name = sys.argv[1:4]
with open(source, encoding="utf-8") as f:
    text = f.read()
delimiter = "rig_embed"
assert ")" + delimiter + '"' not in text
with open(output, "w", encoding="utf-8") as f:
    f.write("// Generated from %s by scripts/embed.py; do not edit.\n" % source.split("/")[-1])
    f.write('extern const char %s[];\nconst char %s[] = R"%s(%s)%s";\n'
            % (name, name, delimiter, text, delimiter))
