"""One version source, and every JSON output saying which rmcp and which knowledge base made it.

`rmcp --version` is CMakeLists.txt's project(VERSION), refined by `git describe` in a git
checkout (cmake/version_file.cmake); the Python package carries the same project version.
Every JSON document (stdout, incident reports, fault maps, a snapshot's facts.json) carries
"rmcp_version" and "kb_version", the kb's content hash, which anyone can recompute:
(cd kb && LC_ALL=C sha256sum *.toml | sha256sum | cut -c1-16).
"""
import hashlib
import json
import re
import tarfile

import pytest

from conftest import FIXTURES, REPO

FIXTURE = FIXTURES / "rx5600xt-gfx1010-rocm52"
PROJECT_VERSION = re.search(r"project\(rmcp VERSION ([0-9.]+)", (REPO / "CMakeLists.txt").read_text()).group(1)


def kb_hash(directory):
    """The sha256sum listing of the *.toml files, hashed again: an independent reimplementation."""
    listing = "".join(f"{hashlib.sha256(path.read_bytes()).hexdigest()}  {path.name}\n"
                      for path in sorted(directory.glob("*.toml"), key=lambda p: p.name.encode()))
    return hashlib.sha256(listing.encode()).hexdigest()[:16]


@pytest.fixture(scope="module")
def version(rmcp):
    out = rmcp("--version", check=0).stdout.decode().strip()
    assert out.startswith("rmcp "), out
    return out.removeprefix("rmcp ")


def test_version_is_the_project_version_refined_by_git(version):
    assert version == PROJECT_VERSION or re.fullmatch(
        re.escape(PROJECT_VERSION) + r"\+git[0-9]+\.g[0-9a-f]{7,}(\.dirty)?", version), version


def test_python_package_has_the_project_version():
    text = (REPO / "python" / "rmcp" / "__init__.py").read_text()
    assert re.search(r'^__version__ = "([^"]+)"', text, re.M).group(1) == PROJECT_VERSION


def test_kb_version_is_the_documented_hash(rmcp, version):
    doc = rmcp.json("detect", "--root", FIXTURE)
    assert doc["rmcp_version"] == version
    assert doc["kb_version"] == kb_hash(REPO / "kb")


def test_kb_option_changes_kb_version(rmcp, tmp_path):
    kb = tmp_path / "kb"
    kb.mkdir()
    first = sorted((REPO / "kb").glob("*.toml"))[0]
    (kb / first.name).write_bytes(first.read_bytes())
    doc = rmcp.json("--kb", kb, "doctor", "--root", FIXTURE, "--no-scan")
    assert doc["kb_version"] == kb_hash(kb) != kb_hash(REPO / "kb")
    assert rmcp.json("--kb", tmp_path / "nowhere", "detect", "--root", FIXTURE)["kb_version"] is None


STDOUT_COMMANDS = [
    ("detect", "--root", FIXTURE),
    ("doctor", "--root", FIXTURE, "--no-scan", "--fail-on", "critical"),
    ("explain", "--no-facts", REPO / "tests" / "logs" / "gpu-hang-hw-exception.log"),
    ("scan", REPO / "tests" / "fixtures"),
    ("patch", "list"),
    ("patch", "show", "env-override-gfx1030"),
    ("patch", "plan", "env-override-gfx1030", "--root", FIXTURE),
    ("patch", "status", "--root", FIXTURE),
]


@pytest.mark.parametrize("args", STDOUT_COMMANDS, ids=lambda a: " ".join(map(str, a[:2])))
def test_every_json_output_carries_both_versions(rmcp, version, args, tmp_path):
    proc = rmcp(*args, "--format", "json", env={"HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / "state")})
    assert proc.returncode in (0, 1), proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["rmcp_version"] == version
    assert doc["kb_version"] == kb_hash(REPO / "kb")
    # explain's schema is 2 since issue 30 (`next`, `check`, `fixes` as ids, `costs`: docs/explain.md).
    assert doc["schema_version"] == (2 if args[0] == "explain" else 1)


def test_incident_report_carries_both_versions(rmcp, version, tmp_path):
    report = tmp_path / "report.json"
    rmcp("run", "--report", report, "--", "/bin/true", check=0)
    doc = json.loads(report.read_text())
    assert (doc["rmcp_version"], doc["kb_version"]) == (version, kb_hash(REPO / "kb"))


def test_snapshot_facts_carry_both_versions(rmcp, version, tmp_path):
    archive = tmp_path / "snap.tar.gz"
    rmcp("snapshot", "-o", archive, "--root", FIXTURE, check=0)
    with tarfile.open(archive) as tar:
        facts = json.load(tar.extractfile("facts.json"))
    assert (facts["rmcp_version"], facts["kb_version"]) == (version, kb_hash(REPO / "kb"))


def test_probe_output_and_fault_map_carry_both_versions(rmcp, version, tmp_path):
    catalogue = tmp_path / "catalogue.toml"
    catalogue.write_text('[[family]]\nname = "tiny"\nop = "conv2d"\ninput = [2, 6, 6]\nweight = [2, 2, 3, 3]\n'
                         'batch = [1]\ndirections = ["forward"]\ndtypes = ["float32"]\n')
    save = tmp_path / "probed.toml"
    proc = rmcp("probe", "--python", "/usr/bin/python3", "--catalogue", catalogue, "--repeat", "1", "--warmup", "0",
                "--format", "json", "--save", save, "--allow-cpu", timeout=120)
    assert proc.returncode == 0, proc.stderr
    for doc in (json.loads(proc.stdout), json.loads((tmp_path / "probed.faultmap.json").read_text())):
        assert (doc["rmcp_version"], doc["kb_version"]) == (version, kb_hash(REPO / "kb"))
