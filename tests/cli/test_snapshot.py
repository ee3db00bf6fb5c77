"""`rmcp snapshot`: an unpacked snapshot is a root that gives the same facts, without secrets."""
import json
import os
import pathlib
import re
import tarfile

import pytest

from conftest import FIXTURES, fixture_roots

ROOTS = fixture_roots()
IDS = [p.name for p in ROOTS]


def unpack(archive, dest):
    """Extracts with python's tarfile after checking no member escapes `dest`."""
    with tarfile.open(archive, "r:gz") as tar:
        for m in tar.getmembers():
            assert not m.name.startswith("/") and ".." not in pathlib.PurePosixPath(m.name).parts, m.name
            assert m.isfile() or m.isdir() or m.issym(), (m.name, m.type)  # no device nodes in a tarball
        tar.extractall(dest)
        return {m.name: m for m in tar.getmembers()}


@pytest.mark.parametrize("root", ROOTS, ids=IDS)
def test_unpacked_snapshot_gives_same_facts(rmcp, tmp_path, root):
    archive = tmp_path / "snap.tar.gz"
    proc = rmcp("snapshot", "-o", archive, "--root", root, check=0)
    # What to do with it, one line (review finding 22); -q: nothing.
    assert re.fullmatch(rf"wrote {re.escape(str(archive))} \([0-9.]+ (KiB|MiB|bytes)\); attach it to your bug report\n",
                        proc.stdout.decode()), proc.stdout
    assert rmcp("-q", "snapshot", "-o", archive, "--root", root, check=0).stdout == b""
    members = unpack(archive, tmp_path / "unpacked")
    assert ".rmcp-meta" in members and "facts.json" in members
    original = rmcp.json("detect", "--root", root)
    again = rmcp.json("detect", "--root", tmp_path / "unpacked")
    assert again == original
    assert json.loads((tmp_path / "unpacked" / "facts.json").read_text()) == original


def test_snapshot_keeps_links_as_links(rmcp, tmp_path):
    archive = tmp_path / "s.tar.gz"
    rmcp("snapshot", "-o", archive, "--root", FIXTURES / "rx6800xt-gfx1030-rocm61", check=0)
    members = unpack(archive, tmp_path / "u")
    # update-alternatives chain and the sysfs DRM links survive as symlinks
    assert members["opt/rocm"].issym() and members["opt/rocm"].linkname == "/etc/alternatives/rocm"
    assert members["etc/alternatives/rocm"].linkname == "/opt/rocm-6.1.0"
    assert members["sys/class/drm/renderD128"].issym()
    assert members["sys/class/drm/renderD128"].linkname.startswith("../../devices/pci0000:00/")
    # the leftover ROCm directory without a version file is still there
    assert members["opt/rocm-5.7.1"].isdir()


def test_snapshot_records_device_nodes_and_errors(rmcp, tmp_path):
    archive = tmp_path / "s.tar.gz"
    rmcp("snapshot", "-o", archive, "--root", FIXTURES / "container-hidden-gpu", check=0)
    unpack(archive, tmp_path / "u")
    meta = (tmp_path / "u" / ".rmcp-meta").read_text().splitlines()
    assert "stat /dev/kfd type=char mode=0660 uid=0 gid=109" in meta
    assert "error /sys/class/kfd/kfd/topology/nodes/2/properties EPERM" in meta


def test_snapshot_drops_irrelevant_environment(rmcp, tmp_path):
    root = FIXTURES / "container-hidden-gpu"
    environ = (root / "proc/self/environ").read_bytes()
    assert b"SECRET_TOKEN=" in environ  # the fixture carries one on purpose
    archive = tmp_path / "s.tar.gz"
    rmcp("snapshot", "-o", archive, "--root", root, check=0)
    unpack(archive, tmp_path / "u")
    kept = dict(e.split("=", 1) for e in
                (tmp_path / "u/proc/self/environ").read_bytes().decode().split("\0") if e)
    assert "SECRET_TOKEN" not in kept and "HOSTNAME" not in kept and "PATH" not in kept
    assert kept["ROCM_PATH"] == "/opt/rocm" and kept["CONDA_PREFIX"] == "/opt/conda/envs/py_3.10"
    assert kept["HOME"] == "/root"  # detect needs it for the user site
    # nowhere in the bundle, not even in facts.json
    for path in (tmp_path / "u").rglob("*"):
        if path.is_file() and not path.is_symlink():
            assert b"hf_live_do_not_leak" not in path.read_bytes(), path


def test_snapshot_of_snapshot_is_stable(rmcp, tmp_path):
    first = tmp_path / "a.tar.gz"
    rmcp("snapshot", "-o", first, "--root", FIXTURES / "desktop-igpu-dgpu", check=0)
    unpack(first, tmp_path / "a")
    second = tmp_path / "b.tar.gz"
    rmcp("snapshot", "-o", second, "--root", tmp_path / "a", check=0)
    b = unpack(second, tmp_path / "b")
    a = {m for m in b}
    assert rmcp.json("detect", "--root", tmp_path / "b") == rmcp.json("detect", "--root", FIXTURES / "desktop-igpu-dgpu")
    assert "facts.json" in a


def test_snapshot_unwritable_directory(rmcp, tmp_path):
    target = tmp_path / "missing-dir" / "x.tar.gz"
    proc = rmcp("snapshot", "-o", target, "--root", FIXTURES / "rx6600-gfx1032")
    assert proc.returncode == 3
    err = proc.stderr.decode().strip()
    assert re.match(rf"^rmcp: error: \S.* {re.escape(str(target))}: No such file or directory$", err), err
    assert not (tmp_path / "missing-dir").exists()


def test_snapshot_onto_a_directory_is_refused_and_leaves_no_partial_file(rmcp, tmp_path):
    # Refused before anything is written: only a regular file or a missing path is an
    # output file (util/atomic_file.hpp; tests/hostile/test_output_targets.py runs every
    # kind of target against every writer, a full disk included).
    target = tmp_path / "is-a-directory"
    (target / "child").mkdir(parents=True)
    proc = rmcp("snapshot", "-o", target, "--root", FIXTURES / "rx6600-gfx1032")
    assert proc.returncode == 2
    assert f"{target}: a directory, not a regular file" in proc.stderr.decode()
    assert sorted(os.listdir(tmp_path)) == ["is-a-directory"]
    assert os.listdir(target) == ["child"]


def test_snapshot_requires_output(rmcp):
    proc = rmcp("snapshot", "--root", FIXTURES / "rx6600-gfx1032")
    assert proc.returncode == 2
    assert "--output" in proc.stderr.decode()


def test_snapshot_bad_root(rmcp, tmp_path):
    proc = rmcp("snapshot", "-o", tmp_path / "x.tar.gz", "--root", tmp_path / "nope")
    assert proc.returncode == 2
    assert not (tmp_path / "x.tar.gz").exists()


def test_help_snapshot(rmcp):
    out = rmcp("help", "snapshot", check=0).stdout.decode()
    assert "-o,--output" in out and "support bundle" in out
