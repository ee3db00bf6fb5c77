#!/usr/bin/python3
"""Does `rmcp explain` give the same first answer when a real log comes wrapped as people paste it?

    /usr/bin/python3 bench/explain_wrapped.py [--rmcp build/rmcp] [--wrapper NAME ...] [--split dev|validation|clean]

Runs every log of threads/ bare and under each wrapper (WRAPPERS: quoted in an issue
reply, a docker compose column, terminal colours, CRLF line ends, indented), and prints the logs
whose first answer (entry id, and whether facts came from a report) changed. Exit 1 when any did.
docs/explain.md, "Pasted logs", records what it found; tests/cli/test_explain_real.py runs the
same wrappers over the logs a wrapper can change.
"""
import argparse
import importlib.util
import pathlib
import sys
import tempfile

REPO = pathlib.Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("explain_accuracy", REPO / "bench" / "explain_accuracy.py")
accuracy = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(accuracy)


def _per_line(prefix, suffix=""):
    return lambda text: "\n".join(prefix + line + suffix for line in text.split("\n"))


WRAPPERS = {
    "quoted": _per_line("> "),
    "compose": _per_line("ollama-1  | "),
    "coloured": _per_line("\x1b[31m", "\x1b[0m"),
    "crlf": lambda text: text.replace("\n", "\r\n"),
    "indented": _per_line("    "),
}


def first_answer(rmcp, path):
    """(first entry id or None, facts_source) of `rmcp explain --no-facts PATH`."""
    _, out = accuracy.explain(rmcp, path)
    problems = out.get("problems", [])
    return (problems[0]["id"] if problems else None, out.get("facts_source"))


def wrapped_changes(rmcp, files, wrappers, work, bare_answers=None):
    """(wrapper, file, bare answer, wrapped answer) for every log whose answer a wrapper changes.
    `bare_answers` (file -> first_answer of the bare log), when known, saves running them again."""
    changes = []
    for name in files:
        text = (accuracy.REAL / name).read_text(errors="surrogateescape")
        bare = bare_answers[name] if bare_answers else first_answer(rmcp, accuracy.REAL / name)
        for wrapper in wrappers:
            path = pathlib.Path(work) / f"{wrapper}--{name}"
            path.write_bytes(WRAPPERS[wrapper](text).encode(errors="surrogateescape"))
            got = first_answer(rmcp, path)
            if got != bare:
                changes.append((wrapper, name, bare, got))
    return changes


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rmcp", default=str(REPO / "build" / "rmcp"))
    ap.add_argument("--wrapper", nargs="*", choices=sorted(WRAPPERS), default=sorted(WRAPPERS))
    ap.add_argument("--split", choices=["dev", "validation", "clean"], help="only these logs (default: all)")
    args = ap.parse_args()
    rows = accuracy.real_manifest()
    if args.split == "clean":
        rows = [r for r in rows if r.get("clean")]
    elif args.split:
        rows = [r for r in rows if not r.get("clean") and r["split"] == args.split]
    with tempfile.TemporaryDirectory() as work:
        changes = wrapped_changes(args.rmcp, [r["file"] for r in rows], args.wrapper, work)
    for wrapper in args.wrapper:
        mine = [c for c in changes if c[0] == wrapper]
        print(f"{wrapper}: {len(mine)} of {len(rows)} logs answer differently")
        for _, name, bare, got in mine:
            print(f"    {name}: {bare} -> {got}")
    return 1 if changes else 0


if __name__ == "__main__":
    sys.exit(main())
