#!/usr/bin/python3
"""The machine matrix (docs/testing.md, "Machine matrix"; issue 28 item 3).

Writes every machine of tests/matrix/gen_machines.py (or a sample, --sample N) into a scratch
directory, runs rmcp_matrix_check over them (two processes when there are two cores), and
for each distinct violation (invariant + the kb entries/patches responsible) shrinks one
failing machine to the smallest that still fails: fewer GPUs, no override, a simpler PyTorch,
tried one dimension at a time. Prints each violation with its minimal machine, whose tree is
kept for `rmcp --root TREE doctor`. Exit 1 when there is a violation, 0 when there is none.

    run_matrix.py --checker build/tests/matrix/rmcp_matrix_check --data .
    run_matrix.py ... --machine '{"target": "gfx1036", "override": "none", "torch": "rocm-with",
                                  "topology": "one", "runtime": "6.3+"}'     # one machine
"""
import argparse
import json
import multiprocessing
import os
import pathlib
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import gen_machines as gm  # noqa: E402

DIMS = ("target", "override", "torch", "topology", "runtime")
# Simplest first: shrinking tries the values before the current one.
ORDER = {"topology": ["one", "igpu-dgpu", "two-dgpu"],
         "override": ["none", "same", "pernode", "malformed", "cross"],
         "torch": ["none", "cpu", "cuda", "rocm-with", "rocm-sibling", "rocm-without"],
         "runtime": ["6.3+", "6.2", "none"]}


def complexity(dims):
    return sum(ORDER[k].index(dims[k]) for k in ORDER)


def unique_machines(dims_list):
    out, seen = [], set()
    for d in dims_list:
        m = gm.describe(d)
        if m is None:
            continue
        sig = json.dumps({k: m[k] for k in ("gpus", "env", "torch", "rocm")}, sort_keys=True)
        if sig not in seen:
            seen.add(sig)
            out.append(m)
    return out


def _write_chunk(args):
    machines, out = args
    for m in machines:
        gm.write_machine(m, pathlib.Path(out))
    return len(machines)


def write_all(machines, out, jobs):
    out.mkdir(parents=True, exist_ok=True)
    if jobs > 1 and len(machines) > 50:
        chunks = [(machines[i::jobs], str(out)) for i in range(jobs)]
        with multiprocessing.Pool(jobs) as pool:
            pool.map(_write_chunk, chunks)
    else:
        _write_chunk((machines, str(out)))


def run_checker(checker, data, machines, out, jobs, check_table=False):
    """Runs the checker over `machines` (already written under `out`); returns the violations.
    check_table: the first process also compares the table with rmcp's gfx.cpp."""
    parts = [machines[i::jobs] for i in range(jobs)] if jobs > 1 and len(machines) > 50 else [machines]
    procs = []
    for i, part in enumerate(parts):
        manifest = out / f"manifest.{i}.json"
        manifest.write_text(json.dumps(dict(gm.manifest(part), check_table=check_table and i == 0)))
        procs.append(subprocess.Popen([str(checker), str(manifest), str(data), str(out / f".scratch.{i}")],
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    violations, notes, failed = [], [], False
    for p in procs:
        stdout, stderr = p.communicate()
        notes.append(stderr.strip())
        if p.returncode != 0:
            failed = True
        violations += [json.loads(line) for line in stdout.splitlines() if line.strip()]
    if failed:
        sys.exit("run_matrix: the checker failed:\n" + "\n".join(notes))
    return violations, notes


def key_of(v):
    """A violation's identity: the invariant, the step kind and who is responsible, without the
    node numbers (they move when a GPU is removed)."""
    # "patch P (first fix of E1, E2)": the patch decides the kind; the entries are listed per group.
    who = sorted({re.sub(r" \(first fix of .*\)$", "", re.sub(r"@node\d+", "", w)) for w in v["responsible"]})
    step = "next:" if v["step"].startswith("next:") else v["step"]
    invariant = v["invariant"]
    if invariant == "I6 worse":  # harm and unmasking are different kinds
        invariant += " (broke a working GPU)" if "it broke a working GPU" in v["detail"] else " (unmasked)"
    return (invariant, step, tuple(who))


def shrink(groups, checker, data, work, jobs, rounds=8):
    """Greedy: per round, every one-dimension simplification of every group's current machine
    is checked in one batch; a group moves to its simplest candidate that still shows the same
    violation. Returns {key: (dims, violation)}."""
    current = {k: (vs[0]["dims"], vs[0]) for k, vs in groups.items()}
    for r in range(rounds):
        cands = {}
        for k, (dims, _) in current.items():
            for dim, order in ORDER.items():
                for value in order[:order.index(dims[dim])]:
                    d = dict(dims, **{dim: value})
                    cands.setdefault(gm.machine_id(d), (d, set()))[1].add(k)
        machines = {m["id"]: m for m in unique_machines(d for d, _ in cands.values())}
        if not machines:
            break
        out = work / f"shrink{r}"
        write_all(list(machines.values()), out, jobs)
        found, _ = run_checker(checker, data, list(machines.values()), out, jobs)
        by_machine = {}
        for v in found:
            by_machine.setdefault(v["machine"], []).append(v)
        moved = False
        for k in current:
            best = None
            for mid, (d, wanted) in cands.items():
                if k not in wanted or mid not in machines:
                    continue
                hit = next((v for v in by_machine.get(mid, []) if key_of(v) == k), None)
                if hit and (best is None or complexity(d) < complexity(best[0])):
                    best = (d, hit)
            if best:
                current[k] = best
                moved = True
        if not moved:
            break
    return current


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--checker", required=True, type=pathlib.Path)
    ap.add_argument("--data", required=True, type=pathlib.Path, help="directory with kb/, patches/, profiles/")
    ap.add_argument("--full", action="store_true", default=bool(os.environ.get("RMCP_MATRIX_FULL")),
                    help="every runtime of every combination too (some 5,500 machines, about twice the time; "
                    "also RMCP_MATRIX_FULL=1)")
    ap.add_argument("--sample", type=int, default=0, help="check this many of the machines, drawn with a fixed seed")
    ap.add_argument("--seed", type=int, default=28)
    ap.add_argument("--machine", action="append", help="check only this machine (a dimension object, JSON)")
    ap.add_argument("--keep", type=pathlib.Path, default=pathlib.Path("matrix-failures"),
                    help="where the minimal failing trees are kept")
    ap.add_argument("--report", type=pathlib.Path, help="also write the violations as JSON here")
    ap.add_argument("--no-shrink", action="store_true")
    ap.add_argument("--work", type=pathlib.Path, help="write the trees here and keep them (default: a temporary "
                    "directory, on /dev/shm when there is one, removed at the end)")
    ap.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    args = ap.parse_args(argv[1:])

    t0 = time.monotonic()
    if args.machine:
        machines = unique_machines(json.loads(d) for d in args.machine)
    else:
        machines = unique_machines(gm.all_dims(args.full))
        if args.sample and args.sample < len(machines):
            machines = random.Random(args.seed).sample(machines, args.sample)
    # tmpfs when there is one with room (the Applier fsyncs every write it journals; the trees
    # take some 250 KiB each there, 4 KiB per small file, so about 650 MiB for the default run;
    # a container's 64 MiB /dev/shm is left alone): else the default temporary directory.
    shm = pathlib.Path("/dev/shm")
    roomy = False
    if shm.is_dir() and os.access(shm, os.W_OK):
        st = os.statvfs(shm)
        roomy = st.f_bavail * st.f_frsize > 2 * 300 * 1024 * len(machines) + (256 << 20)
    base = os.environ.get("RMCP_MATRIX_DIR") or (str(shm) if roomy else None)
    work = args.work or pathlib.Path(tempfile.mkdtemp(prefix="rmcp-matrix.", dir=base))
    try:
        write_all(machines, work / "all", args.jobs)
        t1 = time.monotonic()
        violations, notes = run_checker(args.checker.resolve(), args.data.resolve(), machines, work / "all",
                                        args.jobs, check_table=True)
        table = [v for v in violations if v["invariant"] == "table"]
        violations = [v for v in violations if v["invariant"] != "table"]
        t2 = time.monotonic()
        print(f"machine matrix: {len(machines)} machines from {gm.TABLE.relative_to(gm.SOURCE)} "
              f"({len(gm.TARGETS)} targets); trees written in {t1 - t0:.1f} s, checked in {t2 - t1:.1f} s")
        for n in notes:
            for line in n.splitlines():
                print("  " + line)
        groups = {}
        for v in violations:
            groups.setdefault(key_of(v), []).append(v)
        for vs in groups.values():
            vs.sort(key=lambda v: complexity(v["dims"]))
        minimal = {} if args.no_shrink else shrink(groups, args.checker.resolve(), args.data.resolve(), work,
                                                   args.jobs)
        report = []
        # The trees of an earlier run go: only this run's minimal machines are kept.
        if args.keep.is_dir():
            for old in args.keep.iterdir():
                if old.is_dir() and re.fullmatch(r"[a-z0-9.+-]+", old.name):
                    shutil.rmtree(old)
        if groups:
            args.keep.mkdir(parents=True, exist_ok=True)
        for k, vs in sorted(groups.items(), key=lambda kv: (kv[0][0], -len(kv[1]))):
            dims, v = minimal.get(k, (vs[0]["dims"], vs[0]))
            tree = args.keep.resolve() / v["machine"]
            if tree.exists():
                shutil.rmtree(tree)
            shutil.copytree(v["tree"], tree, symlinks=True)
            entries = sorted({e for x in vs for w in x["responsible"]
                              for e in re.findall(r"first fix of (.*)\)$", w)[0:1] for e in e.split(", ")})
            report.append({"invariant": k[0], "step": k[1], "responsible": list(k[2]), "entries": entries,
                           "machines": len(vs),
                           "minimal": dims, "detail": v["detail"], "tree": str(tree),
                           "examples": [x["machine"] for x in vs[:5]]})
        for r in report:
            print(f"\nVIOLATION {r['invariant']} at {r['step']} ({r['machines']} machines)")
            print(f"  responsible: {', '.join(r['responsible'])}"
                  + (f" (first fix of: {', '.join(r['entries'])})" if r["entries"] else ""))
            print(f"  minimal machine: {json.dumps(r['minimal'])}")
            print(f"  {r['detail']}")
            print(f"  reproduce: HOME={gm.HOME} RMCP_DATA_DIR={args.data.resolve()} rmcp --root {r['tree']} doctor")
            print(f"  or: {sys.argv[0]} --checker {args.checker} --data {args.data} --machine "
                  f"'{json.dumps(r['minimal'])}'")
        for v in table:
            print(f"\nTABLE {v['machine']}: {v['detail']} (data/gfx-targets.toml and src/core/detect/gfx.cpp disagree)")
        if args.report:
            args.report.write_text(json.dumps(report, indent=1))
        print(f"\nmachine matrix: {len(machines)} machines, {len(violations)} violations in {len(groups)} kinds, "
              f"{time.monotonic() - t0:.1f} s")
        return 1 if violations or table else 0
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
