"""Patch commands under random concurrency (docs/security.md, "Decisions under one lock" and
"Temporary files owned by a lock"; docs/testing.md, "Concurrency stress").

Rounds of apply / rollback / status processes started at random offsets over one fixture
root, each with a random test-only delay before every lock and rename
(RMCP_TEST_DELAY_AT=lock,rename:MS, honoured only under a --root), so that the windows a
preemption or a slow disk would open are wide. After each round:

- no command failed except for the documented "lock held" and "changed after the plan" refusals
  (no exit 4 or 5, no signal), no journal is interrupted, in progress or corrupt;
- a target no applied transaction touches holds its original bytes;
- every applied transaction is rolled back, newest first, and each rollback leaves its targets
  exactly as its journal recorded them (the backup's bytes, or absent);
- at the end every target holds the user's original bytes, and no temporary file is left.

The seed is printed and named in every failure: RMCP_STRESS_SEED=N replays the schedule
(the OS scheduler still varies). The CI run is bounded (RMCP_STRESS_SECONDS, default 25 s of
rounds); the soak is documented in docs/testing.md.
"""
import json
import os
import pathlib
import random
import subprocess
import time

from conftest import REPO, write

HOME = "/home/u"
ENV_FILE = "home/u/.config/rmcp/profile.env"
ORIGINAL = b"# mine\nexport KEEP_ME='yes'\n"
# User-level patches (profile.env) and one system patch (/etc/modprobe.d, allowed under
# --root with RMCP_ASSUME_UID=0); a set mixing both is one system transaction that also
# writes the user's profile.env (the D10 case).
USER_PATCHES = ["env-miopen-no-gemm", "env-miopen-find-fast", "env-serialize-kernels"]
SYSTEM_PATCHES = ["modprobe-cwsr-disable"]
TARGETS = [ENV_FILE, "etc/modprobe.d/rmcp-cwsr.conf"]

SEED = int(os.environ.get("RMCP_STRESS_SEED") or random.SystemRandom().randrange(2**32))
ROUNDS = int(os.environ.get("RMCP_STRESS_ROUNDS", "200"))
SECONDS = float(os.environ.get("RMCP_STRESS_SECONDS", "25"))

REFUSALS = (b"another rmcp patch apply or rollback is running", b"it changed after the plan was made")


def env_for(delay):
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "NO_COLOR": "1", "RMCP_DATA_DIR": str(REPO),
           "HOME": HOME, "RMCP_ASSUME_UID": "0"}
    if delay:
        env["RMCP_TEST_DELAY_AT"] = delay
    return env


def read(root, rel):
    p = root / rel
    return p.read_bytes() if p.exists() else None


def status(binary, root, where):
    proc = subprocess.run([binary, "--root", root, "--format", "json", "patch", "status"], env=env_for(None),
                          capture_output=True, timeout=60)
    assert proc.returncode == 0, (where, proc.stderr)
    return json.loads(proc.stdout)["transactions"]


def backup_of(txn, index):
    """The journal's record of target `index` before the transaction: bytes, or None (absent)."""
    journal = json.loads((pathlib.Path(txn["journal"]) / "journal.json").read_text())
    t = journal["targets"][index]
    return (pathlib.Path(txn["journal"]) / t["backup"]).read_bytes() if t["existed"] else None


def test_random_interleavings_keep_journals_and_files_in_agreement(rmcp, tmp_path):
    binary = str(rmcp.binary)
    rng = random.Random(SEED)
    seed = f"RMCP_STRESS_SEED={SEED}"
    print(seed)
    root = tmp_path / "root"
    write(root / "etc/os-release", 'ID=debian\nVERSION_ID="12"\n')
    (root / "etc/modprobe.d").mkdir(parents=True)
    write(root / ENV_FILE, ORIGINAL, 0o600)
    originals = {rel: read(root, rel) for rel in TARGETS}

    started = time.monotonic()
    rounds = 0
    while rounds < ROUNDS and time.monotonic() - started < SECONDS:
        rounds += 1
        where = f"{seed} round {rounds}"
        # Something to roll back from the start: a rollback racing an apply is the case
        # that matters most (D2).
        for _ in range(rng.randint(0, 2)):
            subprocess.run([binary, "--root", root, "patch", "apply", "--yes", *rng.sample(USER_PATCHES, 1)],
                           env=env_for(None), capture_output=True, timeout=60)
        known = [t["id"] for t in status(binary, root, where)]
        procs = []
        for _ in range(rng.randint(3, 6)):
            kind = rng.choice(["apply", "apply", "rollback", "rollback", "status"])
            if kind == "apply":
                ids = rng.sample(USER_PATCHES, rng.randint(1, 2))
                if rng.random() < 0.3:
                    ids += SYSTEM_PATCHES
                args = ["patch", "apply", "--yes", *ids]
            elif kind == "rollback":
                args = ["patch", "rollback"]
                if known and rng.random() < 0.3:
                    args.append(rng.choice(known))
            else:
                args = ["patch", "status"]
            points = rng.choice(["lock", "rename", "lock,rename"])
            delay = f"{points}:{rng.choice([1, 5, 20, 60, 150])}" if rng.random() < 0.8 else None
            offset = rng.uniform(0, 0.15)
            procs.append((offset, args, delay))
        procs.sort(key=lambda p: p[0])
        t0 = time.monotonic()
        running = []
        for offset, args, delay in procs:
            time.sleep(max(0.0, t0 + offset - time.monotonic()))
            running.append((args, delay, subprocess.Popen([binary, "--root", root, *args], env=env_for(delay),
                                                          stdout=subprocess.PIPE, stderr=subprocess.PIPE)))
        for args, delay, p in running:
            out, err = p.communicate(timeout=120)
            what = (where, args, delay, p.returncode, err.decode(errors="replace"))
            if p.returncode == 3:
                assert any(r in err for r in REFUSALS), what
            elif p.returncode == 2:
                # Rolling back a named transaction a newer one touched again: refused, by design.
                assert args[:2] == ["patch", "rollback"] and b"roll that back first" in err, what
            else:
                assert p.returncode == 0, what

        txns = status(binary, root, where)
        assert all(t["state"] in ("applied", "rolled-back") for t in txns), (where, txns)
        applied = [t for t in txns if t["state"] == "applied"]
        touched = {jt["path"] for t in applied for jt in t["targets"]}
        for rel in TARGETS:
            if "/" + rel not in touched:
                assert read(root, rel) == originals[rel], (where, rel, read(root, rel), txns)

        # Roll everything back, newest first: each rollback restores exactly its journal's bytes.
        while applied:
            newest = applied[-1]
            proc = subprocess.run([binary, "--root", root, "--format", "json", "patch", "rollback"],
                                  env=env_for(None), capture_output=True, timeout=60)
            assert proc.returncode == 0, (where, proc.stderr)
            assert json.loads(proc.stdout)["transaction"] == newest["id"], (where, proc.stdout, newest)
            for i, jt in enumerate(newest["targets"]):
                assert read(root, jt["path"].lstrip("/")) == backup_of(newest, i), (where, newest, jt)
            applied = [t for t in status(binary, root, where) if t["state"] == "applied"]
        for rel in TARGETS:
            assert read(root, rel) == originals[rel], (where, "not the original bytes after rolling back everything",
                                                       rel, read(root, rel))
        leftovers = [str(p) for p in root.rglob("*") if ".rmcp-tmp-" in p.name]
        assert not leftovers, (where, leftovers)
    print(f"{seed}: {rounds} rounds in {time.monotonic() - started:.1f} s")
    assert rounds >= 3, (seed, rounds)  # a run too slow to stress anything says so
