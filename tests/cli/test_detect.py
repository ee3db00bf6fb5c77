"""`rmcp detect` on every fixture root: golden JSON, text and NFD output, bad input."""
import json
import re
import shutil

import pytest

from conftest import FIXTURES, GOLDEN, fixture_roots, unversioned

ROOTS = fixture_roots()
IDS = [p.name for p in ROOTS]
MESSAGE = re.compile(r"^rmcp: error: \S.* \S+: \S.*$")  # `rmcp: error: <doing> <path>: <cause>`


def test_enough_fixtures():
    assert len(ROOTS) >= 15, IDS


@pytest.mark.parametrize("root", ROOTS, ids=IDS)
def test_json_matches_golden(rmcp, root):
    golden = GOLDEN / root.name / "detect.json"
    assert golden.exists(), f"no golden for {root.name}: run scripts/regen-golden.sh and review it"
    got = rmcp.json("detect", "--root", root)
    assert unversioned(got) == json.loads(golden.read_text()), f"detect output changed for {root.name}"


@pytest.mark.parametrize("root", ROOTS, ids=IDS)
def test_json_public_keys(rmcp, root):
    facts = rmcp.json("detect", "--root", root)
    assert facts["schema_version"] == 1
    for gpu in facts["gpus"]:
        for key in ("node", "gfx_target", "effective_gfx_target", "family", "marketing_name", "pci_id",
                    "revision", "vram_bytes", "integrated", "visible"):
            assert key in gpu
        if gpu["pci_id"] is not None:
            assert re.fullmatch(r"1002:[0-9a-f]{4}", gpu["pci_id"])
    assert {"loaded", "params"} <= facts["driver"].keys()
    assert {"present", "accessible", "group", "user_in_group"} <= facts["kfd"].keys()
    for r in facts["rocm"]:
        assert {"path", "version"} <= r.keys()
    for t in facts["torch"]:
        assert {"path", "version", "hip_version"} <= t.keys()
    assert isinstance(facts["env"], dict)


def test_rmcp_root_env_equals_flag(rmcp):
    root = FIXTURES / "rx6600-gfx1032"
    assert rmcp.json("detect", env={"RMCP_ROOT": str(root)}) == rmcp.json("detect", "--root", root)


def test_global_options_before_the_command(rmcp):
    root = FIXTURES / "rx6600-gfx1032"
    before = rmcp("--root", root, "--format", "json", "detect", check=0)
    assert json.loads(before.stdout) == rmcp.json("detect", "--root", root)


# What each fixture models, as the facts a reader must see in the text output.
TEXT_FACTS = {
    "rx5600xt-gfx1010-rocm52": ["AMD Radeon RX 5600 XT", "gfx1010 (RDNA1)",
                                "HSA_OVERRIDE_GFX_VERSION=10.3.0 → gfx1030 (cross_family)",
                                "PCI 1002:731f rev 0xca", "/opt/rocm-5.2.3 5.2.3 [opt] in use (ROCM_PATH)",
                                "1.13.1+rocm5.2 [venv] HIP 5.2.21151-afdc89f8"],
    "rx5500xt-gfx1012": ["AMD Radeon RX 5500 XT", "gfx1012 (RDNA1)", "(cross_family)", "PCIe atomics no",
                         "MEC fw 149", "/opt/rocm-5.7.1 5.7.1 [opt] in use (default)"],
    "rx6800xt-gfx1030-rocm61": ["AMD Radeon RX 6800 XT", "gfx1030 (RDNA2)", "official ROCm support: yes",
                                "DKMS version: 6.7.0", "ppfeaturemask=0xffffffff",
                                "/opt/rocm-5.7.1 unknown [opt] in use (LD_LIBRARY_PATH)",
                                "/opt/rocm-6.1.0 6.1.0 [opt] in use (default)"],
    "rx6700xt-gfx1031": ["AMD Radeon RX 6700 XT", "gfx1031 (RDNA2)", "effective target: gfx1031",
                         "official ROCm support: no", "ROCm (0)", "2.3.1+rocm6.0 [user]"],
    "rx6600-gfx1032": ["AMD Radeon RX 6600", "gfx1032 (RDNA2)", "→ gfx1030 (same_family)",
                       "/opt/rocm 6.0.2 [opt]", "/usr/lib/python3.12/site-packages/torch 2.3.1 [system]"],
    "rx6600xt-override-malformed": ["AMD Radeon RX 6600 XT", "gfx1032 (RDNA2)",
                                    "HSA_OVERRIDE_GFX_VERSION=gfx1030 → malformed (runtime init will fail)",
                                    "effective target: unknown"],
    "rx7900xtx-gfx1100": ["AMD Radeon RX 7900 XTX", "gfx1100 (RDNA3)", "VRAM 24.0 GiB",
                          "PYTORCH_HIP_ALLOC_CONF=expandable_segments:True", "/opt/rocm-6.2.0 6.2.0"],
    "laptop-780m-gfx1103": ["AMD Radeon Graphics", "gfx1103 (RDNA3)", "integrated", "VRAM 512.0 MiB",
                            "→ gfx1100 (same_family)"],
    "desktop-igpu-dgpu": ["GPU 0  AMD Radeon RX 7900 XTX", "GPU 1  AMD Radeon Graphics — gfx1036 (RDNA2)",
                          "KFD node 1 = ROCm device 0 = torch cuda:0", "KFD node 2 = ROCm device 1 = torch cuda:1",
                          "→ gfx1100 (identical)", "→ gfx1100 (cross_family)", "integrated", "discrete"],
    "mi210-gfx90a": ["AMD Instinct MI210", "gfx90a (CDNA2)", "→ gfx1030 (cross_family)",
                     "official ROCm support: yes", "DKMS version: 6.3.6", "[conda]", "HIP_VISIBLE_DEVICES=0"],
    "no-amdgpu": ["GPUs (0)", "amdgpu: NOT loaded", "/dev/kfd: missing", "Debian GNU/Linux 12 (bookworm)"],
    "kfd-no-access": ["AMD Radeon RX 6800", "/dev/kfd: NOT accessible (group render, mode 0660, user in group: no)",
                      "/dev/dri/renderD128: NOT accessible"],
    "pcie-atomics-rejected": ["GPU -  AMD Radeon RX 5700 XT", "no KFD node", "DRM device without a KFD node",
                              "PCI 1002:731f rev 0xc1"],
    "container-hidden-gpu": ["GPU -  KFD node 2 present, not visible", "probably AMD Radeon RX 7900 XTX",
                             "/dev/dri/renderD129: missing", "nodes/2/properties: Operation not permitted (EPERM)",
                             "in use (ROCM_PATH)", "[conda]"],
    "debian-rocm-cpu-torch": ["GPUs (0)", "/usr 5.2.3 [debian] in use (default)",
                              "/usr/lib/python3/dist-packages/torch 1.13.0a0 [debian] (CPU-only build)"],
}


def test_text_expectations_name_real_fixtures():
    # Other suites may add roots; these fifteen are the ones this file describes.
    assert set(TEXT_FACTS) <= set(IDS), set(TEXT_FACTS) - set(IDS)


@pytest.mark.parametrize("name", sorted(TEXT_FACTS))
def test_text_names_key_facts(rmcp, name):
    proc = rmcp("detect", "--root", FIXTURES / name, check=0)
    text = proc.stdout.decode()
    assert proc.stderr == b""
    for fact in TEXT_FACTS[name]:
        assert fact in text, f"{name}: {fact!r} missing from:\n{text}"
    assert "\x1b[" not in text  # NO_COLOR


NFD_LINE = re.compile(r"^rmcp\.[a-z0-9_.]+=[A-Za-z0-9_.:+-]*$")


@pytest.mark.parametrize("root", ROOTS, ids=IDS)
def test_nfd_lines_are_feature_file_lines(rmcp, root):
    lines = rmcp("detect", "--root", root, "--format", "nfd", check=0).stdout.decode().splitlines()
    assert lines, "empty NFD output"
    for line in lines:
        assert NFD_LINE.match(line), line
    facts = rmcp.json("detect", "--root", root)
    usable = [g for g in facts["gpus"] if g["node"] is not None and g["visible"]]
    assert f"rmcp.gpu_count={len(usable)}" in lines


@pytest.mark.parametrize("name,expected,absent", [
    ("rx6700xt-gfx1031", ["rmcp.gfx_target=gfx1031", "rmcp.gpu1.family=RDNA2", "rmcp.gpu1.vram_gib=12",
                          "rmcp.kfd_accessible=true"], []),
    ("rx6600-gfx1032", ["rmcp.gpu1.gfx_target=gfx1032", "rmcp.gpu1.effective_gfx_target=gfx1030",
                        "rmcp.gfx_target=gfx1030", "rmcp.rocm_version=6.0.2"], []),
    ("laptop-780m-gfx1103", ["rmcp.gpu1.integrated=true"], []),
    ("rx6600xt-override-malformed", ["rmcp.gpu1.gfx_target=gfx1032"], ["rmcp.gpu1.effective_gfx_target=",
                                                                        "rmcp.gfx_target="]),
    ("container-hidden-gpu", ["rmcp.gpu_count=1", "rmcp.gpu1.gfx_target=gfx1100"], ["rmcp.gpu2."]),
    ("kfd-no-access", ["rmcp.kfd_accessible=false", "rmcp.amdgpu_loaded=true"], []),
    ("no-amdgpu", ["rmcp.gpu_count=0", "rmcp.amdgpu_loaded=false"], ["rmcp.gfx_target="]),
    ("pcie-atomics-rejected", ["rmcp.gpu_count=0"], ["rmcp.gfx_target="]),
])
def test_nfd_values(rmcp, name, expected, absent):
    out = rmcp("detect", "--root", FIXTURES / name, "--format", "nfd", check=0).stdout.decode()
    lines = out.splitlines()
    for e in expected:
        assert e in lines, (e, out)
    for a in absent:
        assert not any(line.startswith(a) for line in lines), (a, out)


# --- bad input -----------------------------------------------------------------------------------

def test_root_nonexistent(rmcp, tmp_path):
    missing = tmp_path / "no-such-root"
    proc = rmcp("detect", "--root", missing)
    assert proc.returncode == 2
    assert proc.stdout == b""
    err = proc.stderr.decode().strip()
    assert MESSAGE.match(err), err
    assert err.startswith(f"rmcp: error: opening root {missing}: ")


def test_root_is_a_file(rmcp, tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    proc = rmcp("detect", "--root", f)
    assert proc.returncode == 2
    assert f"opening root {f}: not a directory" in proc.stderr.decode()


@pytest.mark.parametrize("line,cause", [
    ("stat /dev/kfd type=char mode=0660 uid=0 gid=x", "bad number in 'gid=x'"),
    ("error /sys/class/kfd/kfd/topology/nodes/1/properties EWHATEVER", "unknown errno name 'EWHATEVER'"),
    ("frobnicate /dev/kfd now", "unknown record 'frobnicate'"),
    ("stat dev/kfd type=char", "expected `stat PATH key=value...`"),
    ("stat /dev/kfd type=socketish", "unknown file type 'socketish'"),
])
def test_malformed_meta_names_file_and_line(rmcp, tmp_path, line, cause):
    root = tmp_path / "root"
    shutil.copytree(FIXTURES / "kfd-no-access", root, symlinks=True)
    meta = root / ".rmcp-meta"
    meta.write_text("# comment\n\n" + line + "\nstat /dev/kfd type=char mode=0660 uid=0 gid=109\n")
    proc = rmcp("detect", "--root", root)
    assert proc.returncode == 2
    assert proc.stdout == b""
    err = proc.stderr.decode().strip()
    assert err.startswith(f"rmcp: error: parsing snapshot metadata {meta}:3: "), err
    assert cause in err


def test_format_bogus(rmcp):
    proc = rmcp("detect", "--root", FIXTURES / "rx6600-gfx1032", "--format", "bogus")
    assert proc.returncode == 2
    assert proc.stdout == b""
    err = proc.stderr.decode()
    assert "rmcp: error: choosing output format bogus: this command supports --format text|json|nfd" in err


def test_unknown_option(rmcp):
    proc = rmcp("detect", "--no-such-flag")
    assert proc.returncode == 2
    assert proc.stderr.decode().startswith("rmcp: error: parsing arguments")


def test_help(rmcp):
    out = rmcp("--help", check=0).stdout.decode()
    assert "detect" in out and "snapshot" in out and "Exit codes:" in out


def test_help_detect(rmcp):
    out = rmcp("help", "detect", check=0).stdout.decode()
    assert "Facts about GPUs" in out and "nfd" in out
    assert rmcp("detect", "--help", check=0).stdout.decode() == out


def test_help_unknown_command(rmcp):
    proc = rmcp("help", "no-such-command")
    assert proc.returncode == 2
    assert "rmcp: error: looking up help for no-such-command: no such command" in proc.stderr.decode()


def test_version(rmcp):
    out = rmcp("--version", check=0).stdout.decode().strip()
    assert re.fullmatch(r"rmcp \d+\.\d+\.\d+\S*", out), out


# --- ROCm version sources, on variants of the fixtures ------------------------------------------

def _variant(tmp_path, name):
    root = tmp_path / name
    shutil.copytree(FIXTURES / name, root, symlinks=True)
    return root


def test_rocm_version_from_rocm_header_when_info_missing(rmcp, tmp_path):
    root = _variant(tmp_path, "rx5600xt-gfx1010-rocm52")
    (root / "opt/rocm-5.2.3/.info/version").unlink()
    rocm = rmcp.json("detect", "--root", root)["rocm"]
    assert [(r["path"], r["version"], r["version_source"]) for r in rocm] == [
        ("/opt/rocm-5.2.3", "5.2.3", "/opt/rocm-5.2.3/include/rocm-core/rocm_version.h")]


def test_rocm_version_from_hip_header_is_major_minor(rmcp, tmp_path):
    # HIP_VERSION_PATCH is a build number (21153), not ROCm's patch level.
    root = _variant(tmp_path, "rx5600xt-gfx1010-rocm52")
    (root / "opt/rocm-5.2.3/.info/version").unlink()
    (root / "opt/rocm-5.2.3/include/rocm-core/rocm_version.h").unlink()
    rocm = rmcp.json("detect", "--root", root)["rocm"]
    assert rocm[0]["version"] == "5.2"
    assert rocm[0]["version_source"] == "/opt/rocm-5.2.3/include/hip/hip_version.h"


def test_usr_rocm_without_dpkg_uses_headers(rmcp, tmp_path):
    root = _variant(tmp_path, "debian-rocm-cpu-torch")
    (root / "var/lib/dpkg/status").unlink()
    rocm = rmcp.json("detect", "--root", root)["rocm"]
    assert [(r["path"], r["kind"], r["version"]) for r in rocm] == [("/usr", "debian", "5.2")]


def test_rocm_path_through_alternatives_selects_versioned_dir(rmcp, tmp_path):
    root = _variant(tmp_path, "rx5500xt-gfx1012")
    environ = root / "proc/self/environ"
    environ.write_bytes(environ.read_bytes() + b"ROCM_PATH=/opt/rocm/\0")
    rocm = rmcp.json("detect", "--root", root)["rocm"]
    assert [(r["path"], r["selected_by"]) for r in rocm] == [("/opt/rocm-5.7.1", "ROCM_PATH")]


def test_links_never_leave_the_root(rmcp, tmp_path):
    # /opt/rocm -> /etc/alternatives/rocm must resolve inside the fixture, not on this machine.
    root = _variant(tmp_path, "rx6800xt-gfx1030-rocm61")
    (root / "etc/alternatives/rocm").unlink()
    (root / "etc/alternatives/rocm").symlink_to("/opt/rocm-5.7.1")
    rocm = {r["path"]: r["selected_by"] for r in rmcp.json("detect", "--root", root)["rocm"]}
    assert rocm == {"/opt/rocm-5.7.1": "LD_LIBRARY_PATH", "/opt/rocm-6.1.0": None}
