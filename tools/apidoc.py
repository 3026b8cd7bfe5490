#!/usr/bin/env python3
"""docs/api.md, the API reference, generated from the comments of the public headers.

The headers (include/*.h) are the single source: this script reads them and writes the
reference; `--check` (a ctest test) fails when a public function has no comment or when
docs/api.md is not what the headers give now.

    python3 tools/apidoc.py            write docs/api.md
    python3 tools/apidoc.py --check    exit 1, saying why, if a function is undocumented or
                                       docs/api.md is stale

How a header is read (the conventions of include/ddtkit.h):
  - a comment whose first line is `/* ---- title ----` opens a section; the rest of it is the
    section's introduction;
  - a comment directly above a declaration (no blank line between) documents the run of
    declarations that follows it, up to the next blank line or comment; several functions may
    share one such comment;
  - a comment after a declaration, on its last line, documents that declaration;
  - a comment followed by a blank line or another comment is a paragraph of its section;
  - the first comment of a file, before any code, introduces the file.
A public function is a `ddt_*` function declared (or defined, static inline) at file level whose
name does not end in `_` (the trailing underscore marks a header's internal helpers). It is
documented when its run has a comment above it or its declaration has one after it.

Python 3 standard library only.
"""
import argparse
import difflib
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = "docs/api.md"
REGENERATE = "python3 tools/apidoc.py"

SECTION = re.compile(r"^/\*\s*-{3,}\s*(.*?)\s*-{3,}\s*(\*/)?\s*$")
FUNCTION = re.compile(r"^(?!typedef\b|enum\b|struct\b|union\b|extern\s+\"C\")[\w\s\*]*?\b(ddt_\w+)\s*\(")
DEFINE = re.compile(r"^#\s*define\s+(\w+)")


def strip_comments(line):
    """The code of one line without its /* */ and // comments (for counting braces)."""
    line = re.sub(r"/\*.*?\*/", "", line)
    line = re.sub(r"/\*.*$", "", line)
    return re.sub(r"//.*$", "", line)


def comment_text(lines):
    """The text of a /* */ comment: markers and the ` * ` margin removed, lines kept."""
    text = "\n".join(lines).strip()
    text = re.sub(r"^/\*+", "", text)
    text = re.sub(r"\*+/$", "", text)
    out = []
    for raw in text.split("\n"):
        line = re.sub(r"^\s*\* ?", "", raw) if re.match(r"^\s*\*(\s|$)", raw) else raw.strip()
        out.append(line.rstrip())
    while out and not out[0].strip():
        out.pop(0)
    while out and not out[-1].strip():
        out.pop()
    return out


class Comment:
    def __init__(self, lines, line_no):
        self.lines, self.line_no = lines, line_no
        m = SECTION.match(lines[0].strip())
        self.section = m.group(1) if m else None
        self.text = comment_text(lines[1:] if m else lines)


class Item:
    """One declaration, definition, typedef, enum or #define, with its trailing comment."""

    def __init__(self, lines, line_no, trailing):
        self.lines, self.line_no, self.trailing = lines, line_no, trailing
        first = lines[0].strip()
        self.name, self.helper = None, False
        code = " ".join(strip_comments(l) for l in lines)
        if not first.startswith("#"):
            m = FUNCTION.match(code.strip())
            if m and m.group(1).endswith("_"):
                self.helper = True
            elif m:
                self.name = m.group(1)
        self.code = self.signature(lines)

    @staticmethod
    def signature(lines):
        """The code shown in the reference: a definition's body is left out."""
        text = "\n".join(l.rstrip() for l in lines)
        if "{" in text and text.lstrip().startswith("static"):
            return text[: text.index("{")].rstrip() + ";"
        return text


def internal(item):
    """Header plumbing left out of the reference: include guards, extern "C", #include,
    conditionals, and names ending in `_`."""
    first = item.lines[0].strip()
    if first.startswith("#"):
        m = DEFINE.match(first)
        return not m or m.group(1).endswith("_") or m.group(1).endswith("_H")
    if first in ('extern "C" {', "}") or item.helper:
        return True
    return bool(re.match(r"^\w+_\s*\(", first))  # an X-macro expanded with an internal macro


def parse(path):
    """The header as a list of tokens: Comment, Item, or None for a blank line."""
    lines = path.read_text().split("\n")
    tokens, i = [], 0
    while i < len(lines):
        stripped = lines[i].strip()
        if not stripped:
            tokens.append(None)
            i += 1
        elif stripped.startswith("/*"):
            start = i
            while "*/" not in lines[i]:
                i += 1
            tokens.append(Comment(lines[start:i + 1], start + 1))
            i += 1
        elif stripped.startswith("#") or stripped in ('extern "C" {', "}"):
            start = i
            while lines[i].rstrip().endswith("\\"):
                i += 1
            tokens.append(Item(lines[start:i + 1], start + 1, None))
            i += 1
        else:
            start, depth, parens = i, 0, 0
            while True:
                code = strip_comments(lines[i])
                depth += code.count("{") - code.count("}")
                parens += code.count("(") - code.count(")")
                end = code.rstrip()
                nxt = lines[i + 1].strip() if i + 1 < len(lines) else ""
                # A statement ends with ; or a closing brace; a macro invocation such as
                # DDT_PREDEFINED_LIST(X) has neither and ends where the code does.
                closed = end.endswith((";", "}")) or not nxt or nxt.startswith(("#", "/*"))
                if (depth <= 0 and parens <= 0 and closed) or i + 1 == len(lines):
                    break
                i += 1
            item_lines = lines[start:i + 1]
            trailing = None
            last = item_lines[-1]
            code_end = strip_comments(last).rstrip()
            tail = last[last.find(code_end) + len(code_end):] if code_end else ""
            if "/*" in tail:
                comment_lines = [tail[tail.index("/*"):]]
                while "*/" not in comment_lines[-1]:
                    i += 1
                    comment_lines.append(lines[i])
                trailing = comment_text(comment_lines)
                item_lines = item_lines[:-1] + [last[: last.index(tail)] if tail else last]
                item_lines[-1] = item_lines[-1].rstrip()
            tokens.append(Item(item_lines, start + 1, trailing))
            i += 1
    return tokens


class Section:
    def __init__(self, title, intro):
        self.title, self.intro, self.blocks = title, intro, []  # blocks: ("text", lines) or ("run", doc, items)


def structure(path):
    """File introduction and sections of one header, and its public functions with whether each
    is documented: (intro, sections, [(name, line, documented)])."""
    tokens = parse(path)
    intro, sections, functions = [], [Section(None, [])], []
    seen_code = False
    i = 0
    while i < len(tokens):
        t = tokens[i]
        if t is None:
            i += 1
            continue
        if isinstance(t, Comment):
            nxt = tokens[i + 1] if i + 1 < len(tokens) else None
            if t.section is not None:
                sections.append(Section(t.section, t.text))
                i += 1
                continue
            if not seen_code and not intro and not isinstance(nxt, Item):
                intro = t.text
                i += 1
                continue
            if isinstance(nxt, Item):
                doc, i = t.text, i + 1
            else:
                sections[-1].blocks.append(("text", t.text))
                i += 1
                continue
        else:
            doc = None
        run = []
        while i < len(tokens) and isinstance(tokens[i], Item):
            run.append(tokens[i])
            i += 1
        seen_code = True
        # A function with its own trailing comment, after the run's first function, starts a
        # part of its own: the comment above the run documents the functions before it only.
        parts, first_fn = [[]], True
        for item in run:
            if item.name and item.trailing and not first_fn:
                parts.append([])
            parts[-1].append(item)
            first_fn = first_fn and not item.name
        for k, part in enumerate(parts):
            part_doc = doc if k == 0 else None
            for item in part:
                if item.name:
                    functions.append((item.name, item.line_no, bool(part_doc or item.trailing)))
            shown = [it for it in part if not internal(it)]
            if shown or part_doc:
                sections[-1].blocks.append(("run", part_doc, shown))
    return intro, [s for s in sections if s.title or s.blocks or s.intro], functions


# ---- Markdown ----------------------------------------------------------------------------

def escape(text):
    """Markdown-escapes prose outside `code spans`: * _ < [ ] and a leading #."""
    parts = text.split("`")
    for k in range(0, len(parts), 2):
        parts[k] = re.sub(r"([\\*<>\[\]])", r"\\\1", parts[k])
        parts[k] = re.sub(r"(^|\s)_", r"\1\\_", parts[k])
    if len(parts) % 2 == 0:  # an unmatched backtick: show it literally
        parts[-2] += "\\`" + parts.pop()
    out = "`".join(parts)
    return "\\" + out if out.startswith("#") else out


def prose(lines):
    """Comment lines as Markdown: paragraphs joined, lines indented by two or more spaces (code
    in a comment) as a C block, `-` lines as a list."""
    out, para, code = [], [], []

    def flush():
        if para:
            out.append(escape(" ".join(p.strip() for p in para)))
            out.append("")
            para.clear()
        if code:
            out.extend(["```c"] + dedent(code) + ["```", ""])
            code.clear()

    for line in lines:
        if not line.strip():
            flush()
        elif line.startswith("  "):
            if para:
                flush()
            code.append(line)
        elif line.lstrip().startswith("- ") and not para:
            flush()
            out.append(escape(line.strip()))
        else:
            if code:
                flush()
            para.append(line)
    flush()
    return out


def dedent(lines):
    width = min(len(l) - len(l.lstrip()) for l in lines if l.strip())
    return [l[width:] for l in lines]


def anchor(heading, used):
    """GitHub's anchor for a heading: lowercase, punctuation but - and _ dropped, spaces as -."""
    slug = re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
    n = used.get(slug, 0)
    used[slug] = n + 1
    return slug if n == 0 else f"{slug}-{n}"


def render(root):
    headers = sorted((root / "include").glob("*.h"))
    parsed = [(h, structure(h)) for h in headers]
    used = {}
    body, index = [], []
    for path, (intro, sections, _) in parsed:
        rel = path.relative_to(root).as_posix()
        title = f"`{rel}`"
        index.append(f"- [{rel}](#{anchor(title, used)})")
        body += [f"## {title}", ""] + prose(intro)
        for s in sections:
            if s.title:
                sec = escape(s.title)
                index.append(f"  - [{sec}](#{anchor(s.title, used)})")
                body += [f"### {sec}", ""] + prose(s.intro)
            names_here = []
            for block in s.blocks:
                if block[0] == "text":
                    body += prose(block[1])
                    continue
                _, doc, items = block
                names = [it.name for it in items if it.name]
                if names:
                    heading = ", ".join(names)
                    link = anchor(heading, used)
                    names_here += [f"[`{n}`](#{link})" for n in names]
                    body += [f"#### {heading}", ""]
                code = []
                for it in items:
                    code += dedent(it.code.split("\n"))
                    if it.trailing:
                        if "\n" in it.code:
                            code += ["/* " + " ".join(t.strip() for t in it.trailing) + " */"]
                        else:
                            code[-1] += "  /* " + " ".join(t.strip() for t in it.trailing) + " */"
                if code:
                    body += ["```c"] + code + ["```", ""]
                if doc:
                    body += prose(doc)
            if names_here and s.title:
                index[-1] += ": " + ", ".join(names_here)
            elif names_here:
                index.append("  - " + ", ".join(names_here))
    head = ["# ddtkit API reference", "",
            "Generated by `tools/apidoc.py` from the comments of the public headers (`include/*.h`), "
            "which are the single source: change a header, then run `" + REGENERATE + "`; "
            "`make test` fails while this file differs from what the headers give. "
            "The user guide is [guide.md](guide.md).", "",
            "## Contents", ""]
    text = "\n".join(head + index + [""] + body)
    return re.sub(r"\n{3,}", "\n\n", text).rstrip("\n") + "\n", parsed


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="fail on an undocumented function or a stale docs/api.md")
    ap.add_argument("--root", type=pathlib.Path, default=ROOT, help="the repository (default: this script's)")
    args = ap.parse_args()
    root = args.root.resolve()
    text, parsed = render(root)
    out = root / OUT
    if not args.check:
        out.parent.mkdir(exist_ok=True)
        out.write_text(text)
        print(f"apidoc: wrote {OUT}")
        return 0

    failed = False
    count = 0
    for path, (_, _, functions) in parsed:
        for name, line, documented in functions:
            count += 1
            if not documented:
                failed = True
                print(f"{path.relative_to(root)}:{line}: {name} has no comment: write one directly above "
                      f"its declaration (or after it on its line), then run `{REGENERATE}`")
    current = out.read_text() if out.exists() else ""
    if current != text:
        failed = True
        diff = list(difflib.unified_diff(current.split("\n"), text.split("\n"), f"{OUT} (committed)",
                                         f"{OUT} (from the headers)", lineterm="", n=1))
        print(f"{OUT} is not what the headers give now: run `{REGENERATE}` and commit {OUT}")
        print("\n".join(diff[:40]) + ("\n..." if len(diff) > 40 else ""))
    if not failed:
        print(f"apidoc: {count} public functions, each documented; {OUT} is current")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
