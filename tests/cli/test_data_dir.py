"""Where a binary that is not installed finds its data (src/cli/install_paths.cpp): RMCP_DATA_DIR
when set, else the checkout it was built from; the installed layout (../share/rmcp beside
the binary) is tested on a real install by tests/install/test_installed.py."""
import json
import shutil
import subprocess

from conftest import BUILD, FIXTURES, REPO
from test_versions import kb_hash

FIXTURE = FIXTURES / "rx5600xt-gfx1010-rocm52"


def doctor_json(env, cwd="/"):
    proc = subprocess.run([str((BUILD / "rmcp").resolve()), "doctor", "--root", str(FIXTURE), "--no-scan", "--format", "json"],
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)


def test_without_data_dir_the_checkout_is_used():
    doc = doctor_json({"PATH": "/usr/bin:/bin", "NO_COLOR": "1"})
    assert doc["kb_version"] == kb_hash(REPO / "kb")


def test_data_dir_is_used_when_not_installed(tmp_path):
    for data in ("kb", "patches", "profiles", "probe"):
        shutil.copytree(REPO / data, tmp_path / data)
    entry = sorted((tmp_path / "kb").glob("*.toml"))[0]
    entry.write_text(entry.read_text() + "\n# a local edit\n")
    doc = doctor_json({"PATH": "/usr/bin:/bin", "NO_COLOR": "1", "RMCP_DATA_DIR": str(tmp_path)})
    assert doc["kb_version"] == kb_hash(tmp_path / "kb") != kb_hash(REPO / "kb")
