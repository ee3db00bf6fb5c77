"""Roots built to break detect: garbage in every number it reads, links that loop or point
out of the root in every kind of directory (docs/security.md)."""
import json
import os
import pathlib
import shutil
import tarfile

import pytest

from conftest import FIXTURES, fixture_roots, write

GPU_FIXTURE = FIXTURES / "rx6800xt-gfx1030-rocm61"
NODE = "sys/class/kfd/kfd/topology/nodes/1"
DEVICE = "sys/devices/pci0000:00/0000:00:01.1/0000:01:00.0/0000:02:00.0/0000:03:00.0"
GARBAGE = ["garbage", "-1", "99999999999999999999999999", "0x", "12xyz", "\xff\xfe", ""]

# The KFD properties keys detect reads, and the plain sysfs number files.
KFD_KEYS = ["gfx_target_version", "simd_count", "simd_per_cu", "vendor_id", "device_id", "drm_render_minor",
            "fw_version", "max_engine_clk_fcompute"]
NUMBER_FILES = [f"{NODE}/gpu_id", f"{NODE}/io_links/0/properties", f"{DEVICE}/vendor", f"{DEVICE}/device",
                f"{DEVICE}/revision", f"{DEVICE}/subsystem_vendor", f"{DEVICE}/subsystem_device",
                f"{DEVICE}/mem_info_vram_total", f"{DEVICE}/mem_info_gtt_total"]


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    root = tmp_path_factory.mktemp("pristine") / "root"
    shutil.copytree(GPU_FIXTURE, root, symlinks=True)
    return root


def copy(pristine, tmp_path):
    root = tmp_path / "root"
    shutil.copytree(pristine, root, symlinks=True)
    return root


def detect(rmcp, root):
    proc = rmcp("--root", root, "detect", "--format", "json", timeout=20)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def node1(facts):
    (gpu,) = [g for g in facts["gpus"] if g["node"] == 1]
    return gpu


@pytest.mark.parametrize("value", GARBAGE)
@pytest.mark.parametrize("key", KFD_KEYS)
def test_garbage_in_a_kfd_property_is_unreadable_and_the_gpu_stays(rmcp, pristine, tmp_path, key, value):
    root = copy(pristine, tmp_path)
    props = root / NODE / "properties"
    lines = props.read_text().splitlines()
    (index,) = [i for i, line in enumerate(lines) if line.split()[0] == key]
    lines[index] = f"{key} {value}"
    props.write_bytes(("\n".join(lines) + "\n").encode("utf-8", "surrogateescape"))
    facts = detect(rmcp, root)
    gpu = node1(facts)
    where = f"/{NODE}/properties:{index + 1}"
    assert {"path": where, "errno": "EINVAL", "error": "Invalid argument"} in facts["unreadable"], facts["unreadable"]
    if key == "gfx_target_version":
        assert gpu["gfx_target_version"] is None and gpu["gfx_target"] is None
    else:
        assert gpu["gfx_target"] == "gfx1030"


@pytest.mark.parametrize("value", GARBAGE)
@pytest.mark.parametrize("rel", NUMBER_FILES, ids=[p.rsplit("/", 1)[-1] for p in NUMBER_FILES])
def test_garbage_in_a_sysfs_number_is_unreadable_and_the_gpu_stays(rmcp, pristine, tmp_path, rel, value):
    root = copy(pristine, tmp_path)
    path = root / rel
    if rel.endswith("properties"):
        path.write_bytes(f"type 2\nflags {value}\n".encode("utf-8", "surrogateescape"))
        where = f"/{rel}:2"
    else:
        path.write_bytes(f"{value}\n".encode("utf-8", "surrogateescape"))
        # detect reads the PCI files through the DRM link and names them so.
        where = f"/{rel}".replace(f"/{DEVICE}", "/sys/class/drm/renderD128/device")
    facts = detect(rmcp, root)
    gpu = node1(facts)
    assert gpu["gfx_target"] == "gfx1030"
    shown = {u["path"] for u in facts["unreadable"]}
    assert where in shown, facts["unreadable"]


def test_a_properties_file_of_pure_garbage_keeps_the_node(rmcp, pristine, tmp_path):
    """Nothing in it says CPU or GPU: the node stays, present but not readable, and is paired
    with its DRM device (PCI id, name) as a node hidden by EPERM is."""
    root = copy(pristine, tmp_path)
    (root / NODE / "properties").write_bytes(os.urandom(4096).replace(b"\n", b" "))
    facts = detect(rmcp, root)
    (gpu,) = facts["gpus"]
    assert gpu["node"] == 1 and gpu["visible"] is False and gpu["pci_id"] == "1002:73bf"
    assert f"/{NODE}/properties" in {u["path"] for u in facts["unreadable"]}


def every_directory(root):
    out = [root]
    for dirpath, dirnames, _ in os.walk(root, followlinks=False):
        out += [pathlib.Path(dirpath) / d for d in dirnames if not (pathlib.Path(dirpath) / d).is_symlink()]
    return out


@pytest.mark.parametrize("fixture", [p.name for p in fixture_roots()])
def test_links_that_loop_or_leave_in_every_directory(rmcp, tmp_path, fixture):
    """Every directory of every fixture gets a self loop, a two-link loop and absolute and
    relative links out of the root (to a file with a GPU in it); detect, doctor, scan and
    snapshot end quickly and never show what is outside."""
    outside = tmp_path / "outside"
    write(outside / "properties", "gfx_target_version 90010\nsimd_count 4\nSECRET_OUTSIDE 1\n")
    write(outside / "version", "SECRET_OUTSIDE\n")
    root = tmp_path / "root"
    shutil.copytree(FIXTURES / fixture, root, symlinks=True)
    baseline = detect(rmcp, root)
    for d in every_directory(root):
        (d / "zz-self").symlink_to("zz-self")
        (d / "zz-a").symlink_to("zz-b")
        (d / "zz-b").symlink_to("zz-a")
        (d / "zz-abs").symlink_to(outside)
        (d / "zz-rel").symlink_to("../" * 40 + str(outside).lstrip("/"))
    # Names detect enumerates: a topology node, a ROCm install, a python dir, a render node.
    for name in ["sys/class/kfd/kfd/topology/nodes/7", "sys/class/kfd/kfd/topology/nodes/8",
                 "opt/rocm-9.9.9", "usr/lib/python3.99", "sys/class/drm/renderD200"]:
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        (p if not name.endswith("/8") else p).symlink_to(p.name if name.endswith("/7") else outside)
    facts = detect(rmcp, root)
    text = json.dumps(facts)
    assert "SECRET_OUTSIDE" not in text
    # Nodes behind a loop are unreadable (listed as present, not visible); the real ones stay.
    known = [g["gfx_target"] for g in facts["gpus"] if g.get("gfx_target")]
    assert known == [g["gfx_target"] for g in baseline["gpus"] if g.get("gfx_target")]
    for args in (["doctor", "--format", "json"], ["scan", "--format", "json"]):
        proc = rmcp("--root", root, *args, timeout=30)
        assert proc.returncode in (0, 1), (args, proc.stderr)
        assert b"SECRET_OUTSIDE" not in proc.stdout
    archive = tmp_path / "s.tar.gz"
    rmcp("--root", root, "snapshot", "-o", archive, timeout=30, check=0)
    with tarfile.open(archive) as tar:
        for m in tar.getmembers():
            if m.isfile():
                assert b"SECRET_OUTSIDE" not in tar.extractfile(m).read(), m.name
