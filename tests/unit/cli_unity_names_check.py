#!/usr/bin/env python3
"""Names that src/cli/'s files define at file scope must be unique across src/cli/.

src/cli/ is compiled as unity files (ARCHITECTURE.md, "Conventions"): several command files
share one translation unit, so two helpers of the same name in their anonymous namespaces
either fail to compile or, with other parameter types, become overloads and a call in one
file may silently pick the other file's helper. This reads each file's definitions at file
scope (functions, types, constants: lines that start in column 0, the layout .clang-format
gives them) and fails (exit 1) when a name is defined in more than one file.

    tests/unit/cli_unity_names_check.py [SOURCE_DIR]    (default: the checkout holding this file)
"""
import collections
import re
import sys
from pathlib import Path

# `int list_entries(Context& ctx) {`, `std::string sh_tables(...)`, `static bool x(` ... at
# column 0; the name is the identifier just before the first '('.
FUNCTION = re.compile(r"^(?!return\b|namespace\b|using\b|if\b|for\b|while\b|switch\b)"
                      r"[A-Za-z_][\w:<>,*& ]*?[\s*&]([A-Za-z_]\w*)\s*\(", re.MULTILINE)
TYPE = re.compile(r"^(?:struct|class|enum class|enum|using)\s+([A-Za-z_]\w*)", re.MULTILINE)
CONSTANT = re.compile(r"^(?:static\s+)?(?:const|constexpr)\s+[\w:<>, ]+?\s([A-Za-z_]\w*)\s*(?:=|\[|\{)", re.MULTILINE)


def is_definition(text, after_open_paren):
    """Whether the signature whose '(' ends at `after_open_paren` has a body ('{' before ';')."""
    depth = 1
    for c in text[after_open_paren:]:
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif depth == 0 and c in ";{":
            return c == "{"
    return False


def definitions(text):
    names = {m.group(1) for m in FUNCTION.finditer(text) if is_definition(text, m.end())}
    for pattern in (TYPE, CONSTANT):
        names.update(m.group(1) for m in pattern.finditer(text))
    return names


def main(argv):
    root = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parents[2]
    where = collections.defaultdict(list)
    for source in sorted((root / "src" / "cli").glob("*.cpp")):
        for name in definitions(source.read_text(errors="replace")):
            where[name].append(source.name)
    clashes = {name: files for name, files in where.items() if len(files) > 1}
    for name, files in sorted(clashes.items()):
        print(f"src/cli: '{name}' is defined in {', '.join(files)}: give each a name of its own, "
              f"or move the shared one into src/core/", file=sys.stderr)
    print(f"{sum(len(f) for f in where.values())} file-scope names in src/cli/, {len(clashes)} defined twice")
    return 1 if clashes else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
