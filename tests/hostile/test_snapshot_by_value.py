"""A snapshot takes content by value, not by path (docs/security.md, "Snapshot content by
value"; review 2026-11-28, D5): a file's bytes enter the bundle only when it is a regular
file, not reached through a link that leaves the directory holding the link, within its
kind's cap, and of the kind detect expects there. Anything else is listed in .rmcp-meta as
`omitted PATH REASON`, counted on stderr, and shown by `--list`.
"""
import json
import os
import shutil
import tarfile

import pytest

from conftest import FIXTURES, write

SITE = "home/builder/.local/lib/python3.11/site-packages"
SECRET = "-----BEGIN OPENSSH PRIVATE KEY----- SECRET\n"


def base_root(tmp_path):
    root = tmp_path / "root"
    shutil.copytree(FIXTURES / "debian-rocm-cpu-torch", root, symlinks=True)
    write(root / "home/builder/.ssh/id_rsa", SECRET)
    (root / SITE / "torch").mkdir(parents=True)
    return root


def snapshot(rmcp, root, tmp_path):
    """(member name -> bytes or link target, {omitted path: reason}, stderr, listing)."""
    archive = tmp_path / "s.tar.gz"
    proc = rmcp("--root", root, "snapshot", "-o", archive, timeout=30)
    assert proc.returncode == 0, proc.stderr
    members = {}
    with tarfile.open(archive, "r:gz") as tar:
        for m in tar.getmembers():
            if m.isfile():
                members[m.name] = tar.extractfile(m).read()
            elif m.issym():
                members[m.name] = ("link", m.linkname)
    omitted = {}
    for line in members[".rmcp-meta"].decode().splitlines():
        if line.startswith("omitted "):
            _, path, reason = line.split(" ", 2)
            omitted[path] = reason
    listing = rmcp.json("--root", root, "snapshot", "--list", timeout=30)
    return members, omitted, proc.stderr.decode(), listing


def assert_no_secret(members):
    for name, content in members.items():
        assert not (isinstance(content, bytes) and b"PRIVATE KEY" in content), name


@pytest.mark.parametrize("target", ["/home/builder/.ssh/id_rsa", "../../../../../.ssh/id_rsa"])
def test_a_version_file_linked_to_a_key_is_omitted(rmcp_any, tmp_path, target):
    """D5: torch/version.py -> ~/.ssh/id_rsa put the key into the bundle."""
    root = base_root(tmp_path)
    os.symlink(target, root / SITE / "torch/version.py")
    members, omitted, err, listing = snapshot(rmcp_any, root, tmp_path)
    assert_no_secret(members)
    assert "home/builder/.ssh/id_rsa" not in members
    path = f"/{SITE}/torch/version.py"
    assert "leaves" in omitted[path] and f"-> {target}," in omitted[path], omitted
    assert members[f"{SITE}/torch/version.py"] == ("link", target)  # the link itself, as a link
    assert "1 file(s) detect read left out" in err, err
    assert {"path": path, "reason": omitted[path]} in listing["omitted"], listing["omitted"]


def test_a_link_inside_its_directory_is_followed(rmcp_any, tmp_path):
    """The positive control: a link that stays in its directory brings its file in."""
    root = base_root(tmp_path)
    write(root / SITE / "torch/_version_real.py", "__version__ = '2.3.0+rocm6.0'\n")
    os.symlink("_version_real.py", root / SITE / "torch/version.py")
    members, omitted, _, _ = snapshot(rmcp_any, root, tmp_path)
    assert members[f"{SITE}/torch/_version_real.py"] == b"__version__ = '2.3.0+rocm6.0'\n"
    assert not any(p.startswith(f"/{SITE}") for p in omitted), omitted


def test_a_system_link_into_a_home_directory_is_omitted(rmcp_any, tmp_path):
    """/etc/os-release -> a user's key=value credentials file: it would parse as os-release,
    but the link leaves /etc for a user's directory."""
    root = base_root(tmp_path)
    write(root / "home/builder/.aws/credentials", "AWS_SECRET=abc\n")
    (root / "etc/os-release").unlink()
    os.symlink("/home/builder/.aws/credentials", root / "etc/os-release")
    members, omitted, _, _ = snapshot(rmcp_any, root, tmp_path)
    assert "home/builder/.aws/credentials" not in members
    assert "leaves /etc" in omitted["/etc/os-release"], omitted


def test_the_distribution_os_release_link_is_kept(rmcp_any, tmp_path):
    """Debian's /etc/os-release -> ../usr/lib/os-release stays between system trees."""
    root = base_root(tmp_path)
    (root / "usr/lib").mkdir(parents=True, exist_ok=True)
    shutil.move(root / "etc/os-release", root / "usr/lib/os-release")
    os.symlink("../usr/lib/os-release", root / "etc/os-release")
    members, omitted, _, _ = snapshot(rmcp_any, root, tmp_path)
    assert b"ID=" in members["usr/lib/os-release"]
    assert "/etc/os-release" not in omitted, omitted


KIND_CASES = {
    "a FIFO where os-release is": ("etc/os-release", "fifo", "not a regular file (FIFO)"),
    "os-release over its cap": ("etc/os-release", b"ID=debian\n" + b"X=" + b"y" * (70 << 10) + b"\n", "cap"),
    "binary os-release": ("etc/os-release", b"ID=debian\n\0\0\0", "binary content"),
    "os-release that is not KEY=value": ("etc/os-release", b"ID=debian\n-----BEGIN KEY-----\n", "line 2"),
    "version.py without a version": ("usr/lib/python3/dist-packages/torch/version.py", b"password = 'x'\n",
                                     "does not parse as a torch version file"),
    "binary version.py": ("usr/lib/python3/dist-packages/torch/version.py", b"\x7fELF\x02\x01", "binary content"),
    "hip_version.h without a #define": ("usr/include/hip/hip_version.h", b"ssh-rsa AAAA\n", "#define"),
}


@pytest.mark.parametrize("case", list(KIND_CASES))
def test_content_of_the_wrong_kind_is_omitted(rmcp_any, tmp_path, case):
    rel, content, reason = KIND_CASES[case]
    root = base_root(tmp_path)
    target = root / rel
    target.unlink()
    if rel.endswith(".h"):
        (root / "var/lib/dpkg/status").unlink()  # without dpkg, detect reads the version headers
    if content == "fifo":
        os.mkfifo(target)
    else:
        target.write_bytes(content)
    members, omitted, err, _ = snapshot(rmcp_any, root, tmp_path)
    assert rel not in members, sorted(members)
    assert reason in omitted["/" + rel], omitted
    assert "left out of the bundle" in err, err


def test_a_binary_sysfs_value_is_omitted(rmcp_any, tmp_path):
    root = base_root(tmp_path)
    write(root / "sys/module/amdgpu/initstate", b"live\0\0secret")
    members, omitted, _, _ = snapshot(rmcp_any, root, tmp_path)
    assert "sys/module/amdgpu/initstate" not in members
    assert "binary content where a sysfs value is expected" in omitted["/sys/module/amdgpu/initstate"], omitted


def test_an_unpacked_bundle_with_omissions_is_still_a_root(rmcp, tmp_path):
    """`omitted` records are informative: the unpacked bundle loads as --root."""
    root = base_root(tmp_path)
    os.symlink("/home/builder/.ssh/id_rsa", root / SITE / "torch/version.py")
    archive = tmp_path / "s.tar.gz"
    rmcp("--root", root, "snapshot", "-o", archive, check=0)
    unpacked = tmp_path / "u"
    with tarfile.open(archive, "r:gz") as tar:
        tar.extractall(unpacked)
    facts = rmcp.json("detect", "--root", unpacked)
    assert json.dumps(facts).count("PRIVATE KEY") == 0
