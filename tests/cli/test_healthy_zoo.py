"""The healthy-machine zoo (issue 28, item 2): tests/fixtures/healthy/<tree> are machines that
work as their owners use them (tests/fixtures/healthy/README.md says why, with sources). On
every one of them

  (1) `rmcp doctor` reports no open finding of severity warning or critical;
  (2) `rmcp doctor --fail-on info` exits 0 (nothing open at all);
  (3) `rmcp env --profile auto` changes nothing the working setup relies on: it does not unset
      or replace a variable the machine has (HSA_OVERRIDE_GFX_VERSION*, *_VISIBLE_DEVICES, ...),
      does not export a visible-device variable that hides a GPU (an empty one hides all of
      them: on a machine whose GPU is NVIDIA that switches the working GPU off), and does not
      add an override that moves a GPU off the code its PyTorch has for it, onto another ISA
      family, or onto an iGPU next to a discrete GPU.

A failure names the tree, the finding ids, their severity and evidence, or the offending
change, so that the knowledge base can be fixed (never the tree: a tree changes only when the
machine it models was wrong; then its README row says so).
"""
import json
import os
import re
import subprocess
import sys

import pytest

from conftest import FIXTURES, is_fixture_name

HEALTHY = FIXTURES / "healthy"
TREES = sorted(p for p in HEALTHY.iterdir() if p.is_dir() and is_fixture_name(p.name)) if HEALTHY.exists() else []
IDS = [p.name for p in TREES]
HOME = "/home/rmcp-zoo"  # no profile.env there: auto's own choice is what is checked
OVERRIDE = re.compile(r"^HSA_OVERRIDE_GFX_VERSION(?:_(\d+))?$")
VISIBLE = ("ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL")


def test_zoo_has_the_machines_users_have():
    assert len(TREES) >= 25, IDS
    readme = (HEALTHY / "README.md").read_text()
    undocumented = [name for name in IDS if f"`{name}`" not in readme]
    assert not undocumented, f"trees without a row in tests/fixtures/healthy/README.md: {undocumented}"


def tree_listing(top):
    """{relative path: bytes, or ('link', target), or 'dir'} of a folder, links not followed."""
    found = {}
    for dirpath, dirnames, filenames in os.walk(top, followlinks=False):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, top)
            if os.path.islink(path):
                found[rel] = ("link", os.readlink(path))
            elif os.path.isdir(path):
                found[rel] = "dir"
            else:
                with open(path, "rb") as f:
                    found[rel] = f.read()
    return found


def test_trees_are_what_the_table_writes(tmp_path):
    """The trees are generated (make_healthy.py's table is the source of truth): a hand edit of
    a tree, or a table change without regenerating, shows up here."""
    out = tmp_path / "healthy"
    proc = subprocess.run([sys.executable, "-B", str(HEALTHY / "make_healthy.py"), "--out", str(out)],
                          capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    for tree in TREES:
        want, got = tree_listing(out / tree.name), tree_listing(tree)
        differ = sorted(k for k in want.keys() | got.keys() if want.get(k) != got.get(k))
        assert not differ, (f"{tree.name} differs from what make_healthy.py writes (regenerate with "
                            f"/usr/bin/python3 tests/fixtures/healthy/make_healthy.py {tree.name}): {differ[:10]}")
    assert sorted(p.name for p in out.iterdir()) == IDS, "trees without a row in make_healthy.py's table, or rows without a tree"


def evidence_line(finding):
    parts = []
    for e in finding.get("evidence") or []:
        if "fact" in e:
            parts.append(f"{e['fact']} {e.get('test', '')} (value {json.dumps(e.get('value'))})")
        else:
            parts.append(json.dumps(e, sort_keys=True))
    return "; ".join(parts) or "(no evidence)"


def describe(findings):
    return "\n".join(f"  {f['id']} [{f['severity']}, {f['status']}] gpu={f.get('gpu')}: {f['title']}\n"
                     f"    evidence: {evidence_line(f)}" for f in findings)


_DOCTOR = {}


def doctor(rmcp, tree):
    """`rmcp doctor --fail-on info --format json` once per tree (both doctor tests read it: the
    findings do not depend on --fail-on, only the exit status does)."""
    if tree not in _DOCTOR:
        proc = rmcp("doctor", "--root", tree, "--format", "json", "--fail-on", "info")
        assert proc.returncode in (0, 1), (proc.returncode, proc.stderr.decode()[-2000:])
        _DOCTOR[tree] = (proc, json.loads(proc.stdout))
    return _DOCTOR[tree]


@pytest.mark.sweep
@pytest.mark.parametrize("tree", TREES, ids=IDS)
def test_doctor_raises_no_warning_or_critical(rmcp, tree):
    _, report = doctor(rmcp, tree)
    loud = [f for f in report["findings"] if f["status"] == "open" and f["severity"] in ("warning", "critical")]
    assert not loud, f"false alarm on the healthy machine {tree.name}:\n{describe(loud)}"


@pytest.mark.sweep
@pytest.mark.parametrize("tree", TREES, ids=IDS)
def test_fail_on_info_passes(rmcp, tree):
    proc, report = doctor(rmcp, tree)
    opened = [f for f in report["findings"] if f["status"] == "open"]
    assert proc.returncode == 0, (f"`rmcp doctor --fail-on info` exits {proc.returncode} on the healthy machine "
                                  f"{tree.name}; open findings:\n{describe(opened)}")


def parse_sh(text):
    """`export NAME='v'` / `unset NAME` lines of `rmcp env --shell sh` (None: unset)."""
    changes = {}
    for line in text.splitlines():
        if line.startswith("export "):
            name, value = line[len("export "):].split("=", 1)
            if value.startswith("'") and value.endswith("'"):
                value = value[1:-1].replace("'\\''", "'")
            changes[name] = value
        elif line.startswith("unset "):
            changes[line.split()[1]] = None
    return changes


def isa_family(target):
    """LLVM's generic family of a gfx target (src/core/detect/gfx.cpp's table, by name)."""
    for pattern, family in ((r"gfx101[0-3]", "gfx10-1"), (r"gfx103[0-6]", "gfx10-3"), (r"gfx11[05][0-9a-f]", "gfx11"),
                            (r"gfx120[0-9a-f]", "gfx12")):
        if re.fullmatch(pattern, target or ""):
            return family
    return target


def target_of(value):
    m = re.fullmatch(r"(\d+)\.(\d+)\.(\d+)", value or "")
    if not m or int(m.group(2)) > 15 or int(m.group(3)) > 15:
        return None
    return f"gfx{int(m.group(1))}{int(m.group(2)):x}{int(m.group(3)):x}"


def hidden_by(value, gpus):
    """The GPUs (in the runtime's order) a visible-device list leaves out; all for an empty one.
    A list of UUIDs or other names is not judged here (None)."""
    if value.strip() == "":
        return list(gpus)
    try:
        kept = {int(v) for v in value.split(",")}
    except ValueError:
        return None
    return [g for i, g in enumerate(gpus) if i not in kept]


def env_problems(rmcp, tree):
    facts = json.loads(rmcp("detect", "--root", tree, "--format", "json", check=0).stdout)
    scan = json.loads(rmcp("scan", "--root", tree, "--format", "json", check=0).stdout)
    proc = rmcp("env", "--root", tree, "--profile", "auto", "--shell", "sh", env={"HOME": HOME})
    assert proc.returncode == 0, (proc.returncode, proc.stderr.decode()[-2000:])
    changes = parse_sh(proc.stdout.decode())
    have = facts["env"]
    gpus = sorted((g for g in facts["gpus"] if g["node"] is not None), key=lambda g: g["node"])
    covered = {r["node"] for r in scan["libraries"]["coverage"]
               if r["library"] == "torch_hip" and r.get("chip_covered") is True}
    nvidia = any(t.get("cuda_version") for t in facts["torch"])
    problems = []
    for name, value in changes.items():
        if name in have and value != have[name]:
            what = "unsets" if value is None else f"replaces with {value!r}"
            problems.append(f"{what} {name}={have[name]!r}, which the machine has")
            continue
        if name in have or value is None:
            continue
        if name in VISIBLE:
            hidden = hidden_by(value, gpus)
            if value.strip() == "":
                problems.append(f"exports {name}='' (hides every GPU{'; the working GPU is NVIDIA' if nvidia else ''})")
            elif name == "CUDA_VISIBLE_DEVICES" and nvidia:
                problems.append(f"exports {name}={value!r} on a machine whose PyTorch is a CUDA build")
            elif hidden and any(not g["integrated"] for g in hidden):
                names = ", ".join(f"node {g['node']} {g['gfx_target']}" for g in hidden if not g["integrated"])
                problems.append(f"exports {name}={value!r}, hiding the discrete GPU(s) {names}")
        m = OVERRIDE.match(name)
        if m:
            hit = [g for g in gpus if m.group(1) is None or g["node"] == int(m.group(1))]
            if m.group(1) is None:
                hit = [g for g in hit if f"HSA_OVERRIDE_GFX_VERSION_{g['node']}" not in have]
            target = target_of(value)
            discrete = [g for g in gpus if not g["integrated"]]
            for g in hit:
                if g["integrated"] and discrete:
                    # Issue 28's invariant: ROCm is never pointed at an iGPU while a discrete GPU is
                    # present (AMD: an enumerable iGPU "may crash the system"; kb/igpu-rocm-crash.toml).
                    problems.append(f"exports {name}={value!r}: points ROCm at the integrated node {g['node']} "
                                    f"{g['gfx_target']} while a discrete GPU is present")
                if target is None or isa_family(target) != isa_family(g["gfx_target"]):
                    problems.append(f"exports {name}={value!r}: node {g['node']} {g['gfx_target']} would run "
                                    f"{target}, another ISA family")
                elif g["node"] in covered and target != g["gfx_target"]:
                    problems.append(f"exports {name}={value!r}: node {g['node']} {g['gfx_target']}, whose PyTorch "
                                    f"has code for it, would run {target} instead")
    return problems, changes


@pytest.mark.sweep
@pytest.mark.parametrize("tree", TREES, ids=IDS)
def test_env_auto_keeps_the_working_setup(rmcp, tree):
    problems, changes = env_problems(rmcp, tree)
    assert not problems, (f"`rmcp env --profile auto` on the healthy machine {tree.name} would break it:\n  "
                          + "\n  ".join(problems) + f"\n  (all changes: {changes})")
