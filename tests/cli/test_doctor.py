"""rmcp doctor: the knowledge base evaluated on fixture roots.

EXPECTED is the findings table: for each fixture root, every finding doctor must report,
as "entry-id" (system scope) or "entry-id@node" (per GPU; @None for a GPU without a KFD
node). The kb-* fixtures are copies of the base fixtures with one change each:
  kb-rdna1-no-override    rx5600xt without HSA_OVERRIDE_GFX_VERSION (official-wheel case)
  kb-strix-halo           780M laptop re-badged as gfx1151 (gfx_target_version 110501), no override
  kb-strix-halo-cwsr-off  the same with amdgpu cwsr_enable=0
  kb-kernel-6-18          rx7900xtx on kernel 6.18.3 with PYTORCH_NO_HIP_MEMORY_CACHING=1
  kb-amdgpu-not-live      rx6700xt with /sys/module/amdgpu/initstate = "coming"
  kb-rx6600-gemm-off      rx6600 (gfx1032 as 10.3.0) with MIOPEN_DEBUG_CONV_GEMM=0
  kb-container-no-gpu     container-hidden-gpu with node 1's KFD files unreadable too: no GPU visible
  kb-igpu-first           desktop-igpu-dgpu with KFD nodes 1 and 2 swapped: the iGPU is ROCm's device 0
  kb-override-leftover    rx7800xt-gfx1101-override with a torch that has gfx1101 code (11.0.0 left over)
  kb-rdna2-apu            laptop-780m-healthy re-badged as a 680M (gfx1035), no override: a lone RDNA2 iGPU
  kb-rocm-path-mismatch   rx6800xt-gfx1030-rocm61 with ROCM_PATH=/opt/rocm-5.7.1 (a torch built for 6.0)
Fixtures with tiny GPU libraries (tests/fixtures/make_libraries.py: libtorch_hip.so with the
official wheels' targets, rocBLAS Tensile file names) give doctor coverage facts:
rx5600xt-gfx1010-rocm52, kb-rdna1-no-override, rx6700xt-gfx1031, laptop-780m-gfx1103,
kb-strix-halo, kb-strix-halo-cwsr-off. The others have empty placeholder libraries, so the
coverage entries fall back to their version tests there (kb-amdgpu-not-live, for one).
The fixtures of the knowledge-base audit (tests/fixtures/README.md) all have
coverage facts.
"""
import json
import pathlib
import re
import shutil
import sys
import tomllib

import pytest

from conftest import FIXTURES, GOLDEN, REPO, target_sorted, unversioned

sys.path.insert(0, str(FIXTURES))
import make_libraries  # noqa: E402

KB = REPO / "kb"

EXPECTED = {
    # One of the host's two GPUs passed in on purpose: the container works (issue 28).
    "container-hidden-gpu": {"dkms-version-missing"},
    "kb-container-no-gpu": {"container-hidden-gpu@1", "container-hidden-gpu@2", "dkms-version-missing"},
    "kb-rocm-path-mismatch": {"ppfeaturemask-overdrive", "torch-rocm-version-mismatch"},
    "kb-override-leftover": {"override-leftover@1", "dkms-version-missing"},
    "kb-rdna2-apu": {"rdna2-igpu-no-override@1", "dkms-version-missing"},
    "kb-igpu-first": {"override-cross-family@1", "igpu-selected@1", "override-global-mixed-gpus",
                      "dkms-version-missing", "override-redundant@2"},
    # A build machine without a GPU: a CPU torch and Debian's packaged ROCm are not problems.
    "debian-rocm-cpu-torch": set(),
    # The dGPU is ROCm's device 0, so the iGPU is a fact (igpu-visible), not a warning (issue 28).
    "desktop-igpu-dgpu": {"override-cross-family@2", "igpu-visible@2", "override-global-mixed-gpus",
                          "dkms-version-missing", "override-redundant@1"},
    "kfd-no-access": {"kfd-no-access", "dkms-version-missing"},
    "laptop-780m-gfx1103": {"dkms-version-missing", "override-same-family@1"},
    "mi210-gfx90a": {"override-on-supported-gpu@1"},
    "no-amdgpu": {"amdgpu-not-loaded"},
    "pcie-atomics-rejected": {"pcie-atomics-rejected@None", "dkms-version-missing"},
    "rx5500xt-gfx1012": {"rdna1-override-gfx1030@1", "dkms-version-missing"},
    "rx5600xt-gfx1010-rocm52": {"rdna1-override-gfx1030@1", "dkms-version-missing"},
    # rdna2-miopen-gemm-bwd-fault is log-driven since KB audit 2: the usual working setup.
    "rx6600-gfx1032": {"dkms-version-missing", "override-same-family@1"},
    "rx6700xt-gfx1031": {"rdna2-no-override@1", "dkms-version-missing"},
    # LD_LIBRARY_PATH does not swap a wheel's libraries (DT_RPATH; KB audit 2): no mismatch warning.
    "rx6800xt-gfx1030-rocm61": {"ppfeaturemask-overdrive"},
    # torch 2.4 ignores expandable_segments on ROCm (honoured from 2.11): nothing to report.
    "rx7900xtx-gfx1100": {"dkms-version-missing"},
    "rx6600xt-override-malformed": {"override-malformed@1", "dkms-version-missing"},
    "kb-rdna1-no-override": {"rdna1-official-wheels@1", "dkms-version-missing"},
    "kb-strix-halo": {"strix-halo-cwsr@1", "library-missing-target@1", "dkms-version-missing"},
    "kb-strix-halo-cwsr-off": {"library-missing-target@1", "dkms-version-missing"},
    "kb-kernel-6-18": {"kernel-6-18-rdna3-regression@1", "dkms-version-missing", "no-hip-memory-caching"},
    "kb-amdgpu-not-live": {"amdgpu-not-live", "amdgpu-not-loaded", "rdna2-no-override@1"},
    # MIOPEN_DEBUG_CONV_GEMM=0 alone leaves ConvOclBwdWrW2 on (MIOpen issue 3540).
    "kb-rx6600-gemm-off": {"dkms-version-missing", "override-same-family@1"},
    # The knowledge-base audit's machines.
    "rx7900xtx-healthy": {"dkms-version-missing"},
    "laptop-780m-healthy": {"dkms-version-missing", "override-same-family@1"},
    "laptop-780m-gttsize": {"apu-gtt-limit@1", "dkms-version-missing", "override-same-family@1"},
    # gfx1101 is on AMD's list, but torch 2.4 has no gfx1101 code: the override is needed.
    "rx7800xt-gfx1101-override": {"dkms-version-missing", "override-same-family@1"},
    "rx7600s-gfx1102-no-override": {"rdna3-no-override@1", "dkms-version-missing"},
    # The gfx1036 iGPU next to a dGPU is hidden, never overridden (KB audit 2, item 1).
    "desktop-igpu-dgpu-hip-visible": {"igpu-rocm-crash", "dkms-version-missing"},
    "rx9070xt-rocm62": {"rdna4-rocm-too-old@1", "library-missing-target@1", "dkms-version-missing"},
    "rx9070xt-kernel-6-18": {"kernel-6-18-rdna3-regression@1", "alloc-expandable-segments", "dkms-version-missing"},
    "strix-point-stale-override": {"override-not-needed@1", "dkms-version-missing"},
    "strix-halo-fixed": {"dkms-version-missing"},
    "rx7900xtx-cpu-torch": {"torch-cpu-build", "dkms-version-missing"},
    "wsl2-ubuntu": {"wsl2-no-kfd"},
}

SEVERITY_RANK = {"critical": 0, "warning": 1, "info": 2}
CATEGORIES = {"gpu-memory-fault", "gpu-hang", "hsa-runtime-error", "missing-code-object", "rocblas-missing-arch",
              "miopen-failure", "kernel-driver-fault", "device-access", "fork-after-init", "out-of-memory",
              "install-mismatch", "unsupported-gpu", "config-risk"}


def kb_entries():
    return {p.stem: tomllib.loads(p.read_text()) for p in sorted(KB.glob("*.toml"))}


def finding_keys(report):
    return {f["id"] + (f"@{f['gpu']['node']}" if f["gpu"] else "") for f in report["findings"]}


def doctor_json(rmcp, fixture, *extra):
    proc = rmcp("doctor", "--root", FIXTURES / fixture, "--format", "json", "--fail-on", "critical", *extra)
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout), proc.returncode


@pytest.mark.parametrize("fixture", sorted(EXPECTED))
def test_findings_table(rmcp, fixture):
    if not (FIXTURES / fixture).is_dir():
        pytest.fail(f"fixture {fixture} is missing")
    report, rc = doctor_json(rmcp, fixture)
    assert report["schema_version"] == 1
    assert finding_keys(report) == EXPECTED[fixture]
    # Sorted by severity, then id.
    order = [(SEVERITY_RANK[f["severity"]], f["id"]) for f in report["findings"]]
    assert order == sorted(order)
    assert rc == (1 if any(f["severity"] == "critical" for f in report["findings"]) else 0)
    for f in report["findings"]:
        assert f["evidence"], f["id"]
        assert f["references"] and f["category"] in CATEGORIES
        assert {"fact", "value", "test"} <= set(f["evidence"][0])


def test_every_entry_fires_somewhere_and_not_everywhere():
    """Every entry with [applies] has a fixture where it fires and one where it does not."""
    fired = {}
    for fixture, keys in EXPECTED.items():
        for key in keys:
            fired.setdefault(key.split("@")[0], set()).add(fixture)
    for entry_id, entry in kb_entries().items():
        if "applies" not in entry:
            continue
        assert fired.get(entry_id), f"{entry_id} fires on no fixture"
        assert set(EXPECTED) - fired[entry_id], f"{entry_id} fires on every fixture"


def test_entries_are_well_formed():
    entries = kb_entries()
    assert len(entries) >= 48
    for stem, e in entries.items():
        assert e["id"] == stem
        assert e["category"] in CATEGORIES
        assert e["severity"] in SEVERITY_RANK
        assert e["references"] and all(r.startswith("https://") for r in e["references"])
        assert "applies" in e or "signatures" in e
        if e["confidence"] == "generic":
            # A family entry names no cause to fix: it says how to learn more.
            assert e.get("next_step") and "applies" not in e, stem
        elif e["severity"] != "info" or "applies" in e:
            assert e.get("fixes"), f"{stem} has no fix"


def test_patch_ids_are_documented():
    """Every patch id used by an entry is in the table of docs/kb-format.md (the patch manager's contract)."""
    doc = (REPO / "docs" / "kb-format.md").read_text()
    documented = set(re.findall(r"^\| `([a-z0-9-]+)` \| (?:env|python|modprobe|advice) \|", doc, re.M))
    used = {f["patch"] for e in kb_entries().values() for f in e.get("fixes", [])}
    assert used <= documented, used - documented


@pytest.mark.parametrize("fail_on,expected", [("info", 1), ("warning", 1), ("critical", 0)])
def test_fail_on_thresholds(rmcp, fail_on, expected):
    # rx7900xtx-cpu-torch: one warning and one info finding, nothing critical.
    proc = rmcp("doctor", "--root", FIXTURES / "rx7900xtx-cpu-torch", "--fail-on", fail_on)
    assert proc.returncode == expected, proc.stderr


@pytest.mark.parametrize("fixture", ["rx6600-gfx1032", "rx7900xtx-healthy", "laptop-780m-healthy", "wsl2-ubuntu"])
def test_info_findings_are_never_open_and_never_fail(rmcp, fixture):
    """Issue 28: info is a fact, never "open", never counted by --fail-on (every one of these
    fixtures has info findings and nothing above)."""
    report, _ = doctor_json(rmcp, fixture)
    infos = [f for f in report["findings"] if f["severity"] == "info"]
    assert infos and all(f["status"] == "info" for f in infos), report["findings"]
    assert rmcp("doctor", "--root", FIXTURES / fixture, "--fail-on", "info").returncode == 0


def test_default_fail_on_is_critical(rmcp):
    assert rmcp("doctor", "--root", FIXTURES / "rx6600-gfx1032").returncode == 0
    assert rmcp("doctor", "--root", FIXTURES / "mi210-gfx90a").returncode == 1


def test_bad_fail_on_is_usage_error(rmcp):
    assert rmcp("doctor", "--fail-on", "fatal").returncode == 2


def test_text_output(rmcp):
    # The checklist names the finding and the command; evidence, fixes and references are -v's.
    proc = rmcp("doctor", "--root", FIXTURES / "strix-point-stale-override")
    out = proc.stdout.decode()
    assert "[!] GPU 0 gfx1150: override  override-not-needed (warning)" in out, out
    assert "patch apply env-unset-override" in out
    assert "references:" not in out and "4557" not in out
    assert "\x1b[" not in out  # NO_COLOR
    verbose = rmcp("-v", "doctor", "--root", FIXTURES / "strix-point-stale-override").stdout.decode()
    assert "WARNING  override-not-needed" in verbose
    assert "GPU 0: the override's target is gfx1100" in verbose
    assert "https://github.com/ROCm/ROCm/issues/4557" in verbose
    colored = rmcp("doctor", "--root", FIXTURES / "strix-point-stale-override", "--color", "always").stdout.decode()
    assert "\x1b[33m" in colored


def test_no_gpu_is_said_plainly(rmcp):
    proc = rmcp("doctor", "--root", FIXTURES / "no-amdgpu")
    assert "no AMD GPU found" in proc.stdout.decode()
    report, _ = doctor_json(rmcp, "no-amdgpu")
    assert report["gpus"] == 0 and any("no AMD GPU" in n for n in report["notes"])
    assert "amdgpu-not-loaded" in finding_keys(report)  # and it still checked the rest


PROM_LINE = re.compile(r'^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\\n]|\\.)*",?)*\})? -?[0-9.eE+-]+$')


def test_prometheus_format(rmcp):
    proc = rmcp("doctor", "--root", FIXTURES / "desktop-igpu-dgpu", "--format", "prometheus")
    assert proc.returncode == 0  # critical findings, but the metrics say so (no --fail-on given)
    lines = proc.stdout.decode().splitlines()
    typed = set()
    for line in lines:
        if line.startswith("# HELP "):
            continue
        if line.startswith("# TYPE "):
            name, kind = line.split()[2:4]
            # Only counters end in _total (Prometheus naming); the incident counts are counters.
            assert kind == ("counter" if name.endswith("_total") else "gauge"), line
            typed.add(name)
            continue
        assert PROM_LINE.match(line), line
        assert line.split("{")[0].split(" ")[0] in typed, line
    assert 'rmcp_finding{id="override-cross-family",severity="critical",category="gpu-memory-fault",' \
           'confidence="reported",gpu="2",status="open"} 1' in lines
    assert 'rmcp_findings{severity="critical"} 1' in lines
    assert "rmcp_amd_gpus 2" in lines


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


GOOD = '''id = "{id}"
title = "t"
category = "config-risk"
severity = "info"
confidence = "hypothesis"
summary = "s"
references = ["https://example.org/"]
[applies]
fact = "driver.loaded"
equals = true
'''


@pytest.mark.parametrize("body,line,cause", [
    (GOOD.replace('severity = "info"', 'severity = "fatal"'), 4, "severity"),
    (GOOD + 'colour = "red"\n', 11, 'unknown key "colour"'),
    (GOOD.replace('fact = "driver.loaded"', 'fact = "drivers.loaded"'), 9, "fact path"),
    (GOOD.replace('category = "config-risk"', 'category = "crash"'), 3, "unknown category"),
    ('id = "bad"\ntitle = [\n', 2, "end-of-file"),
])
def test_malformed_kb_names_file_and_line(rmcp, tmp_path, body, line, cause):
    write(tmp_path / "kb" / "bad.toml", body.replace("{id}", "bad"))
    write(tmp_path / "kb" / "fine.toml", GOOD.replace("{id}", "fine"))
    proc = rmcp("--kb", tmp_path / "kb", "doctor", "--root", FIXTURES / "rx6600-gfx1032")
    assert proc.returncode == 2
    err = proc.stderr.decode()
    assert f"bad.toml:{line}" in err and cause in err, err
    assert err.startswith("rmcp: error: ")
    assert proc.stdout == b""


def test_kb_override_dir(rmcp, tmp_path):
    write(tmp_path / "kb" / "fine.toml", GOOD.replace("{id}", "fine"))
    report = json.loads(rmcp("--kb", tmp_path / "kb", "doctor", "--root", FIXTURES / "rx6600-gfx1032",
                             "--format", "json", check=0).stdout)
    assert [f["id"] for f in report["findings"]] == ["fine"]
    assert report["findings"][0]["evidence"] == [{"fact": "driver.loaded", "value": True, "test": "equals true"}]


def test_missing_kb_dir_is_usage_error(rmcp, tmp_path):
    proc = rmcp("--kb", tmp_path / "nowhere", "doctor")
    assert proc.returncode == 2 and b"not a directory" in proc.stderr


@pytest.mark.parametrize("fixture", sorted(p.parent.name for p in GOLDEN.glob("*/doctor.json")) if GOLDEN.exists() else [])
def test_golden(rmcp, fixture):
    report, _ = doctor_json(rmcp, fixture)
    # Next commands carry `--root DIR`; goldens say ROOT (scripts/regen-golden.sh).
    report = json.loads(json.dumps(report).replace(f"--root {FIXTURES / fixture} ", "--root ROOT "))
    assert unversioned(report) == json.loads((GOLDEN / fixture / "doctor.json").read_text())


# ---------------------------------------------------------------------------------------------
# Coverage facts: doctor merges scan's `libraries` object and the entries decide
# from what the libraries contain; without coverage facts they fall back to version tests.

def finding(report, entry_id):
    found = [f for f in report["findings"] if f["id"] == entry_id]
    assert len(found) == 1, [f["id"] for f in report["findings"]]
    return found[0]


def evidence_map(f):
    return {e["fact"]: (e["value"], e["test"]) for e in f["evidence"]}


def test_rdna2_evidence_names_the_covered_target(rmcp):
    f = finding(doctor_json(rmcp, "rx6700xt-gfx1031")[0], "rdna2-no-override")
    ev = evidence_map(f)
    assert ev["gpus[0].coverage.torch_hip[0].covered"] == (False, "equals false")
    assert ev["gpus[0].coverage.torch_hip[0].nearest"] == ("gfx1030", "equals gfx1030")
    assert "gpus[0].coverage" not in ev  # decided by coverage, not by the fallback


def test_rdna1_evidence_says_no_code_and_no_safe_override(rmcp):
    f = finding(doctor_json(rmcp, "kb-rdna1-no-override")[0], "rdna1-official-wheels")
    ev = evidence_map(f)
    assert ev["gpus[0].coverage.torch_hip[0].covered"] == (False, "equals false")
    assert ev["gpus[0].coverage.torch_hip.nearest"] == (None, "not exists true")
    assert "torch.hip_version" not in ev


def test_library_missing_target_names_the_library(rmcp):
    f = finding(doctor_json(rmcp, "kb-strix-halo")[0], "library-missing-target")
    ev = evidence_map(f)
    assert ev["gpus[0].coverage_missing[0]"][0] in {"rocblas_tensile", "torch_hip"}
    assert ev["gpus[0].effective_gfx_target"][0] == "gfx1151"
    assert f["severity"] == "critical" and f["category"] == "missing-code-object"


def test_fallback_without_coverage_facts_is_the_version_test(rmcp):
    # kb-amdgpu-not-live has only an empty placeholder libtorch_hip.so: no coverage rows.
    f = finding(doctor_json(rmcp, "kb-amdgpu-not-live")[0], "rdna2-no-override")
    assert evidence_map(f)["gpus[0].coverage"] == (None, "not exists true")


@pytest.mark.parametrize("fixture,kept,dropped", [
    ("rx6700xt-gfx1031", {"rdna2-no-override@1"}, set()),
    ("kb-rdna1-no-override", {"rdna1-official-wheels@1"}, set()),
    ("kb-strix-halo", {"strix-halo-cwsr@1"}, {"library-missing-target@1"}),
])
def test_no_scan_uses_the_fallbacks(rmcp, fixture, kept, dropped):
    report, _ = doctor_json(rmcp, fixture, "--no-scan")
    keys = finding_keys(report)
    assert kept <= keys and not (dropped & keys), keys
    assert any("--no-scan" in n for n in report["notes"])
    for f in report["findings"]:  # coverage appears only as absent (the fallback's own test)
        assert all(e["value"] is None for e in f["evidence"] if ".coverage" in e["fact"]), f


def copy_fixture(tmp_path, name):
    dst = tmp_path / name
    shutil.copytree(FIXTURES / name, dst, symlinks=True)
    return dst


def test_coverage_overrules_the_version_guess(rmcp, tmp_path):
    """A PyTorch that does carry gfx1031 code: rdna2-no-override must not fire, although
    the GPU, the missing override and the version facts are those of rx6700xt-gfx1031."""
    root = copy_fixture(tmp_path, "rx6700xt-gfx1031")
    lib = next(root.glob("home/sam/.local/lib/python3.12/site-packages/torch/lib/libtorch_hip.so"))
    lib.write_bytes(make_libraries.host_library(["gfx1030", "gfx1031", "gfx1100"]))
    proc = rmcp("doctor", "--root", root, "--format", "json")
    keys = finding_keys(json.loads(proc.stdout))
    assert "rdna2-no-override@1" not in keys and "library-missing-target@1" not in keys, keys


def test_rdna1_with_a_gfx1010_build_is_quiet(rmcp, tmp_path):
    root = copy_fixture(tmp_path, "kb-rdna1-no-override")
    lib = next(root.glob("home/alex/sd-venv/lib/python3.10/site-packages/torch/lib/libtorch_hip.so"))
    lib.write_bytes(make_libraries.host_library(["gfx1010", "gfx1030"]))
    keys = finding_keys(json.loads(rmcp("doctor", "--root", root, "--format", "json").stdout))
    assert "rdna1-official-wheels@1" not in keys, keys


def test_override_to_a_target_the_library_lacks(rmcp, tmp_path):
    """library-missing-target on an override: gfx1103 run as 11.0.0 against a torch with no gfx1100."""
    root = copy_fixture(tmp_path, "laptop-780m-gfx1103")
    lib = next(root.glob("home/lee/.venv/lib/python3.12/site-packages/torch/lib/libtorch_hip.so"))
    lib.write_bytes(make_libraries.host_library(["gfx1030", "gfx90a"]))
    report = json.loads(rmcp("doctor", "--root", root, "--format", "json").stdout)
    f = finding(report, "library-missing-target")
    assert evidence_map(f)["gpus[0].coverage_missing[0]"][0] == "torch_hip"
    assert evidence_map(f)["gpus[0].effective_gfx_target"][0] == "gfx1100"


def test_fixture_libraries_scan_as_generated(rmcp):
    """The committed fixture libraries are what make_libraries.py writes, and scan reads
    exactly the table's targets from them."""
    for name, libs in make_libraries.LIBRARIES.items():
        for path, (kind, targets) in libs.items():
            p = FIXTURES / name / path.lstrip("/")
            if kind == "torch":
                assert p.read_bytes() == make_libraries.host_library(targets), p
                out = json.loads(rmcp("scan", p, "--format", "json").stdout)
                assert out["files"][0]["targets"] == target_sorted(targets), p
                assert out["files"][0]["warnings"] == [] and out["files"][0]["kind"] == "host-elf"
                assert p.stat().st_size < 4096
            else:
                assert sorted(q.name for q in p.iterdir()) == sorted(f"TensileLibrary_lazy_{t}.dat" for t in targets)


# ---------------------------------------------------------------------------------------------
# The knowledge-base audit: coverage, not AMD's list, decides about overrides, and
# entries that fired on healthy machines no longer do.

def test_builtin_amdgpu_counts_as_loaded(rmcp, tmp_path):
    """amdgpu built into the kernel: /sys/module/amdgpu/parameters exists, initstate does not
    (kernel.org Documentation/ABI/stable/sysfs-module). Not 'not loaded'."""
    root = copy_fixture(tmp_path, "rx7900xtx-healthy")
    (root / "sys/module/amdgpu/initstate").unlink()
    (root / "sys/module/amdgpu/refcnt").unlink()
    facts = json.loads(rmcp("detect", "--root", root, "--format", "json", check=0).stdout)
    assert facts["driver"]["loaded"] is True and facts["driver"]["builtin"] is True
    assert "amdgpu-not-loaded" not in finding_keys(doctor_json(rmcp, root)[0])
    # A module that is not there at all is still "not loaded".
    shutil.rmtree(root / "sys/module/amdgpu")
    facts = json.loads(rmcp("detect", "--root", root, "--format", "json", check=0).stdout)
    assert facts["driver"]["loaded"] is False and facts["driver"]["builtin"] is False


def test_override_the_torch_needs_is_not_reported_for_removal(rmcp):
    """gfx1101 (on AMD's list) as 11.0.0 with torch 2.4, which has no gfx1101 code."""
    report, _ = doctor_json(rmcp, "rx7800xt-gfx1101-override")
    assert "override-on-supported-gpu@1" not in finding_keys(report)
    f = finding(report, "override-same-family")
    assert evidence_map(f)["gpus[0].coverage.torch_hip[0].chip_covered"] == (False, "equals false")


def test_override_on_a_chip_the_torch_covers_is_reported(rmcp, tmp_path):
    """The same card with a torch >= 2.6 (gfx1101 code): now the override is not needed, and
    harmless (gfx1101 has gfx1100's register file): a fact, not an alarm (KB audit 2)."""
    root = copy_fixture(tmp_path, "rx7800xt-gfx1101-override")
    lib = next(root.glob("home/ivo/venv/lib/python3.12/site-packages/torch/lib/libtorch_hip.so"))
    lib.write_bytes(make_libraries.host_library(["gfx1030", "gfx1100", "gfx1101"]))
    report = doctor_json(rmcp, root)[0]
    keys = finding_keys(report)
    assert "override-leftover@1" in keys and "override-same-family@1" not in keys, keys
    assert "override-on-supported-gpu@1" not in keys and "override-not-needed@1" not in keys, keys
    assert rmcp("doctor", "--root", root, "--fail-on", "info").returncode == 0


def test_stale_override_needs_native_code_in_the_torch(rmcp, tmp_path):
    """gfx1150 as 11.0.0: override-not-needed only when the torch has gfx1150 code."""
    assert "override-not-needed@1" in finding_keys(doctor_json(rmcp, "strix-point-stale-override")[0])
    root = copy_fixture(tmp_path, "strix-point-stale-override")
    lib = next(root.glob("home/ada/venv/lib/python3.12/site-packages/torch/lib/libtorch_hip.so"))
    lib.write_bytes(make_libraries.host_library(["gfx1030", "gfx1100"]))
    keys = finding_keys(doctor_json(rmcp, root)[0])
    assert "override-not-needed@1" not in keys and "override-same-family@1" in keys, keys


def test_strix_halo_cwsr_depends_on_kernel_and_runtime(rmcp, tmp_path):
    assert "strix-halo-cwsr@1" not in finding_keys(doctor_json(rmcp, "strix-halo-fixed")[0])
    root = copy_fixture(tmp_path, "strix-halo-fixed")
    (root / "proc/sys/kernel/osrelease").write_text("6.17.9-300.fc43.x86_64\n")
    assert "strix-halo-cwsr@1" in finding_keys(doctor_json(rmcp, root)[0])


def test_pcie_atomics_needs_kfd(rmcp, tmp_path):
    root = copy_fixture(tmp_path, "pcie-atomics-rejected")
    meta = root / ".rmcp-meta"
    meta.write_text("".join(l for l in meta.read_text().splitlines(True) if "/dev/kfd" not in l))
    assert not any(k.startswith("pcie-atomics-rejected") for k in finding_keys(doctor_json(rmcp, root)[0]))


def test_node_inputs_bad_files_are_warnings_naming_the_file(rmcp, tmp_path):
    """Issue 32: the probe result and incident reports doctor's metrics read (inside --root) may
    be anything; a bad one is a warning with its path and cause, the metrics are still written
    and say "no probe", and nothing is read outside the root."""
    root = tmp_path / "root"
    shutil.copytree(FIXTURES / "rx7900xtx-healthy", root, symlinks=True)
    write(root / "var/lib/rmcp/probe-result.json", '{"configurations": 7}')
    write(root / "var/lib/rmcp/incidents/20260101T000000Z-1.json", "not json")
    write(root / "var/lib/rmcp/incidents/20260101T000001Z-2.json",
          '{"kind": "rmcp-run-incident", "classification": "stall", "attempts": []}')
    # The same names outside the root: never read.
    write(tmp_path / "var/lib/rmcp/probe-result.json", "{}")
    out = tmp_path / "rmcp.prom"
    proc = rmcp("--root", root, "doctor", "--format", "prometheus", "--probe-result", "/var/lib/rmcp/probe-result.json",
                "--incidents", "/var/lib/rmcp/incidents", "-o", out)
    assert proc.returncode == 0, proc.stderr
    err = proc.stderr.decode()
    assert "probe-result.json" in err and "20260101T000000Z-1.json" in err, err
    lines = out.read_text().splitlines()
    assert 'rmcp_probe_result_present{path="/var/lib/rmcp/probe-result.json"} 0' in lines
    assert 'rmcp_run_incidents_total{classification="stall"} 1' in lines
    assert "rmcp_run_incident_reports_unreadable 1" in lines
    nfd = rmcp("--root", root, "doctor", "--format", "nfd", "--probe-result", "/var/lib/rmcp/probe-result.json")
    assert nfd.returncode == 0 and "rmcp.probe_passed=false" in nfd.stdout.decode().splitlines()
    assert "20260101T000000Z-1.json" not in nfd.stderr.decode(), "nfd reads no incident reports"
