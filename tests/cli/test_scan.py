"""`rmcp scan` against the real tools: hipcc-built binaries, Debian's ROCm
libraries compared with roc-obj-ls and clang-offload-bundler, hostile files, coverage."""
import json
import os
import pathlib
import shutil
import struct
import subprocess

import pytest

from conftest import target_sorted

ROCRAND = pathlib.Path("/usr/lib/x86_64-linux-gnu/librocrand.so.1.1")
HSA = pathlib.Path("/usr/lib/x86_64-linux-gnu/libhsa-runtime64.so.1.5.0")
# 1.3 GB: not installed by scripts/setup.sh (CI skips this one); `apt install librocsparse0`.
ROCSPARSE = pathlib.Path("/usr/lib/x86_64-linux-gnu/librocsparse.so.0.1")
BUNDLER = shutil.which("clang-offload-bundler") or "/usr/lib/llvm-15/bin/clang-offload-bundler"
ARCHS = ["gfx1010", "gfx1030", "gfx906:xnack-", "gfx90a:xnack+"]

KERNEL = r"""
#include <hip/hip_runtime.h>
__global__ void twice(float* x) { x[threadIdx.x] *= 2.0f; }
extern "C" int launch(float* p) { hipLaunchKernelGGL(twice, dim3(1), dim3(1), 0, 0, p); return 0; }
"""


def scan_json(rmcp, *args, **kw):
    proc = rmcp("scan", *map(str, args), "--format", "json", **kw)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def roc_obj_ls(path):
    """(entry id, offset, size) per line of roc-obj-ls -v."""
    out = subprocess.run(["roc-obj-ls", "-v", str(path)], capture_output=True, text=True).stdout
    rows = []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[2].startswith("file://"):
            uri = parts[2]
            offset = int(uri.split("#offset=")[1].split("&")[0])
            size = int(uri.split("&size=")[1])
            rows.append((parts[1], offset, size))
    return rows


def parse_bundle_independently(blob, base=0):
    """The clang-offload-bundler layout read with struct, for cross-checking rmcp."""
    assert blob[:24] == b"__CLANG_OFFLOAD_BUNDLE__"
    (count,) = struct.unpack_from("<Q", blob, 24)
    pos, rows = 32, []
    for _ in range(count):
        off, size, n = struct.unpack_from("<QQQ", blob, pos)
        rows.append((blob[pos + 24:pos + 24 + n].decode(), base + off, size))
        pos += 24 + n
    return rows


@pytest.fixture(scope="session")
def hip_build(tmp_path_factory):
    if not shutil.which("hipcc"):
        pytest.skip("hipcc is not installed (scripts/setup.sh installs Debian's)")
    d = tmp_path_factory.mktemp("hip")
    src = d / "k.hip"
    src.write_text(KERNEL)
    lib = d / "libk.so"
    cmd = ["hipcc", "-shared", "-fPIC", "-o", str(lib), str(src)] + [f"--offload-arch={a}" for a in ARCHS]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        pytest.fail(f"hipcc failed: {proc.stderr[-2000:]}")
    fat = d / "fat.bin"
    subprocess.run(["objcopy", "-O", "binary", "--only-section=.hip_fatbin", str(lib), str(fat)], check=True)
    return lib, fat


def test_hipcc_library_targets_offsets_sizes(rmcp, hip_build):
    lib, fat = hip_build
    doc = scan_json(rmcp, lib)
    assert doc["schema_version"] == 1
    (f,) = doc["files"]
    assert f["kind"] == "host-elf"
    assert f["targets"] == target_sorted(ARCHS)
    assert f["warnings"] == []
    # Offsets are absolute in the library: .hip_fatbin's file offset plus the entry offset.
    section_offset = int(subprocess.run(["readelf", "-SW", str(lib)], capture_output=True, text=True).stdout
                         .split(".hip_fatbin")[1].split()[2], 16)
    expected = parse_bundle_independently(fat.read_bytes(), section_offset)
    got = [(e["id"], e["offset"], e["size"]) for e in f["entries"]]
    assert got == expected
    assert got == roc_obj_ls(lib)
    # clang-offload-bundler needs the extracted section; it lists the same ids.
    listed = subprocess.run([BUNDLER, "--list", "--type=o", f"--input={fat}"], capture_output=True, text=True)
    assert listed.returncode == 0, listed.stderr
    assert sorted(listed.stdout.split()) == sorted(e["id"] for e in f["entries"])
    # The extracted section scans to the same entries, relative to its own start.
    (g,) = scan_json(rmcp, fat)["files"]
    assert g["kind"] == "offload-bundle"
    assert [(e["id"], e["offset"] + section_offset, e["size"]) for e in g["entries"]] == expected
    assert all(e["code_object_version"] == 4 for e in f["entries"] if e["target"])


def test_hipcc_directory_and_text(rmcp, hip_build):
    lib, _ = hip_build
    proc = rmcp("scan", lib.parent, check=0)
    line = [l for l in proc.stdout.decode().splitlines() if "libk.so" in l][0]
    for arch in ARCHS:
        assert arch in line


@pytest.mark.skipif(not ROCRAND.exists(), reason="librocrand1 is not installed (Debian package librocrand1)")
def test_rocrand_matches_roc_obj_ls(rmcp):
    (f,) = scan_json(rmcp, ROCRAND)["files"]
    theirs = roc_obj_ls(ROCRAND)
    assert [(e["id"], e["offset"], e["size"]) for e in f["entries"]] == theirs
    device = target_sorted({row[0].split("--", 1)[1] for row in theirs if not row[0].startswith("host")})
    assert f["targets"] == device
    assert len(device) == 7 and "gfx1030" in device and "gfx90a:xnack+" in device


@pytest.mark.skipif(not ROCSPARSE.exists(), reason="librocsparse0 (1.3 GB) is not installed; developer machines only")
def test_rocsparse_matches_roc_obj_ls(rmcp):
    # 111 bundles of 8 entries each, one after another in .hip_fatbin.
    (f,) = scan_json(rmcp, ROCSPARSE)["files"]
    theirs = roc_obj_ls(ROCSPARSE)
    assert [(e["id"], e["offset"], e["size"]) for e in f["entries"]] == theirs
    assert f["bundles"] == 111 and len(theirs) == 888
    assert f["targets"] == target_sorted({row[0].split("--", 1)[1] for row in theirs if not row[0].startswith("host")})


@pytest.mark.skipif(not HSA.exists(), reason="libhsa-runtime64-1 is not installed")
def test_hsa_runtime_raw_code_objects(rmcp):
    # roc-obj-ls only reads .hip_fatbin and finds nothing in this library ("No kernel
    # section found"): its code objects are raw AMDGPU ELF images in .data. Cross-check
    # with an independent sweep for EM_AMDGPU ELF headers.
    listed = subprocess.run(["roc-obj-ls", str(HSA)], capture_output=True, text=True)
    assert roc_obj_ls(HSA) == []
    assert "No kernel section" in listed.stdout + listed.stderr
    data = HSA.read_bytes()
    offsets, pos = [], 1
    while (pos := data.find(b"\x7fELF\x02\x01\x01", pos)) >= 0:
        if struct.unpack_from("<H", data, pos + 18)[0] == 224:
            offsets.append(pos)
        pos += 1
    (f,) = scan_json(rmcp, HSA)["files"]
    assert [e["offset"] for e in f["entries"]] == offsets
    assert "gfx1010" in f["targets"] and "gfx1030" in f["targets"] and "gfx700" in f["targets"]
    assert "gfx1035" in f["targets"]


def test_sweep_finds_bundles_in_data_sections_and_relocated_data_with_deep(rmcp, tmp_path, hip_build):
    # A real bundle (hipcc's .hip_fatbin) placed in a host object's .rodata, and in its
    # .data.rel.ro, by objcopy: the default sweep reads the first, --deep also the second.
    _, fat = hip_build
    objs = {}
    for section in (".rodata", ".data.rel.ro"):
        obj = tmp_path / f"blob{section.replace('.', '_')}.o"
        subprocess.run(["objcopy", "-I", "binary", "-O", "elf64-x86-64", "-B", "i386:x86-64",
                        "--rename-section", f".data={section},alloc,load,data,contents", str(fat), str(obj)],
                       check=True)
        assert section in subprocess.run(["readelf", "-SW", str(obj)], capture_output=True, text=True).stdout
        objs[section] = obj
    (f,) = scan_json(rmcp, objs[".rodata"])["files"]
    assert f["kind"] == "host-elf" and f["targets"] == target_sorted(ARCHS)
    (g,) = scan_json(rmcp, objs[".data.rel.ro"])["files"]
    assert g["targets"] == []
    (h,) = scan_json(rmcp, "--deep", objs[".data.rel.ro"])["files"]
    assert h["targets"] == target_sorted(ARCHS)


def write(path, data):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def test_hostile_files_warn_and_continue(rmcp, tmp_path, hip_build):
    _, fat = hip_build
    good = fat.read_bytes()
    cases = {
        "huge_count.co": b"__CLANG_OFFLOAD_BUNDLE__" + struct.pack("<Q", 2**63),
        "bad_offset.co": good[:32] + struct.pack("<Q", 2**64 - 16) + good[40:],
        "truncated.co": good[:60],
        "ccob_truncated.co": b"CCOB" + struct.pack("<HHQQQ", 3, 1, 10**12, 10**15, 0) + b"\x28\xb5\x2f\xfd",
        "ccob_bad_method.co": b"CCOB" + struct.pack("<HHQQQ", 3, 9, 40, 100, 0) + b"\0" * 8,
        "elf_bad_shoff.so": b"\x7fELF\x02\x01\x01" + b"\0" * 9 + struct.pack("<HHIQQQIHHHHHH", 3, 62, 1, 0, 0,
                                                                           2**40, 0, 64, 56, 0, 64, 30, 1),
        "empty.hsaco": b"",
    }
    for name, data in cases.items():
        write(tmp_path / "bad" / name, data)
    write(tmp_path / "bad" / "ok.co", good)
    proc = rmcp("scan", tmp_path / "bad", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    by_name = {pathlib.Path(f["path"]).name: f for f in doc["files"]}
    assert set(by_name) == set(cases) | {"ok.co"}
    assert by_name["ok.co"]["targets"] == target_sorted(ARCHS)
    stderr = proc.stderr.decode()
    for name in ["huge_count.co", "bad_offset.co", "truncated.co", "ccob_truncated.co", "ccob_bad_method.co",
                 "elf_bad_shoff.so"]:
        assert by_name[name]["warnings"], name
        assert f"{name} at offset " in stderr, name
    # Only the host entry's offset was spoiled: every device entry is still reported.
    assert by_name["bad_offset.co"]["targets"] == target_sorted(ARCHS)


def test_missing_path_is_usage_error(rmcp, tmp_path):
    proc = rmcp("scan", tmp_path / "nope.so")
    assert proc.returncode == 2
    assert b"rmcp: error: scanning" in proc.stderr


def make_root(tmp_path, lib, gfx_versions):
    root = tmp_path / "root"
    topo = root / "sys/class/kfd/kfd/topology/nodes"
    write(topo / "0/properties", b"gfx_target_version 0\nsimd_count 0\n")
    write(topo / "0/gpu_id", b"0\n")
    for i, v in enumerate(gfx_versions, start=1):
        write(topo / f"{i}/properties", f"gfx_target_version {v}\nsimd_count 40\nsimd_per_cu 2\n".encode())
        write(topo / f"{i}/gpu_id", f"{1000 + i}\n".encode())
    rocm = root / "opt/rocm-6.0.0"
    write(rocm / ".info/version", b"6.0.0\n")
    shutil.copy(lib, write(rocm / "lib/librocblas.so.4", b""))
    write(rocm / "lib/rocblas/library/TensileLibrary_lazy_gfx1030.dat", b"\x80")
    write(rocm / "lib/rocblas/library/TensileLibrary_lazy_gfx906.dat", b"\x80")
    write(rocm / "share/miopen/db/gfx1030_30.kdb", b"SQLite format 3\0")
    return root


def test_coverage_against_detected_gpus(rmcp, tmp_path, hip_build):
    lib, _ = hip_build
    # RX 6700 XT (gfx1031), RX 5700 XT (gfx1010), RX 7900 XTX (gfx1100).
    root = make_root(tmp_path, lib, [100301, 100100, 110000])
    doc = scan_json(rmcp, "--root", root, env={"HOME": "/nonexistent"})
    libs = doc["libraries"]
    assert libs["rocblas"]["targets"] == target_sorted(ARCHS)
    assert libs["rocblas_tensile"]["targets"] == ["gfx906", "gfx1030"]
    assert libs["miopen_kdb"]["targets"] == ["gfx1030"]
    rows = {(c["gpu_target"], c["library"]): c for c in libs["coverage"]}
    c = rows[("gfx1031", "rocblas_tensile")]
    assert not c["covered"] and c["nearest"] == "gfx1030"
    assert c["override"] == {"variable": "HSA_OVERRIDE_GFX_VERSION", "value": "10.3.0"}
    assert rows[("gfx1010", "rocblas")]["covered"]
    c = rows[("gfx1010", "rocblas_tensile")]
    assert not c["covered"] and c["nearest"] is None and c["override"] is None  # RDNA1 ≠ RDNA2
    c = rows[("gfx1100", "rocblas")]
    assert not c["covered"] and c["override"] is None
    # With the override in effect the same GPU is covered under its effective target
    # (detect reads the environment through the Root: /proc/self/environ).
    write(root / "proc/self/environ", b"HSA_OVERRIDE_GFX_VERSION_1=10.3.0\0")
    doc = scan_json(rmcp, "--root", root, env={"HOME": "/nonexistent"})
    rows = {(c["node"], c["library"]): c for c in doc["libraries"]["coverage"]}
    assert rows[(1, "rocblas_tensile")]["covered"] and rows[(1, "rocblas_tensile")]["effective_target"] == "gfx1030"
    (root / "proc/self/environ").unlink()
    text = rmcp("scan", "--root", root, env={"HOME": "/nonexistent"}, check=0).stdout.decode()
    assert "HSA_OVERRIDE_GFX_VERSION=10.3.0" in text and "no override is safe" in text
