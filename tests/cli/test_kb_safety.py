"""Safety of the knowledge base's advice: on every fixture root, the first fix of
every entry (the fix doctor proposes; for log-only entries the one explain proposes) and the
`auto` environment never

  (a) set an override of another ISA family for some GPU (RDNA1 <-> RDNA2, RDNA2 <-> RDNA3,
      RDNA3 <-> RDNA4: LLVM's generic targets, docs/kb-format.md),
  (b) set a global HSA_OVERRIDE_GFX_VERSION on a machine with GPUs of different families,
  (c) remove an override the installed PyTorch needs: a same-family override on a GPU whose
      chip the torch library has no code for (`rmcp scan` coverage, chip_covered false) must
      still be in effect afterwards, through a variable the runtime reads (per-node forms only
      from ROCm 6.3: ROCR-Runtime commit 84567b64),
  (d) give an integrated GPU an override while a discrete GPU is present (AMD: ROCm does not
      support integrated graphics and may crash the system; KB audit 2, item 1).

The plans come from the real binary (`rmcp patch plan --format json`, `rmcp env --profile auto`)
on the fixture roots, whose HOME has no profile.env yet.
"""
import json
import re
import tomllib

import pytest

from conftest import FIXTURES, REPO, fixture_roots

HOME = "/home/rmcp-safety"
OVERRIDE = re.compile(r"^HSA_OVERRIDE_GFX_VERSION(?:_(\d+))?$")


def isa_family(target):
    """LLVM generic family of a gfx target (gfx.cpp's table, by name pattern)."""
    if re.fullmatch(r"gfx101[0-3]", target):
        return "gfx10-1-generic"
    if re.fullmatch(r"gfx103[0-6]", target):
        return "gfx10-3-generic"
    if re.fullmatch(r"gfx11[05][0-9a-f]", target):
        return "gfx11-generic"
    if re.fullmatch(r"gfx120[0-9a-f]", target):
        return "gfx12-generic"
    return target


def target_of(value):
    m = re.fullmatch(r"(\d+)\.(\d+)\.(\d+)", value or "")
    if not m:
        return None
    major, minor, step = map(int, m.groups())
    if minor > 15 or step > 15:
        return None
    return f"gfx{major}{minor:x}{step:x}"


def version_tuple(text):
    m = re.match(r"(\d+)\.(\d+)", text or "")
    return (int(m.group(1)), int(m.group(2))) if m else None


def parse_changes(text):
    """`export NAME='v'` / `unset NAME` lines (profile.env and `rmcp env --shell sh`)."""
    changes = {}
    for line in text.splitlines():
        if line.startswith("export "):
            name, value = line[len("export "):].split("=", 1)
            changes[name] = value.strip("'")
        elif line.startswith("unset "):
            changes[line.split()[1]] = None
    return changes


class Machine:
    def __init__(self, rmcp, root):
        self.rmcp, self.root = rmcp, root
        self.facts = json.loads(rmcp("--root", root, "detect", "--format", "json", check=0).stdout)
        scan = json.loads(rmcp("--root", root, "scan", "--format", "json", check=0).stdout)
        self.coverage = scan["libraries"]["coverage"]
        self.gpus = [g for g in self.facts["gpus"] if g["node"] is not None and g["gfx_target"]]
        hips = [t["hip_version"] for t in self.facts["torch"] if t["hip_version"]]
        runtimes = [version_tuple(v) for v in hips] or [version_tuple(r["version"]) for r in self.facts["rocm"]
                                                        if r["version"]]
        runtimes = [r for r in runtimes if r]
        self.per_node_read = not runtimes or min(runtimes) >= (6, 3)
        self.env = {k: v for k, v in self.facts["env"].items() if OVERRIDE.match(k)}

    def torch_needs_override(self, gpu):
        rows = [r for r in self.coverage if r["node"] == gpu["node"] and r["library"] == "torch_hip"]
        return gpu["override"] and gpu["override"]["relation"] == "same_family" and \
            any(r["chip_covered"] is False for r in rows)

    def effective(self, env, gpu):
        """The override value the runtime applies to this GPU under env."""
        per_node = env.get(f"HSA_OVERRIDE_GFX_VERSION_{gpu['node']}")
        if per_node is not None and self.per_node_read:
            return per_node
        return env.get("HSA_OVERRIDE_GFX_VERSION")

    def check(self, changes, what):
        problems = []
        final = dict(self.env)
        for k, v in changes.items():
            if OVERRIDE.match(k):
                if v is None:
                    final.pop(k, None)
                else:
                    final[k] = v
        families = {isa_family(g["gfx_target"]) for g in self.gpus}
        for name, value in changes.items():
            m = OVERRIDE.match(name)
            if not m or value is None:
                continue
            target = target_of(value)
            if m.group(1) is None:
                if len(families) > 1:
                    problems.append(f"{what}: global {name}={value} on a machine with GPUs of families {families}")
                hit = [g for g in self.gpus if self.effective(final, g) == value]
            else:
                hit = [g for g in self.gpus if g["node"] == int(m.group(1))]
            has_dgpu = any(g.get("integrated") is False for g in self.gpus)
            for g in hit:
                if has_dgpu and g.get("integrated") and m.group(1) is not None:
                    problems.append(f"{what}: {name}={value} points ROCm at the integrated {g['gfx_target']} "
                                    f"(node {g['node']}) next to a discrete GPU")
                # RDNA1 kept as 10.3.0, the value it already runs on (profile gfx_kept; KB audit 2,
                # item 2): a fix that leaves it as it is proposes nothing new.
                kept = (re.fullmatch(r"gfx101[0-2]", g["gfx_target"]) and value == "10.3.0"
                        and self.effective(self.env, g) == value)
                if not kept and (target is None or isa_family(target) != isa_family(g["gfx_target"])):
                    problems.append(f"{what}: {name}={value} makes {g['gfx_target']} (node {g['node']}) run "
                                    f"{target}, another ISA family")
        for g in self.gpus:
            if not self.torch_needs_override(g):
                continue
            after = self.effective(final, g)
            if after is None or target_of(after) is None or \
                    isa_family(target_of(after)) != isa_family(g["gfx_target"]):
                problems.append(f"{what}: removes the override {g['gfx_target']} (node {g['node']}) needs: the "
                                f"installed PyTorch has no code for the chip (override afterwards: {after})")
        return problems


def kb_entries():
    return {p.stem: tomllib.loads(p.read_text()) for p in sorted((REPO / "kb").glob("*.toml"))}


def patch_changes(rmcp, root, patch_id):
    proc = rmcp("--root", root, "patch", "plan", "--format", "json", patch_id, env={"HOME": HOME})
    if proc.returncode != 0:
        # A plan the machine cannot resolve changes nothing: the error says why.
        assert proc.returncode in (2, 3), proc.stderr
        return {}
    changes = {}
    for step in json.loads(proc.stdout)["steps"]:
        if step.get("kind") == "env" or str(step.get("target", "")).endswith("profile.env"):
            changes.update(parse_changes(step.get("content", "")))
    return changes


ROOTS = [p.name for p in fixture_roots()]


@pytest.mark.sweep
@pytest.mark.parametrize("fixture", ROOTS)
def test_first_fixes_and_auto_are_safe(rmcp, fixture):
    root = FIXTURES / fixture
    machine = Machine(rmcp, root)
    doctor = json.loads(rmcp("--root", root, "doctor", "--format", "json").stdout)
    fired = {f["id"] for f in doctor["findings"]}
    entries = kb_entries()
    # Entries that fire here (doctor), and log-only entries, whose fix explain proposes for a log
    # from any machine.
    candidates = sorted(fired | {i for i, e in entries.items() if "applies" not in e})
    problems = []
    planned = {}
    for entry_id in candidates:
        fixes = entries[entry_id].get("fixes", [])
        if not fixes:
            continue
        first = fixes[0]["patch"]
        if first not in planned:
            planned[first] = patch_changes(rmcp, root, first)
        problems += machine.check(planned[first], f"{entry_id} -> {first}")
    auto = rmcp("--root", root, "env", "--profile", "auto", "--shell", "sh", env={"HOME": HOME})
    assert auto.returncode == 0, auto.stderr
    problems += machine.check(parse_changes(auto.stdout.decode()), "env --profile auto")
    assert not problems, "\n".join(problems)


def test_the_check_catches_what_the_audit_found(rmcp):
    """The checker itself: the advice the audit called harmful is refused by it."""
    # (a)+(b): a global 10.3.0 (the old rdna2-no-override fix) next to an RDNA3 dGPU.
    mixed = Machine(rmcp, FIXTURES / "desktop-igpu-dgpu-hip-visible")
    problems = mixed.check({"HSA_OVERRIDE_GFX_VERSION": "10.3.0"}, "old rdna2-no-override fix")
    assert any("global" in p for p in problems) and any("another ISA family" in p for p in problems)
    # (d): the per-node 10.3.0 for the gfx1036 iGPU that replaced it (KB audit 2, item 1).
    assert any("integrated" in p for p in mixed.check({"HSA_OVERRIDE_GFX_VERSION_2": "10.3.0"}, "per node"))
    # (c): unsetting the 11.0.0 an RX 7800 XT needs with torch 2.4 (the old override-on-supported-gpu fix).
    rx7800 = Machine(rmcp, FIXTURES / "rx7800xt-gfx1101-override")
    assert rx7800.check({"HSA_OVERRIDE_GFX_VERSION": None}, "old unset")
    # ... and a per-node replacement the ROCm 6.2 runtime of the healthy 780M would ignore.
    laptop = Machine(rmcp, FIXTURES / "laptop-780m-healthy")
    assert not laptop.per_node_read
    assert laptop.check({"HSA_OVERRIDE_GFX_VERSION": None, "HSA_OVERRIDE_GFX_VERSION_1": "11.0.0"}, "per node, 6.2")
    assert not laptop.check({}, "nothing")
