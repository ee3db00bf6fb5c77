"""Nothing outside --root is read or written: scan, snapshot, patch's journal and rollback all
resolve paths inside the root (docs/security.md, "Confinement")."""
import json
import pathlib
import subprocess
import sys
import tarfile
import time

import make_libraries
import pytest

from conftest import tree_snapshot, write

HOME = "/home/u"


def penv(**extra):
    env = {"HOME": HOME, "RMCP_ASSUME_UID": "0"}
    env.update({k: str(v) for k, v in extra.items()})
    return env


def rocm_tree(root):
    write(root / "opt/rocm-5.2.3/.info/version", "5.2.3-1\n")
    write(root / "etc/os-release", 'ID=debian\nVERSION_ID="12"\n')


@pytest.mark.parametrize("link_kind", ["absolute", "relative"])
def test_scan_reads_a_library_link_inside_the_root(rmcp_any, tmp_path, link_kind):
    """scan followed an absolute library link on the host (weakly_canonical of the host
    path) and listed the host's library targets: the link must resolve inside the root."""
    outside = write(tmp_path / "outside/librocrand.so.1", make_libraries.host_library(["gfx1030", "gfx90a"]))
    root = tmp_path / "root"
    rocm_tree(root)
    lib = root / "opt/rocm-5.2.3/lib/librocrand.so.1"
    lib.parent.mkdir(parents=True)
    if link_kind == "absolute":
        lib.symlink_to(outside)
        write(root / str(outside).lstrip("/"), b"")  # the same path inside the root: empty
    else:
        lib.symlink_to("../../../../outside/librocrand.so.1")  # ".." stops at the root
        write(root / "outside/librocrand.so.1", b"")
    report = rmcp_any.json("--root", root, "scan")
    text = json.dumps(report)
    assert "gfx1030" not in text and "gfx90a" not in text, text
    assert [f["targets"] for f in report["files"]] in ([], [[]]), report["files"]


def test_scan_of_a_root_library_with_a_link_loop_ends(rmcp_any, tmp_path):
    root = tmp_path / "root"
    rocm_tree(root)
    lib_dir = root / "opt/rocm-5.2.3/lib"
    lib_dir.mkdir(parents=True)
    (lib_dir / "libamdhip64.so").symlink_to("libamdhip64.so.5")
    (lib_dir / "libamdhip64.so.5").symlink_to("libamdhip64.so")
    (lib_dir / "librocblas.so").symlink_to("/opt/rocm-5.2.3/lib/librocblas.so")
    proc = rmcp_any("--root", root, "scan", "--format", "json", timeout=20)
    assert proc.returncode == 0, proc.stderr


SWAPPER = """
import ctypes, os, pathlib, sys
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, RENAME_EXCHANGE = -100, 2
root, secret, rels = pathlib.Path(sys.argv[1]), sys.argv[2], sys.argv[3:]
pairs = []
for rel in rels:
    target = root / rel
    link = target.with_name(target.name + ".swap")
    link.symlink_to(secret)
    pairs.append((os.fsencode(link), os.fsencode(target)))
# renameat2(RENAME_EXCHANGE) flips file and link in one system call (rename(2)).
while True:
    for a, b in pairs:
        libc.renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE)
"""


def test_snapshot_never_archives_a_file_swapped_for_a_link_out_of_the_root(rmcp_any, tmp_path):
    """snapshot checked the root for links first and opened the file later: a process
    swapping etc/os-release between a file and a link to a host file got the host file into
    the archive. Several files detect reads are swapped as fast as Python can, for three
    seconds of snapshots (hundreds of them)."""
    secret = write(tmp_path / "outside/shadow", "root:SECRET-HASH-0123456789:19000::::::\n")
    root = tmp_path / "root"
    swapped = ["etc/os-release", "etc/passwd", "etc/group", "usr/lib/os-release",
               "sys/module/amdgpu/initstate", "opt/rocm-6.0.0/.info/version"]
    for rel in swapped:
        write(root / rel, "ID=debian\n")
    write(root / "proc/self/status", "Uid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\nGroups:\n")
    # A separate process: the swaps do not wait on this interpreter's lock.
    swapper = subprocess.Popen([sys.executable, "-c", SWAPPER, str(root), str(secret), *swapped])
    leaked = runs = 0
    try:
        deadline = time.monotonic() + 3
        while time.monotonic() < deadline:
            out = tmp_path / f"s{runs}.tar.gz"
            proc = rmcp_any("--root", root, "snapshot", "-o", out)
            runs += 1
            if proc.returncode != 0:
                continue
            with tarfile.open(out) as tar:
                for member in tar.getmembers():
                    if member.isfile() and b"SECRET-HASH" in tar.extractfile(member).read():
                        leaked += 1
            out.unlink()
    finally:
        swapper.kill()
        swapper.wait()
    assert runs > 5
    assert leaked == 0, f"{leaked} of {runs} archives hold the file outside the root"


@pytest.mark.parametrize("escape", ["var/lib/rmcp", "home/u/.local"])
def test_patch_journal_directory_stays_in_the_root(rmcp_any, tmp_path, escape):
    """apply wrote its lock and journal.json through R/var/lib/rmcp (or R/home/U/.local)
    when that was a link out of the root."""
    outside = tmp_path / "outside"
    outside.mkdir()
    root = tmp_path / "root"
    write(root / "etc/os-release", 'ID=debian\nVERSION_ID="12"\n')
    (root / "etc/modprobe.d").mkdir(parents=True)
    write(root / "home/u/.config/rmcp/profile.env", "# mine\n")
    link = root / escape
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(outside)
    proc = rmcp_any("--root", root, "patch", "apply", "--yes", "modprobe-cwsr-disable", "env-miopen-no-gemm",
                env=penv())
    assert tree_snapshot(outside) == {}, (proc.stderr, tree_snapshot(outside))
    assert proc.returncode in (0, 2, 3, 4), proc.stderr


def applied_tree(rmcp, tmp_path):
    root = tmp_path / "root"
    write(root / "etc/os-release", 'ID=debian\nVERSION_ID="12"\n')
    (root / "etc/modprobe.d").mkdir(parents=True)
    write(root / "home/u/.config/rmcp/profile.env", "# mine\n", 0o600)
    rmcp("--root", root, "patch", "apply", "--yes", "env-miopen-no-gemm", env=penv(), check=0)
    status = rmcp.json("--root", root, "patch", "status", env=penv())
    (txn,) = status["transactions"]
    journal = pathlib.Path(txn["journal"]) / "journal.json"
    return root, journal, json.loads(journal.read_text())


def test_rollback_never_copies_a_backup_from_outside_the_transaction(rmcp_any, tmp_path):
    """rollback trusted the journal's backup field: ../../../../etc/shadow was copied into
    the target."""
    secret = write(tmp_path / "outside/shadow", "SECRET-HASH\n")
    root, journal, data = applied_tree(rmcp_any, tmp_path)
    ups = "../" * len(journal.parent.parts)
    data["targets"][0]["backup"] = ups + str(secret.relative_to("/"))
    data["targets"][0]["mode"] = 0o104777  # setuid and a file type: never a valid mode
    journal.write_text(json.dumps(data))
    proc = rmcp_any("--root", root, "patch", "rollback", env=penv())
    env_file = root / "home/u/.config/rmcp/profile.env"
    assert b"SECRET" not in env_file.read_bytes()
    assert env_file.stat().st_mode & 0o7000 == 0
    assert str(journal) in proc.stderr.decode()  # the corrupt journal is named
    assert proc.returncode != 0


def test_rollback_never_removes_a_directory_outside_the_root(rmcp_any, tmp_path):
    """created_dirs of /../outside/emptydir made rollback remove a directory outside."""
    victim = tmp_path / "outside/emptydir"
    victim.mkdir(parents=True)
    root, journal, data = applied_tree(rmcp_any, tmp_path)
    data["created_dirs"] = ["/../outside/emptydir"]
    journal.write_text(json.dumps(data))
    rmcp_any("--root", root, "patch", "rollback", env=penv())
    assert victim.is_dir()


@pytest.mark.parametrize("field,value", [
    ("path", "/etc/passwd"),                      # not on the allowlist
    ("path", "relative/profile.env"),
    ("path", "/home/u/.config/rmcp/../../../../etc/shadow"),
    ("backup", "/etc/shadow"),
    ("backup", "0.orig/../../x"),
    ("mode", -1),
    ("mode", 0o10000),
    ("existed", "yes"),
    ("id", "../../escape"),
])
def test_rollback_rejects_every_tampered_journal_field(rmcp, tmp_path, field, value):
    root, journal, data = applied_tree(rmcp, tmp_path)
    before = tree_snapshot(root / "home/u/.config")
    if field == "id":
        data["id"] = value
    else:
        data["targets"][0][field] = value
    journal.write_text(json.dumps(data))
    proc = rmcp("--root", root, "patch", "rollback", env=penv())
    assert proc.returncode != 0
    assert tree_snapshot(root / "home/u/.config") == before
    status = rmcp.json("--root", root, "patch", "status", env=penv())
    (txn,) = status["transactions"]
    assert txn["state"] == "corrupt" and txn["journal"] == str(journal.parent), txn
