"""Journals are data from an untrusted place, and apply tells the truth about a failure
(docs/patches.md, "Journal"; docs/security.md)."""
import contextlib
import os
import pathlib
import signal
import subprocess

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
