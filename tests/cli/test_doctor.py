"""rmcp doctor: the knowledge base evaluated on fixture roots (issue 3).

EXPECTED is the findings table: for each fixture root, every finding doctor must report,
as "entry-id" (system scope) or "entry-id@node" (per GPU; @None for a GPU without a KFD
node). The kb-* fixtures are copies of the base fixtures with one change each:
  kb-rdna1-no-override    rx5600xt without HSA_OVERRIDE_GFX_VERSION (official-wheel case)
  kb-strix-halo           780M laptop re-badged as gfx1151 (gfx_target_version 110501), no override
  kb-strix-halo-cwsr-off  the same with amdgpu cwsr_enable=0
  kb-kernel-6-18          rx7900xtx on kernel 6.18.3 with PYTORCH_NO_HIP_MEMORY_CACHING=1
  kb-amdgpu-not-live      rx6700xt with /sys/module/amdgpu/initstate = "coming"
  kb-rx6600-gemm-off      rx6600 (gfx1032 as 10.3.0) with MIOPEN_DEBUG_CONV_GEMM=0
"""
import json
import pathlib
import re
import tomllib

import pytest

from conftest import FIXTURES, GOLDEN, REPO

KB = REPO / "kb"

EXPECTED = {
    "container-hidden-gpu": {"container-hidden-gpu@2", "dkms-version-missing"},
    "debian-rocm-cpu-torch": {"amdgpu-not-loaded", "torch-cpu-build"},
    "desktop-igpu-dgpu": {"override-cross-family@2", "igpu-selected", "override-global-mixed-gpus",
                          "dkms-version-missing", "override-redundant@1"},
    "kfd-no-access": {"kfd-no-access", "dkms-version-missing"},
    "laptop-780m-gfx1103": {"dkms-version-missing", "override-same-family@1"},
    "mi210-gfx90a": {"override-on-supported-gpu@1"},
    "no-amdgpu": {"amdgpu-not-loaded"},
    "pcie-atomics-rejected": {"pcie-atomics-rejected@None", "dkms-version-missing"},
    "rx5500xt-gfx1012": {"rdna1-override-gfx1030@1", "dkms-version-missing"},
    "rx5600xt-gfx1010-rocm52": {"rdna1-override-gfx1030@1", "dkms-version-missing"},
    "rx6600-gfx1032": {"rdna2-miopen-gemm-bwd-fault@1", "dkms-version-missing", "override-same-family@1"},
    "rx6700xt-gfx1031": {"rdna2-no-override@1", "dkms-version-missing"},
    "rx6800xt-gfx1030-rocm61": {"ppfeaturemask-overdrive", "torch-rocm-version-mismatch"},
    "rx7900xtx-gfx1100": {"alloc-expandable-segments", "dkms-version-missing"},
    "rx6600xt-override-malformed": {"override-malformed@1", "dkms-version-missing"},
    "kb-rdna1-no-override": {"rdna1-official-wheels@1", "dkms-version-missing"},
    "kb-strix-halo": {"strix-halo-cwsr@1", "dkms-version-missing"},
    "kb-strix-halo-cwsr-off": {"dkms-version-missing"},
    "kb-kernel-6-18": {"kernel-6-18-rdna3-regression@1", "alloc-expandable-segments", "dkms-version-missing",
                       "no-hip-memory-caching"},
    "kb-amdgpu-not-live": {"amdgpu-not-live", "amdgpu-not-loaded", "rdna2-no-override@1"},
    "kb-rx6600-gemm-off": {"dkms-version-missing", "override-same-family@1"},
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
    assert len(entries) >= 25
    for stem, e in entries.items():
        assert e["id"] == stem
        assert e["category"] in CATEGORIES
        assert e["severity"] in SEVERITY_RANK
        assert e["references"] and all(r.startswith("https://") for r in e["references"])
        assert "applies" in e or "signatures" in e
        if e["severity"] != "info" or "applies" in e:
            assert e.get("fixes"), f"{stem} has no fix"


def test_patch_ids_are_documented():
    """Every patch id used by an entry is in the table of docs/kb-format.md (the patch manager's contract)."""
    doc = (REPO / "docs" / "kb-format.md").read_text()
    documented = set(re.findall(r"^\| `([a-z0-9-]+)` \| (?:env|python|modprobe|advice) \|", doc, re.M))
    used = {f["patch"] for e in kb_entries().values() for f in e.get("fixes", [])}
    assert used <= documented, used - documented


@pytest.mark.parametrize("fail_on,expected", [("info", 1), ("warning", 1), ("critical", 0)])
def test_fail_on_thresholds(rmcp, fail_on, expected):
    # rx6600-gfx1032: one warning and one info finding, nothing critical.
    proc = rmcp("doctor", "--root", FIXTURES / "rx6600-gfx1032", "--fail-on", fail_on)
    assert proc.returncode == expected, proc.stderr


def test_default_fail_on_is_critical(rmcp):
    assert rmcp("doctor", "--root", FIXTURES / "rx6600-gfx1032").returncode == 0
    assert rmcp("doctor", "--root", FIXTURES / "mi210-gfx90a").returncode == 1


def test_bad_fail_on_is_usage_error(rmcp):
    assert rmcp("doctor", "--fail-on", "fatal").returncode == 2


def test_text_output(rmcp):
    proc = rmcp("doctor", "--root", FIXTURES / "rx6600-gfx1032")
    out = proc.stdout.decode()
    assert "rdna2-miopen-gemm-bwd-fault" in out and "WARNING" in out
    assert "gpus[0].override.target = gfx1030" in out
    assert "env-miopen-no-gemm" in out
    assert "https://github.com/ROCm/MIOpen/issues/3540" in out
    assert "\x1b[" not in out  # NO_COLOR
    colored = rmcp("doctor", "--root", FIXTURES / "rx6600-gfx1032", "--color", "always").stdout.decode()
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
    assert proc.returncode == 1
    lines = proc.stdout.decode().splitlines()
    typed = set()
    for line in lines:
        if line.startswith("# HELP "):
            continue
        if line.startswith("# TYPE "):
            name, kind = line.split()[2:4]
            assert kind == "gauge"
            typed.add(name)
            continue
        assert PROM_LINE.match(line), line
        assert line.split("{")[0].split(" ")[0] in typed, line
    assert 'rmcp_finding{id="override-cross-family",severity="critical",category="gpu-memory-fault",' \
           'confidence="reported",gpu="2"} 1' in lines
    assert 'rmcp_findings_total{severity="critical"} 1' in lines
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
    assert report == json.loads((GOLDEN / fixture / "doctor.json").read_text())
