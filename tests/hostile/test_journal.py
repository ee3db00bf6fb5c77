"""Journals are data from an untrusted place, and apply tells the truth about a failure
(docs/patches.md, "Journal"; docs/security.md)."""
import contextlib
import json
import os
import pathlib
import signal
import subprocess
import time

import pytest

from conftest import write

HOME = "/home/u"
ENV_FILE = "home/u/.config/rmcp/profile.env"
ORIGINAL = "# mine\nexport KEEP_ME='yes'\n"


def penv(**extra):
    env = {"HOME": HOME, "RMCP_ASSUME_UID": "0"}
    env.update({k: str(v) for k, v in extra.items()})
    return env


def make_root(tmp_path, name="root"):
    root = tmp_path / name
    write(root / "etc/os-release", 'ID=debian\nVERSION_ID="12"\n')
    (root / "etc/modprobe.d").mkdir(parents=True)
    write(root / ENV_FILE, ORIGINAL, 0o600)
    return root


def status(rmcp, root):
    return rmcp.json("--root", root, "patch", "status", env=penv())["transactions"]


def journal_of(txn):
    return pathlib.Path(txn["journal"]) / "journal.json"


@pytest.mark.parametrize("garbage", [b"{not json", b"", b"\xff\xfe", b"[]", b'{"id": 5}', b"null",
                                     b'{"schema_version": 1, "id": "x", "state": "applied", "patches": [],'
                                     b' "created_dirs": [], "targets": [{"path": "/etc/x"}]}'])
def test_a_corrupt_journal_is_reported_and_skipped(rmcp, tmp_path, garbage):
    """One corrupt journal.json made `patch status` and every `patch rollback` (even of
    another, valid transaction) fail with exit 3."""
    root = make_root(tmp_path)
    rmcp("--root", root, "patch", "apply", "--yes", "env-miopen-no-gemm", env=penv(), check=0)
    rmcp("--root", root, "patch", "apply", "--yes", "modprobe-cwsr-disable", env=penv(), check=0)
    first, second = status(rmcp, root)
    journal_of(first).write_bytes(garbage)
    proc = rmcp("--root", root, "patch", "status", env=penv(), check=0)
    assert str(journal_of(first)) in proc.stdout.decode() + proc.stderr.decode()
    listed = status(rmcp, root)
    assert [t["state"] for t in listed] == ["corrupt", "applied"], listed
    assert listed[0]["journal"] == first["journal"] and listed[0]["error"]
    # The valid transaction rolls back, by id and as "the newest".
    rmcp("--root", root, "patch", "rollback", second["id"], env=penv(), check=0)
    assert not (root / "etc/modprobe.d/rmcp-cwsr.conf").exists()
    # The corrupt one cannot be rolled back, and says why and where.
    proc = rmcp("--root", root, "patch", "rollback", first["id"], env=penv())
    assert proc.returncode == 3 and str(journal_of(first)) in proc.stderr.decode(), proc.stderr
    assert (root / ENV_FILE).read_text() != ORIGINAL  # untouched: nothing trusted from it


def test_temporary_files_of_a_killed_apply_are_removed_by_the_next_status(rmcp, tmp_path):
    root = make_root(tmp_path)
    proc = rmcp("--root", root, "patch", "apply", "--yes", "env-miopen-no-gemm",
                env=penv(RMCP_TEST_KILL_AFTER_STEP=0))
    assert proc.returncode == -signal.SIGKILL
    env_dir = (root / ENV_FILE).parent
    # What a kill inside an atomic write leaves: a temporary file next to the target and one
    # next to a journal file.
    stray = write(env_dir / "profile.env.rmcp-tmp-AbC123", "half")
    (txn,) = status(rmcp, root)
    stray_journal = write(pathlib.Path(txn["journal"]) / "journal.json.rmcp-tmp-XyZ789", "{")
    rmcp("--root", root, "patch", "status", env=penv(), check=0)
    assert not stray.exists() and not stray_journal.exists()
    rmcp("--root", root, "patch", "rollback", env=penv(), check=0)
    assert (root / ENV_FILE).read_text() == ORIGINAL


@contextlib.contextmanager
def small_tmpfs(path, options):
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(path)], check=True)
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


def need_root_for_mounts():
    if os.geteuid() != 0:
        pytest.skip("SKIPPED VISIBLY: mounting a small tmpfs needs root; run the hostile suite as root "
                    "to check ENOSPC and read-only directories")


def test_full_disk_rolls_back_with_exit_4(rmcp, tmp_path):
    """On a full disk the target was left unchanged but apply exited 5 ("rollback is
    incomplete") and the transaction stayed "interrupted"."""
    need_root_for_mounts()
    root = make_root(tmp_path)
    env_dir = (root / ENV_FILE).parent
    saved = (root / ENV_FILE).read_bytes()
    (root / ENV_FILE).unlink()
    with small_tmpfs(env_dir, "size=16k,mode=0755"):
        write(env_dir / "profile.env", saved, 0o600)
        with contextlib.suppress(OSError):
            with open(env_dir / "filler", "wb") as f:
                while True:
                    f.write(b"\0" * 4096)
                    f.flush()
        proc = rmcp("--root", root, "patch", "apply", "--yes", "env-miopen-no-gemm", env=penv())
        assert proc.returncode == 4, proc.stderr
        assert b"rolled back" in proc.stderr
        assert (env_dir / "profile.env").read_bytes() == saved
        assert [t["state"] for t in status(rmcp, root)] == ["failed-rolled-back"]  # not "interrupted"
        assert not [p for p in env_dir.iterdir() if ".rmcp-tmp-" in p.name]


def test_read_only_directory_rolls_back_with_exit_4(rmcp, tmp_path):
    need_root_for_mounts()
    root = make_root(tmp_path)
    env_dir = (root / ENV_FILE).parent
    saved = (root / ENV_FILE).read_bytes()
    (root / ENV_FILE).unlink()
    with small_tmpfs(env_dir, "size=64k,mode=0755"):
        write(env_dir / "profile.env", saved, 0o600)
        subprocess.run(["mount", "-o", "remount,ro", str(env_dir)], check=True)
        proc = rmcp("--root", root, "patch", "apply", "--yes", "env-miopen-no-gemm", env=penv())
        assert proc.returncode == 4, proc.stderr
        assert b"rolled back" in proc.stderr
        assert (env_dir / "profile.env").read_bytes() == saved
        assert [t["state"] for t in status(rmcp, root)] == ["failed-rolled-back"]


def test_exit_5_only_when_a_target_really_differs(rmcp, tmp_path):
    """The restore failed (injected), but was the target changed? Step 1 wrote it: yes, 5."""
    root = make_root(tmp_path)
    proc = rmcp("--root", root, "patch", "apply", "--yes", "env-miopen-no-gemm", "modprobe-cwsr-disable",
                env=penv(RMCP_TEST_FAIL_STEP=2, RMCP_TEST_FAIL_RESTORE=1))
    assert proc.returncode == 5, proc.stderr
    assert ENV_FILE.encode() in proc.stderr
    # Failing at step 1 changes nothing: even with restores failing, that is exit 4.
    root2 = make_root(tmp_path, "root2")
    proc = rmcp("--root", root2, "patch", "apply", "--yes", "env-miopen-no-gemm",
                env=penv(RMCP_TEST_FAIL_STEP=1, RMCP_TEST_FAIL_RESTORE=1))
    assert proc.returncode == 4, proc.stderr
    assert (root2 / ENV_FILE).read_text() == ORIGINAL


def test_rollback_chooses_under_the_lock_an_apply_in_between_is_not_undone(rmcp, tmp_path):
    """D2: rollback chose T1 before taking the lock; an apply (T2) that landed in between was
    silently undone, its journal still said applied, and rolling back everything left T1's
    bytes. Now the rollback is slowed before its lock (test-only delay) while T2 applies: it
    chooses under the lock, so it undoes T2, and every journal agrees with the file."""
    root = make_root(tmp_path)
    rmcp("--root", root, "patch", "apply", "--yes", "env-miopen-no-gemm", env=penv(), check=0)
    (t1,) = status(rmcp, root)
    slow = subprocess.Popen([str(rmcp.binary), "--root", root, "--format", "json", "patch", "rollback"],
                            env={**os.environ, **rmcp.extra_env, **penv(RMCP_TEST_DELAY_AT="lock:800"),
                                 "RMCP_DATA_DIR": str(pathlib.Path(__file__).resolve().parents[2])},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    time.sleep(0.3)
    rmcp("--root", root, "patch", "apply", "--yes", "env-miopen-find-fast", env=penv(), check=0)
    out, err = slow.communicate(timeout=60)
    assert slow.returncode == 0, err
    txns = status(rmcp, root)
    t2 = txns[1]
    assert json.loads(out)["transaction"] == t2["id"], (out, txns)
    assert [t["state"] for t in txns] == ["applied", "rolled-back"], txns
    # The file is T1's result, which is exactly T2's backup.
    assert (root / ENV_FILE).read_bytes() == (pathlib.Path(t2["journal"]) / "0.orig").read_bytes()
    rmcp("--root", root, "patch", "rollback", env=penv(), check=0)
    assert (root / ENV_FILE).read_text() == ORIGINAL
    assert t1["id"] == txns[0]["id"]


def test_final_journal_record_that_cannot_be_written_is_not_interrupted(rmcp, tmp_path):
    """D14: the journal's final write failed (its disk filled): apply exited 4 with the target
    restored, but status said "interrupted" and asked for a rollback. The failure record is
    staged before any target is written and renamed into place (test-only injection here;
    the real full disk in the next tests)."""
    root = make_root(tmp_path)
    proc = rmcp("--root", root, "patch", "apply", "--yes", "env-miopen-no-gemm",
                env=penv(RMCP_TEST_FAIL_FINAL_JOURNAL=1))
    assert proc.returncode == 4, proc.stderr
    assert b"every change was rolled back" in proc.stderr and b"could not be written" not in proc.stderr
    assert (root / ENV_FILE).read_text() == ORIGINAL
    (txn,) = status(rmcp, root)
    assert txn["state"] == "failed-rolled-back", txn
    assert not (pathlib.Path(txn["journal"]) / "journal.next.json").exists()
    text = rmcp("--root", root, "patch", "status", env=penv(), check=0).stdout
    assert b"interrupted" not in text


def fill(directory):
    with contextlib.suppress(OSError):
        with open(directory / "filler", "wb") as f:
            while True:
                f.write(b"\0" * 4096)
                f.flush()


def test_full_journal_disk_fails_before_any_target_is_touched(rmcp, tmp_path):
    """D14 as found: the journal base on a full disk. Apply now fails before touching a
    target (exit 3, "nothing was changed"), leaves no transaction behind, and status says so."""
    need_root_for_mounts()
    root = make_root(tmp_path)
    state = root / "home/u/.local/state/rmcp"
    with small_tmpfs(state, "size=64k,mode=0755"):
        fill(state)
        proc = rmcp("--root", root, "patch", "apply", "--yes", "env-miopen-no-gemm", env=penv())
        assert proc.returncode == 3, proc.stderr
        assert b"nothing was changed" in proc.stderr
        assert (root / ENV_FILE).read_text() == ORIGINAL
        assert status(rmcp, root) == []


def test_full_journal_disk_at_rollback_restores_nothing_and_says_so(rmcp, tmp_path):
    """A rollback whose final record cannot be written restores nothing (exit 3): the
    journal still says applied and the file is still patched, which is the truth."""
    need_root_for_mounts()
    root = make_root(tmp_path)
    state = root / "home/u/.local/state/rmcp"
    with small_tmpfs(state, "size=64k,mode=0755"):
        rmcp("--root", root, "patch", "apply", "--yes", "env-miopen-no-gemm", env=penv(), check=0)
        patched = (root / ENV_FILE).read_bytes()
        fill(state)
        proc = rmcp("--root", root, "patch", "rollback", env=penv())
        assert proc.returncode == 3, proc.stderr
        assert b"nothing was restored" in proc.stderr
        assert (root / ENV_FILE).read_bytes() == patched
        assert [t["state"] for t in status(rmcp, root)] == ["applied"]
        (state / "filler").unlink()
        rmcp("--root", root, "patch", "rollback", env=penv(), check=0)
        assert (root / ENV_FILE).read_text() == ORIGINAL
        assert [t["state"] for t in status(rmcp, root)] == ["rolled-back"]


def test_status_never_removes_a_live_writers_temporary_file(rmcp, tmp_path):
    """D10: status (or any listing) removed the temporary file of a concurrent user-only apply
    (the clean-up consulted the system base's lock): the apply failed with exit 4. A writer now
    holds its directory's lock while its temporary file exists; the clean-up needs that lock."""
    root = make_root(tmp_path)
    # A system transaction once listed profile.env as a target.
    rmcp("--root", root, "patch", "apply", "--yes", "env-miopen-no-gemm", "modprobe-cwsr-disable", env=penv(),
         check=0)
    rmcp("--root", root, "patch", "rollback", env=penv(), check=0)
    slow = subprocess.Popen([str(rmcp.binary), "--root", root, "patch", "apply", "--yes", "env-miopen-find-fast"],
                            env={**os.environ, **rmcp.extra_env, **penv(RMCP_TEST_DELAY_AT="rename:700"),
                                 "RMCP_DATA_DIR": str(pathlib.Path(__file__).resolve().parents[2])},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 30
    env_dir = (root / ENV_FILE).parent
    while time.monotonic() < deadline and not [p for p in env_dir.iterdir() if ".rmcp-tmp-" in p.name]:
        time.sleep(0.01)
    assert [p for p in env_dir.iterdir() if ".rmcp-tmp-" in p.name], "the apply never reached its rename"
    rmcp("--root", root, "patch", "status", env=penv(), check=0)
    _, err = slow.communicate(timeout=60)
    assert slow.returncode == 0, err
    assert [t["state"] for t in status(rmcp, root)] == ["rolled-back", "applied"]
