#!/usr/bin/env python3
"""Nothing in src/cli/ or src/core/ writes to standard output except the one writer.

Every byte rmcp prints on stdout goes through StandardOutput (src/core/util/
standard_output.hpp), which checks each write so that a full disk or a closed pipe is an
error and exit 3, never a silent exit 0 or an abort (docs/security.md, "Output"). A direct
use of stdout (std::cout, printf, puts, fmt::print, fwrite/fputs/fflush on stdout, write(2)
on fd 1) would bypass that check; this finds one (comments and string literals are ignored)
and fails (exit 1). fmt::print is refused outright, stderr included: it throws on a failed
write, and stderr goes through Diagnostics (util/diag.hpp), which never does.

Exceptions, each named here with the reason:
- src/core/util/standard_output.cpp: the writer itself.
- src/core/run/supervisor.cpp relays a child's output to rmcp's stdout (fd 1 by default, as
  RunOptions::out_fd, not a literal); it checks every write and tee(2) and, when the reader
  went away, closes the child's pipe so the child meets its EPIPE/SIGPIPE as it would
  without rmcp (docs/run.md, "Relay"). The patterns below cannot see it, by design: it
  writes to a descriptor it was given.
- src/preload/ is a library loaded into other programs; it is not rmcp's output.

    tests/unit/stdout_writer_check.py [SOURCE_DIR]    (default: the checkout holding this file)
"""
import re
import sys
from pathlib import Path

ALLOWED = {"src/core/util/standard_output.cpp"}

PATTERNS = [
    (re.compile(r"\bstd::cout\b|\bstd::wcout\b"), "std::cout"),
    (re.compile(r"\bstdout\b"), "C's stdout stream"),
    (re.compile(r"\bfmt::v?print\s*\("), "fmt::print (throws on a failed write)"),
    (re.compile(r"(?<![\w:])(?:std::)?v?printf\s*\("), "printf"),
    (re.compile(r"(?<![\w:])(?:std::)?(?:puts|putchar|putchar_unlocked|fputs_unlocked)\s*\("), "puts/putchar"),
    (re.compile(r"\b(?:::)?write\s*\(\s*(?:1|STDOUT_FILENO)\s*,"), "write(2) on fd 1"),
    (re.compile(r"\bdprintf\s*\(\s*(?:1|STDOUT_FILENO)\s*,"), "dprintf on fd 1"),
]


def code_only(text):
    """The source with comments and string/character literals blanked (lines kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif text.startswith('R"', i):
            m = re.match(r'R"([^(\s]*)\(', text[i:])
            if not m:
                out.append(c)
                i += 1
                continue
            end = text.find(")" + m.group(1) + '"', i)
            j = n if end < 0 else end + len(m.group(1)) + 2
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j
        elif c == "'" and i > 0 and text[i - 1].isalnum() and i + 1 < n and text[i + 1].isalnum():
            out.append(c)  # a digit separator (100'000), not a character literal
            i += 1
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def main():
    top = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[2]
    problems = []
    for folder in ("src/cli", "src/core"):
        for path in sorted((top / folder).rglob("*")):
            if path.suffix not in (".cpp", ".hpp", ".h", ".cc"):
                continue
            rel = path.relative_to(top).as_posix()
            if rel in ALLOWED:
                continue
            code = code_only(path.read_text(errors="replace"))
            for lineno, line in enumerate(code.splitlines(), 1):
                for pattern, what in PATTERNS:
                    if pattern.search(line):
                        problems.append(f"{rel}:{lineno}: {what}: print through StandardOutput "
                                        "(ctx.out, util/standard_output.hpp) or Diagnostics instead")
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} direct use(s) of standard output outside the one writer", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
