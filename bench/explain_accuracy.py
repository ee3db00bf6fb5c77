#!/usr/bin/python3
"""Accuracy of `rmcp explain` on real logs (dev and validation splits) and on the written
format corpus, written to docs/explain-accuracy.md.

    /usr/bin/python3 bench/explain_accuracy.py [--rmcp build/rmcp] [--out docs/explain-accuracy.md]

Real corpus (threads/threads.toml, read through bench/threads_corpus.py): excerpts copied from public threads, each with
the category and kb entry the thread established as the cause. Every log is explained with
`rmcp --format json explain --no-facts LOG` (facts from this build machine say nothing about
the reporter's; a bug report inside the log still supplies the reporter's facts). Measured
per split:
  - top-1 category: the first problem's category is the thread's category;
  - right entry first: the first problem is the thread's kb entry (logs that name one);
  - nothing recognised: a log with a failure in it gave exit 1;
  - false positives: a clean log (no failure in it) gave any problem;
  - known-family shrugs: among failing logs with an error line of a known family (the issue's
    list, recognised here by KNOWN_FAMILY_LINES, independently of the kb), those that got
    "nothing recognised".
The split is frozen by the thread's URL (split_for(), decided before any result was seen):
kb changes are written against `dev`; `validation` measures them.

Written corpus (tests/logs/EXPECTED.toml): logs we wrote in the documented message formats;
they test formats, not the wild.
"""
import argparse
import collections
import gzip
import hashlib
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import tomllib

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import threads_corpus  # noqa: E402  (bench/threads_corpus.py: the records, one source of truth)

REPO = pathlib.Path(__file__).resolve().parents[1]
LOGS = REPO / "tests" / "logs"
REAL = threads_corpus.EXCERPTS
# The fixed category list (src/core/kb/kb.hpp k_categories).
CATEGORIES = ["gpu-memory-fault", "gpu-hang", "hsa-runtime-error", "missing-code-object", "rocblas-missing-arch",
              "miopen-failure", "kernel-driver-fault", "device-access", "fork-after-init", "out-of-memory",
              "install-mismatch", "unsupported-gpu", "config-risk"]
VALIDATION_PERCENT = threads_corpus.VALIDATION_PERCENT


# "An error line of a known family", written from the issue's list ("No shrug when there is an
# error": HSA_STATUS_ERROR_*, hipError*, MIOpen(HIP): Error / MIOpen Error, rocBLAS error, amdgpu
# kernel faults, terminate called after throwing, Python RuntimeError: HIP error / HIP error:).
# Deliberately independent of kb/: it must not import or copy the kb's signatures, so that it
# measures the kb instead of restating it. Case-sensitive, one line at a time.
KNOWN_FAMILY_LINES = [
    ("HSA status error", re.compile(r"HSA_STATUS_ERROR_[A-Z_]+")),
    ("HIP error name", re.compile(r"\bhipError[A-Z][A-Za-z]+")),
    ("MIOpen error", re.compile(r"MIOpen\(HIP\): Error|MIOpen Error")),
    ("rocBLAS error", re.compile(r"rocBLAS error")),
    ("amdgpu page fault", re.compile(r"\[(?:gfxhub|mmhub)\d*\] (?:no-retry )?page fault|"
                                     r"(?:GCVM|VM|MMVM)_L2_PROTECTION_FAULT_STATUS")),
    ("amdgpu ring timeout", re.compile(r"\bring [a-z_]+[0-9._]* timeout")),
    ("amdgpu GPU reset", re.compile(r"GPU reset begin")),
    ("kfd not supported", re.compile(r"\bkfd\b.*not supported")),
    ("unhandled C++ exception", re.compile(r"terminate called after throwing")),
    ("Python HIP error", re.compile(r"RuntimeError: HIP error|HIP error: ")),
]


def known_family_line(path):
    """The first family (of KNOWN_FAMILY_LINES) whose error line occurs in the log, or None."""
    data = path.read_bytes()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    for line in data.decode("utf-8", "replace").splitlines():
        for family, pattern in KNOWN_FAMILY_LINES:
            if pattern.search(line):
                return family
    return None


split_for = threads_corpus.split_for


# One compiled-database cache for all the runs of one process (src/core/explain/db_cache.hpp):
# the kb is compiled once instead of once per log; the index of threads is built there once too.
_CACHE = tempfile.TemporaryDirectory(prefix="rmcp-accuracy-")
# A data directory whose threads/ holds the dev threads only (issue 31, "honest retrieval
# figures"): a validation row never finds a validation thread, and a dev row leaves its own
# thread out (--exclude-thread), so no thread ever retrieves itself.
_DATA = tempfile.TemporaryDirectory(prefix="rmcp-accuracy-data-")


MESSAGE_CAUSES = threads_corpus.RECORDS.parent / "message-causes.toml"


def dev_only_data_dir():
    """The data directory the measurements run against: kb/, and threads/ holding the dev
    threads only (threads.toml and message-causes.toml filtered), so that a validation log
    never meets its own thread or a thread of its split."""
    d = pathlib.Path(_DATA.name)
    if not (d / "kb").exists():
        (d / "kb").symlink_to(REPO / "kb")
        (d / "threads").mkdir()
        (d / "threads" / "excerpts").symlink_to(threads_corpus.EXCERPTS)
        text = threads_corpus.RECORDS.read_text()
        head, *records = re.split(r"(?m)^(?=\[\[thread\]\]$)", text)
        dev = [r for r in records if re.search(r'(?m)^split = "dev"$', r)]
        (d / "threads" / "threads.toml").write_text(head + "".join(dev))
        if MESSAGE_CAUSES.exists():
            dev_urls = {r["url"] for r in threads_corpus.rows() if r["split"] == "dev"}
            head, *messages = re.split(r"(?m)^(?=\[\[message\]\]$)", MESSAGE_CAUSES.read_text())
            kept = [m for m in messages if re.search(r'(?m)^url = "([^"]*)"$', m).group(1) in dev_urls]
            (d / "threads" / "message-causes.toml").write_text(head + "".join(kept))
    return d


def message_causes_text(rows):
    """threads/message-causes.toml from the rows of every split (explain --no-facts): one
    [[message]] per failing thread that an entry answers first, with the category the thread
    established. The first answer does not depend on the index or on this file."""
    lines = ["# Generated by `/usr/bin/python3 bench/explain_accuracy.py --update-message-causes` (do not edit",
             "# by hand; src/core/similar/message_causes.hpp): for every failing public thread that",
             "# `rmcp explain --no-facts` answers first with a kb entry, that entry and the category the",
             "# thread established. tests/cli/test_explain_real.py checks it against the kb of the day.", ""]
    for r in sorted((r for r in rows if not r["clean"] and r["first_id"]), key=lambda r: (r["first_id"], r["url"])):
        lines += ["[[message]]", f'entry = "{r["first_id"]}"', f'url = "{r["url"]}"', f'category = "{r["category"]}"', ""]
    return "\n".join(lines)


def explain(rmcp, path, exclude=None, facts=None, data_dir=None):
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "NO_COLOR": "1",
           "RMCP_DATA_DIR": str(data_dir or REPO), "XDG_CACHE_HOME": _CACHE.name}
    cmd = [rmcp, "--format", "json", "explain"] + (["--facts", str(facts)] if facts else ["--no-facts"])
    if exclude:
        cmd += ["--exclude-thread", exclude]
    proc = subprocess.run(cmd + [str(path)], capture_output=True, env=env)
    out = json.loads(proc.stdout) if proc.stdout.strip() else {"problems": []}
    return proc.returncode, out


def real_manifest():
    return threads_corpus.rows()


def kb_categories():
    """id -> category of every entry of kb/."""
    return {d["id"]: d["category"] for d in (tomllib.loads(f.read_text()) for f in sorted((REPO / "kb").glob("*.toml")))}


def manifest_problems(logs):
    """Rows that break the labelling rule: a row naming a kb entry carries that entry's category;
    the file name starts with the category (or `clean`). The same rule for both splits."""
    cats = kb_categories()
    problems = []
    for log in logs:
        entry = log.get("kb_entry", "")
        if entry and entry in cats and log.get("category") != cats[entry]:
            problems.append(f'{log["file"]}: category {log.get("category")!r} but kb entry {entry} is {cats[entry]!r}')
        prefix = "clean" if log.get("clean") else log.get("category", "")
        if not log["file"].startswith(prefix + "--"):
            problems.append(f'{log["file"]}: file name does not start with {prefix}--')
    return problems


def answer_categories(out):
    """The categories of an answer in order, as explain shows them: the first problem's, then
    what the public threads with its message established (`message_causes`, shown under a
    first answer of basis `family`), the other problems', the vote of the similar threads, then
    the similar threads' own (distinct)."""
    problems = [p["category"] for p in out.get("problems", [])]
    causes = [c["category"] for c in (out.get("message_causes") or {}).get("causes", [])]
    cats = problems[:1] + causes + problems[1:]
    if out.get("similar_vote"):
        cats.append(out["similar_vote"]["category"])
    cats += [t["category"] for t in out.get("similar", [])]
    return list(dict.fromkeys(c for c in cats if c))


def evaluate_real(rmcp, facts_dir=None):
    """One row per real log: what the thread says and what rmcp answered, with the index of
    dev threads only (dev rows leave their own thread out). With `facts_dir`, each log is
    explained with --facts (the thread's machine: in_situ_facts) instead of --no-facts."""
    rows = []
    data = dev_only_data_dir()
    for log in real_manifest():
        facts = in_situ_facts(rmcp, log, facts_dir) if facts_dir else None
        rc, out = explain(rmcp, REAL / log["file"], exclude=log["url"] if log["split"] == "dev" else None,
                          facts=facts, data_dir=data)
        problems = out.get("problems", [])
        first = problems[0] if problems else None
        cats = answer_categories(out)
        similar = out.get("similar", [])
        rows.append({
            "file": log["file"], "url": log["url"], "split": log["split"], "clean": log.get("clean", False),
            "category": log.get("category", ""), "kb_entry": log.get("kb_entry", ""),
            "exit": rc, "first_id": first["id"] if first else None,
            "first_category": first["category"] if first else None,
            "first_confidence": first["confidence"] if first else None,
            "basis": out.get("basis", "none"),
            "answer_category": cats[0] if cats else None,
            "top3": cats[:3],
            "similar_first_category": similar[0]["category"] if similar else None,
            "similar_categories": [t["category"] for t in similar[:3]],
            "similar_first": similar[0]["similarity"] if similar else None,
            "ids": [p["id"] for p in problems], "facts_source": out.get("facts_source"),
            "known_family": known_family_line(REAL / log["file"]),
        })
    return rows


BASES = ["signature", "family", "similar", "none"]


def summarise(rows):
    """Per split: threads, logs, and the measures with their numerators and denominators."""
    out = {}
    for split in ("dev", "validation"):
        rs = [r for r in rows if r["split"] == split]
        failing = [r for r in rs if not r["clean"]]
        named = [r for r in failing if r["kb_entry"]]
        clean = [r for r in rs if r["clean"]]
        with_similar = [r for r in failing if r["similar_first_category"]]
        out[split] = {
            "threads": len({r["url"] for r in rs}),
            "logs": len(rs),
            # the kb's answer alone (the first problem), as before issue 31
            "top1_kb": (sum(r["first_category"] == r["category"] for r in failing), len(failing)),
            # the whole answer: the first problem, else the vote of the similar threads
            "top1": (sum(r["answer_category"] == r["category"] for r in failing), len(failing)),
            "top3": (sum(r["category"] in r["top3"] for r in failing), len(failing)),
            "entry_first": (sum(r["first_id"] == r["kb_entry"] for r in named), len(named)),
            "unrecognised": (sum(r["basis"] == "none" for r in failing), len(failing)),
            "unrecognised_kb": (sum(r["first_id"] is None for r in failing), len(failing)),
            "false_positives": (sum(r["basis"] != "none" for r in clean), len(clean)),
            "generic_first": (sum(r["first_confidence"] == "generic" for r in failing), len(failing)),
            # failing logs with an error line of a known family, and how many of them got exit 1
            "family_unrecognised": (sum(r["first_id"] is None for r in failing if r["known_family"]),
                                    sum(bool(r["known_family"]) for r in failing)),
            # retrieval (the similar reports shown): the first one's category is the row's; the
            # row's category among the first 3
            "similar_top1": (sum(r["similar_first_category"] == r["category"] for r in with_similar), len(with_similar)),
            "similar_top3": (sum(r["category"] in r["similar_categories"] for r in with_similar), len(with_similar)),
            "similar_shown": (len(with_similar), len(failing)),
        }
        for basis in BASES:
            answered = [r for r in rs if r["basis"] == basis]
            right = sum(not r["clean"] and r["answer_category"] == r["category"] for r in answered)
            out[split]["basis_" + basis] = (right, len(answered))
    return out


def pct(pair):
    n, d = pair
    return f"{100 * n / d:.1f}% ({n}/{d})" if d else "n/a (0)"


def real_section(rows, rows_situ=None):
    s = summarise(rows)
    s_situ = summarise(rows_situ) if rows_situ else None
    lines = ["## Real logs (threads/)", "",
             "Excerpts copied exactly from public issue threads and forum posts (each with its URL in",
             "`threads/threads.toml`), labelled with the category and kb entry that the thread",
             "established as the cause. The split is frozen by a hash of the thread's URL",
             f"(`split_for()`, {VALIDATION_PERCENT}% to validation); kb changes are written against `dev` only.", "",
             "Labelling rule (checked by this script and `tests/cli/test_explain_real.py` on every row of both",
             "splits): a row that names the kb entry the thread established as the cause carries that entry's",
             "category, since the kb classifies its causes and a label must not contradict it; a row that names",
             "no entry (the thread established none, or no entry fits) keeps the category the thread's cause",
             "implies. The file name starts with the row's category (`clean--` for clean logs). Applying the",
             "rule moved 3 validation rows naming `hip-invalid-device-function` from `unsupported-gpu`",
             "to `missing-code-object`; no dev row broke it. MES rule (issue 13, third round): a row naming no",
             "entry whose failure is the MES scheduler not answering, then a GPU reset, is `gpu-hang` (the",
             "category of `mes-hang`, and of 7 of the 9 such rows before the rule); it moved one dev and one",
             "validation row from `kernel-driver-fault`.", "",
             ] + measures_table(s, s_situ) + [
             "", "Per category (top-1 category hits / failing logs of that category):", "",
             "| category | dev | validation |", "| --- | ---: | ---: |"]
    for cat in CATEGORIES:
        cells = []
        for split in ("dev", "validation"):
            rs = [r for r in rows if r["split"] == split and not r["clean"] and r["category"] == cat]
            cells.append(f"{sum(r['first_category'] == cat for r in rs)}/{len(rs)}" if rs else "-")
        lines.append(f"| {cat} | {cells[0]} | {cells[1]} |")
    lines += ["", "An error line of a known family is recognised by `KNOWN_FAMILY_LINES` in the script, written",
              "from the issue's list (`HSA_STATUS_ERROR_*`, `hipError*`, `MIOpen(HIP): Error` / `MIOpen Error`,",
              "`rocBLAS error`, amdgpu page faults / ring timeouts / GPU resets / `kfd ... not supported`,",
              "`terminate called after throwing`, `RuntimeError: HIP error` / `HIP error:`), independently of the",
              "kb's signatures. Per family, failing logs whose first such line is of that family (dev / validation):", ""]
    fams = [f for f, _ in KNOWN_FAMILY_LINES]
    for split in ("dev", "validation"):
        c = collections.Counter(r["known_family"] for r in rows if r["split"] == split and not r["clean"] and r["known_family"])
        lines.append(f"- {split}: " + ", ".join(f"{f} {c[f]}" for f in fams if c[f]) + ".")
    dev_shrugs = [r["file"] for r in rows if r["split"] == "dev" and not r["clean"] and r["known_family"] and r["first_id"] is None]
    lines += ["", "Dev logs with such a line that got nothing recognised: "
              + (", ".join(f"`{f}`" for f in dev_shrugs) if dev_shrugs else "none")
              + " (validation: counts only, above).", ""]
    # Validation misses are counted, never named: the page is read by whoever next edits the
    # kb, and a named miss with rmcp's answer is exactly what the split exists to hide.
    lines += CALIBRATION
    hidden = sum(1 for r in rows if r["split"] == "validation" and is_miss(r))
    lines += ["Misses (first answer differs from the thread's cause). Dev rows only; validation has "
              f"{hidden}, counted and not listed, so that kb work cannot be steered by them:", "",
              "| split | log | thread says | rmcp first |", "| --- | --- | --- | --- |"]
    for r in rows:
        if r["split"] == "validation" or not is_miss(r):
            continue
        said = "clean" if r["clean"] else f"{r['kb_entry'] or '-'} ({r['category']})"
        got = f"{r['first_id']} ({r['first_category']})" if r["first_id"] else "nothing recognised"
        lines.append(f"| {r['split']} | {r['file']} | {said} | {got} |")
    return lines, s


CALIBRATION = ['### Calibration of the similar reports (dev threads only)',
    '',
    '`k_show_similarity` and `k_vote_similarity` (src/core/similar/index.cpp) were set from one run of', "this script's dev rows with a build whose thresholds were 0 (2026-11-28; leave-one-thread-out, never", 'a validation row). Failing dev logs whose first similar thread was at or above a similarity, and how', "many of those threads established the log's category:", '', "| similarity of the first similar thread | failing dev logs | its category is the log's |", '| --- | ---: | ---: |',
    '| below 0.1 | 22 | 8 |',
    '| 0.1 to 0.2 | 22 | 6 |',
    '| 0.2 to 0.3 | 28 | 15 |',
    '| 0.3 to 0.4 | 19 | 13 |',
    '| 0.4 to 0.5 | 25 | 17 |',
    '| 0.5 to 0.7 | 41 | 26 |',
    '| 0.7 and above | 146 | 110 |',
    '',
    'Below 0.3 the first thread is right about half the time or less: reports are shown from 0.3.',
    'Clean dev logs: the nearest failing thread of one (`clean--ollama-8473.log`) had similarity 1.0',
    '(benign lines that a failing thread printed too) and of another 0.5, but no clean log had two of its',
    'nearest three agree on a category; hence the vote needs 2 agreeing threads of the nearest 3 at or', "above 0.3. Of the 14 dev logs no kb entry recognised, none was answered right by the threads' vote at", 'any threshold (the one voted, `install-mismatch--tensorflow-upstream-1196.log`, at 0.74, wrong).',
    '']


MEASURES = [
    ("threads", "threads"),
    ("logs", "logs"),
    ("top1", "top-1 category (the answer: the first problem, else the similar threads' vote)"),
    ("top3", "the right category among the first 3 answers"),
    ("top1_kb", "top-1 category, kb entries only (as before issue 31)"),
    ("entry_first", "right entry first"),
    ("unrecognised", "nothing recognised (basis `none`, failing logs)"),
    ("unrecognised_kb", "no kb entry recognised (failing logs)"),
    ("false_positives", "problems reported on clean logs (any basis but `none`)"),
    ("generic_first", "answered by a family entry only"),
    ("family_unrecognised", "failing logs with an error line of a known family: no kb entry"),
    ("similar_shown", "failing logs with similar public reports shown"),
    ("similar_top1", "... the first similar thread's category is the log's"),
    ("similar_top3", "... the log's category among the first 3 similar threads"),
]


def measures_table(s, s_situ):
    """dev, validation and (with --in-situ) validation in situ, side by side; then per basis
    the answers given and how many named the thread's category (precision)."""
    cols = ["dev", "validation"] + (["validation, in situ"] if s_situ else [])
    lines = ["| measure | " + " | ".join(cols) + " |", "| --- |" + " ---: |" * len(cols)]

    def cell(summary, key):
        v = summary[key]
        return str(v) if isinstance(v, int) else pct(v)
    for key, label in MEASURES:
        cells = [cell(s["dev"], key), cell(s["validation"], key)] + ([cell(s_situ["validation"], key)] if s_situ else [])
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    lines += ["", "Per basis (`basis` in explain's JSON; docs/explain.md, \"Basis\"): answers with that basis whose",
              "category is the thread's (precision; a clean log answered counts as wrong) / answers given:", "",
              "| basis | " + " | ".join(cols) + " |", "| --- |" + " ---: |" * len(cols)]
    for basis in BASES:
        key = "basis_" + basis
        if basis == "none":
            cells = [str(s["dev"][key][1]), str(s["validation"][key][1])] + ([str(s_situ["validation"][key][1])] if s_situ else [])
            lines.append("| none (answers without a category) | " + " | ".join(cells) + " |")
            continue
        cells = [pct(s["dev"][key]), pct(s["validation"][key])] + ([pct(s_situ["validation"][key])] if s_situ else [])
        lines.append(f"| {basis} | " + " | ".join(cells) + " |")
    return lines


def in_situ_facts(rmcp, log, facts_dir):
    """The facts file of the thread's machine, as far as the thread states it (gfx target, GPU
    name, ROCm and PyTorch versions, the failing run's environment variables and the kernel
    release in threads.toml; bench/threads_facts.py): written as the lines a bug report shows
    ("export NAME=value", "Kernel: RELEASE") and read back by `rmcp detect --from-report` into
    `detect --format json`'s schema. None when the thread states none of them (the log is then
    explained with --no-facts)."""
    lines = []
    if log.get("gfx_target"):
        lines += ["Agent 2", f"  Name:                    {log['gfx_target']}"]
        if log.get("gpu"):
            lines.append(f"  Marketing Name:          {log['gpu']}")
    if log.get("rocm"):
        lines.append(f"ROCm version: {log['rocm']}")
    if log.get("torch"):
        lines.append(f"PyTorch version: {log['torch']}")
    lines += [f"export {o}" for o in log.get("overrides", [])]
    if log.get("kernel"):
        lines.append(f"Kernel: {log['kernel']}")
    if not lines:
        return None
    facts_dir = pathlib.Path(facts_dir)
    report = facts_dir / (log["file"] + ".report")
    report.write_text("\n".join(lines) + "\n")
    proc = subprocess.run([rmcp, "--format", "json", "detect", "--from-report", str(report)], capture_output=True,
                          env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "RMCP_DATA_DIR": str(REPO)})
    if proc.returncode != 0:
        raise SystemExit(f"rmcp detect --from-report {report}: {proc.stderr.decode()}")
    facts = facts_dir / (log["file"] + ".json")
    facts.write_bytes(proc.stdout)
    return facts


def is_miss(r):
    """A clean log that alarms, or a failing log whose first answer is not the thread's cause
    (category, and entry where the row names one)."""
    if r["clean"]:
        return bool(r["first_id"])
    entry_ok = not r["kb_entry"] or r["first_id"] == r["kb_entry"]
    return not (r["first_category"] == r["category"] and entry_ok)


def written_section(rmcp):
    manifest = tomllib.loads((LOGS / "EXPECTED.toml").read_text())["log"]
    per_cat = collections.defaultdict(lambda: [0, 0])
    first_ok = first_total = clean_ok = clean_total = 0
    false_alarms = []
    for log in manifest:
        rc, out = explain(rmcp, LOGS / log["file"])
        found = {p["id"]: p for p in out["problems"]}
        expects = log.get("expect", [])
        if not expects:
            clean_total += 1
            clean_ok += rc == 1 and not found
        for e in expects:
            p = found.get(e["id"])
            hit = p is not None and p["category"] == e["category"] and set(e["lines"]) <= {o["line"] for o in p["occurrences"]}
            per_cat[e["category"]][0] += hit
            per_cat[e["category"]][1] += 1
        if "first" in log:
            first_total += 1
            first_ok += bool(out["problems"]) and out["problems"][0]["id"] == log["first"]
        expected_ids = {e["id"] for e in expects}
        false_alarms += [f'{log["file"]}: {i}' for i, p in found.items()
                         if i not in expected_ids and p["confidence"] != "generic"]
    hits = sum(h for h, _ in per_cat.values())
    total = sum(n for _, n in per_cat.values())
    lines = ["## Written logs (tests/logs/, format tests)", "",
             "Logs we wrote from the documented message formats (`tests/logs/make_corpus.py`): they check",
             "that formats, noise, CRLF, gzip and long lines are handled, not that rmcp is right in the wild.", "",
             f"- Expected (entry, category, lines) recognised: {hits} of {total}.",
             f"- Ranked first as expected: {first_ok} of {first_total} logs.",
             f"- Clean logs giving exit 1: {clean_ok} of {clean_total}.",
             f"- Specific entries recognised that the manifest does not expect: {len(false_alarms)}"
             + ("" if not false_alarms else " (" + "; ".join(false_alarms) + ")") + "."]
    ok = hits == total and first_ok == first_total and clean_ok == clean_total and not false_alarms
    return lines, ok


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rmcp", default=str(REPO / "build" / "rmcp"))
    ap.add_argument("--out", default=str(REPO / "docs" / "explain-accuracy.md"))
    ap.add_argument("--in-situ", action="store_true",
                    help="also explain every log with --facts FILE, the thread's machine (in_situ_facts)")
    ap.add_argument("--update-message-causes", action="store_true",
                    help="rewrite threads/message-causes.toml from this kb's first answers, then measure")
    args = ap.parse_args()
    bad = manifest_problems(real_manifest())
    if bad:
        raise SystemExit("threads/threads.toml breaks the labelling rule:\n  " + "\n  ".join(bad))
    rows = evaluate_real(args.rmcp)
    if args.update_message_causes:
        MESSAGE_CAUSES.write_text(message_causes_text(rows))
        # measured again against the file just written (its dev part is what the index holds)
        _DATA.cleanup()
        globals()["_DATA"] = tempfile.TemporaryDirectory(prefix="rmcp-accuracy-data-")
        rows = evaluate_real(args.rmcp)
    rows_situ = None
    if args.in_situ:
        with tempfile.TemporaryDirectory(prefix="rmcp-in-situ-") as facts_dir:
            rows_situ = evaluate_real(args.rmcp, facts_dir)
    real_lines, s = real_section(rows, rows_situ)
    written_lines, written_ok = written_section(args.rmcp)
    head = ["# rmcp explain: accuracy", "",
            "Generated by `/usr/bin/python3 bench/explain_accuracy.py --in-situ` (do not edit by hand). Every log",
            "is explained with `rmcp --format json explain --no-facts LOG` (a bug report inside the log still",
            "supplies the reporter's facts), the similar public reports looked up in an index of the dev",
            "threads only, a dev log leaving its own thread out (`--exclude-thread URL`): no thread ever",
            "retrieves itself. In situ: the same with `--facts FILE` instead of `--no-facts`, the facts of the",
            "thread's machine as the thread states them (`in_situ_facts()`: gfx target, GPU name, ROCm and",
            "PyTorch versions, the failing run's environment variables (`overrides`, never what the thread",
            "names as the fix) and the kernel release from threads.toml (`bench/threads_facts.py`), read by",
            "`rmcp detect --from-report`), as rmcp would answer on that machine; a thread that states none of",
            "them is explained without facts. The answers, in order: the first problem, then under a first",
            "answer of basis `family` the categories of \"public threads with this message\"",
            "(`threads/message-causes.toml`, its dev records only, a dev log's own thread left out), the other",
            "problems, the similar threads' vote and their own categories.", ""]
    pathlib.Path(args.out).write_text("\n".join(head + real_lines + [""] + written_lines) + "\n")
    v = s["validation"]
    if rows_situ:
        vs = summarise(rows_situ)["validation"]
        print(f"in situ (validation): top-1 {pct(vs['top1'])}, top-3 {pct(vs['top3'])}, none {pct(vs['unrecognised'])}, "
              f"signature precision {pct(vs['basis_signature'])}, clean alarms {pct(vs['false_positives'])}")
    print(f"validation: top-3 {pct(v['top3'])}, signature precision {pct(v['basis_signature'])}, "
          f"similar precision {pct(v['basis_similar'])}, similar top-1 {pct(v['similar_top1'])}; "
          f"dev: signature precision {pct(s['dev']['basis_signature'])}, similar top-1 {pct(s['dev']['similar_top1'])}")
    print(f"validation: top-1 {pct(v['top1'])}, entry first {pct(v['entry_first'])}, "
          f"unrecognised {pct(v['unrecognised'])}, known-family unrecognised {pct(v['family_unrecognised'])}, "
          f"false positives {pct(v['false_positives'])}; "
          f"dev: top-1 {pct(s['dev']['top1'])}, entry first {pct(s['dev']['entry_first'])}, "
          f"known-family unrecognised {pct(s['dev']['family_unrecognised'])}; written corpus {'ok' if written_ok else 'FAILS'} -> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
