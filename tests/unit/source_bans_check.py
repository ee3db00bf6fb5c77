#!/usr/bin/env python3
"""Constructs src/ must not use outside the one place that may (docs/security.md).

    tests/unit/source_bans_check.py dump|regex|envelope [SOURCE_DIR]   (default: the checkout holding this file)

dump:  nlohmann::json's dump() throws type_error 316 on invalid UTF-8 unless told otherwise,
       and leaves C1 controls raw; every JSON document and value goes through
       rmcp::json_text() (src/core/util/text.cpp), the only file allowed to call `.dump(`.
regex: std::regex backtracks and recurses once per repetition (libstdc++'s executor): a long
       input overflows the stack (adversarial review 2026-11-28, D3). Input is parsed by hand
       or matched with Hyperscan; REGEX_ALLOWED lists the files that may still use it, each
       with the reason (none).

envelope: every JSON document the CLI prints or writes carries schema_version, rmcp_version
       and kb_version (issue 30); src/cli/ makes JSON text only through json_output() /
       print_json() (src/cli/json_output.cpp, the only file in src/cli/ that calls json_text).

Comments are skipped (a `//` to the end of the line; string literals holding "//" are rare
enough in src/ not to matter here). Exits 1 and names file:line for each use found.
"""
import re
import sys
from pathlib import Path

DUMP_ALLOWED = {"src/core/util/text.cpp"}
ENVELOPE_ALLOWED = {"src/cli/json_output.cpp"}
REGEX_ALLOWED = {}  # path -> why it is safe; keep it empty
PATTERNS = {
    "dump": re.compile(r"\.dump\s*\("),
    "envelope": re.compile(r"(?<![\w.])json_text\s*\("),
    "regex": re.compile(r"std::(?:w?regex|regex_\w+|w?[cs]match|match_results|sub_match)\b|#\s*include\s*<regex>"),
}


def uses(root, kind):
    pattern = PATTERNS[kind]
    allowed = {"dump": DUMP_ALLOWED, "envelope": ENVELOPE_ALLOWED}.get(kind, set(REGEX_ALLOWED))
    found = []
    for path in sorted((root / ("src/cli" if kind == "envelope" else "src")).rglob("*")):
        if path.suffix not in (".cpp", ".hpp", ".h", ".cc") or not path.is_file():
            continue
        rel = path.relative_to(root).as_posix()
        if rel in allowed:
            continue
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            code = line.split("//", 1)[0]
            if pattern.search(code):
                found.append(f"{rel}:{number}: {line.strip()}")
    return found


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in PATTERNS:
        print(__doc__, file=sys.stderr)
        return 2
    root = Path(sys.argv[2]) if len(sys.argv) > 2 else Path(__file__).resolve().parents[2]
    found = uses(root, sys.argv[1])
    for f in found:
        print(f)
    if found:
        what = {"dump": "a raw .dump( (use rmcp::json_text, util/text.hpp)",
                "envelope": "json_text in src/cli/ (use print_json/json_output, src/cli/json_output.hpp)"}.get(
                    sys.argv[1], "std::regex on src/")
        print(f"{len(found)} use(s) of {what}", file=sys.stderr)
        return 1
    print(f"no {sys.argv[1]} use outside the allowed files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
