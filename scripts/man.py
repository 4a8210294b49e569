#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Turns one of rig's markdown files into a man page, so that rig(1) and rig-scenario(5)
# are the texts people already read and cannot drift from them.
#   man.py --name NAME --section N --summary TEXT --version VERSION INPUT OUTPUT
# It knows the markdown rig's files use: # and ### headings, paragraphs, - and 1. lists
# (continued by indented lines), ``` blocks, tables (each row becomes a tagged paragraph:
# the first cell the tag, the last the text, the others named by their header), `code`,
# **bold**, [links](...) and <!-- comments -->. Non-ASCII characters become groff's
# \[uXXXX] escapes, so the page needs no preconv, and lines are left ragged (.ad l): a
# justified 80-column page of long code words makes groff -ww warn.
import argparse
import re
import sys


def escape(text):
    """Plain text as roff: backslashes escaped, non-ASCII as \\[uXXXX]."""
    out = []
    for char in text.replace("\\", "\\e"):
        out.append(char if ord(char) < 128 else "\\[u%04X]" % ord(char))
    return "".join(out)


def code(text):
    """A code span: bold, with hyphens that stay minus signs (options copy and paste)."""
    return "\\fB" + escape(text).replace("-", "\\-") + "\\fR"


def inline(text):
    """Markdown inline markup as roff, outside code spans first, then in them."""
    parts = re.split(r"(`+)(.+?)\1", text)
    out = []
    # re.split with two groups yields text, fence, code, text, fence, code, ...
    for i in range(0, len(parts), 3):
        plain = parts[i]
        plain = re.sub(r"\[([^\]]+)\]\(([^)]+)\)", r"\1", plain)
        plain = escape(plain)
        plain = re.sub(r"\*\*(.+?)\*\*", r"\\fB\1\\fR", plain)
        out.append(plain)
        if i + 2 < len(parts):
            out.append(code(parts[i + 2].strip()))
    return "".join(out)


def line(text):
    """One output text line: a leading . or ' would read as a request."""
    return "\\&" + text if text[:1] in (".", "'") else text


def split_row(row):
    """A table row's cells; a | inside a code span is text, not a border."""
    row = row.strip()
    row = row[1:-1] if row.endswith("|") else row[1:]
    cells, current, in_code = [], "", False
    for char in row:
        if char == "`":
            in_code = not in_code
        if char == "|" and not in_code:
            cells.append(current.strip())
            current = ""
        else:
            current += char
    cells.append(current.strip())
    return cells


def heading_text(text):
    return escape(re.sub(r"`([^`]*)`", r"\1", text))


def convert(markdown, name, section, summary, version):
    out = [
        '.TH "%s" "%s" "" "rig %s" "rig manual"' % (name.upper(), section, version),
        ".ad l",
        ".SH NAME",
        "%s \\- %s" % (escape(name).replace("-", "\\-"), escape(summary)),
    ]
    lines = re.sub(r"<!--.*?-->", "", markdown, flags=re.S).splitlines()
    paragraph = []
    in_list = False
    seen_section = False

    def flush():
        nonlocal paragraph
        if paragraph:
            out.append(line(inline(" ".join(paragraph))))
            paragraph = []

    def start_body():
        nonlocal seen_section
        if not seen_section:
            out.extend([".SH DESCRIPTION"])
            seen_section = True

    i = 0
    while i < len(lines):
        text = lines[i]
        stripped = text.strip()
        if stripped.startswith("```"):
            flush()
            start_body()
            block = []
            i += 1
            while i < len(lines) and not lines[i].strip().startswith("```"):
                block.append(lines[i])
                i += 1
            indent = min((len(b) - len(b.lstrip()) for b in block if b.strip()), default=0)
            out.extend([".PP" if not in_list else ".IP", ".RS 4", ".nf"])
            out.extend(line(escape(b[indent:]).replace("-", "\\-")) for b in block)
            out.extend([".fi", ".RE"])
            i += 1
            continue
        if not stripped:
            flush()
            i += 1
            continue
        heading = re.match(r"(#+) (.*)", stripped)
        if heading and not text.startswith(" "):
            flush()
            in_list = False
            level = len(heading.group(1))
            if level == 1:
                i += 1
                continue
            out.append(".SH" if level == 2 else ".SS")
            title = heading_text(heading.group(2))
            out.append(line(title.upper() if level == 2 else title))
            seen_section = True
            i += 1
            continue
        if stripped.startswith("|") and not in_list:
            flush()
            start_body()
            header = split_row(stripped)
            i += 2  # the header and the |---| row
            while i < len(lines) and lines[i].strip().startswith("|"):
                cells = split_row(lines[i])
                tag = inline(cells[0])
                extra = ["%s: %s" % (h, c) for h, c in zip(header[1:-1], cells[1:-1]) if c]
                if extra:
                    tag += " (" + inline("; ".join(extra)) + ")"
                out.extend([".TP", line(tag), line(inline(cells[-1]))])
                i += 1
            out.append(".PP")
            continue
        item = re.match(r"(- |\* |(\d+)\. )(.*)", stripped)
        if item and not text.startswith("    "):
            flush()
            start_body()
            in_list = True
            mark = item.group(2) + "." if item.group(2) else "\\(bu"
            out.append(".IP %s %d" % (mark, 4 if item.group(2) else 2))
            paragraph.append(item.group(3))
            i += 1
            continue
        if in_list and not text.startswith(" ") and not paragraph:
            in_list = False
            out.append(".PP")
        if not paragraph:
            start_body()
            if not in_list:
                out.append(".PP")
        paragraph.append(stripped)
        i += 1
    flush()
    return "\n".join(out) + "\n"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--name", required=True)
    parser.add_argument("--section", required=True)
    parser.add_argument("--summary", required=True)
    parser.add_argument("--version", required=True)
    parser.add_argument("input")
    parser.add_argument("output")
    args = parser.parse_args()
    with open(args.input, encoding="utf-8") as source:
        page = convert(source.read(), args.name, args.section, args.summary, args.version)
    with open(args.output, "w", encoding="ascii") as target:
        target.write(page)


if __name__ == "__main__":
    sys.exit(main())
