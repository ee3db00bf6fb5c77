#!/usr/bin/python3
"""Writes the machines of the machine matrix (docs/testing.md, "Machine matrix") as fixture trees.

Every machine is a combination of five dimensions:

  target    every gfx target of data/gfx-targets.toml (the one table of targets and wheels)
  override  none | same (a same-ISA-family value) | cross (another family's value) |
            pernode (HSA_OVERRIDE_GFX_VERSION_<node>, same family) | malformed
  torch     none | cpu | cuda | rocm-with (a ROCm wheel with the target's code) |
            rocm-without (a ROCm wheel with no code of the target's ISA family) |
            rocm-sibling (a ROCm wheel with a same-family sibling's code but not the target's)
  topology  one (the target alone) | igpu-dgpu (the target plus an APU iGPU, or, when the target
            is an iGPU, plus a discrete GPU) | two-dgpu (plus a discrete GPU of another family;
            an iGPU target gets two discrete GPUs of different families)
  runtime   6.2 | 6.3+ (the HIP runtime that reads the variables: libhsakmt reads the per-node
            override from ROCm 6.3 on), or none (no ROCm at all; only without a ROCm wheel)

plus the machines without an AMD GPU (an NVIDIA box: amdgpu not loaded) over override, torch and
runtime. Where a value makes no sense for a target (no same-family sibling, no wheel with the
target's code) the combination is left out, and identical machines are written once.

The trees are written with tests/fixtures/make_fixtures.py's own writer (its Gpu/Install/Fixture
model), libtorch_hip.so with tests/fixtures/make_libraries.py's code-object writer, so `rmcp
detect` and `rmcp scan` read them as they read the hand-written fixtures. Next to the trees,
manifest.json describes each machine for the checker (tests/matrix/matrix_check.cpp): the
dimensions and the ground truth the invariants are judged by (each GPU's target, ISA family,
integrated or not; the wheel's targets), all from the data table, never from rmcp's own code.

    gen_machines.py OUT_DIR                      # every machine
    gen_machines.py OUT_DIR --only ID...         # just these (ids from a manifest)
    gen_machines.py OUT_DIR --machine JSON       # one machine given as its dimension object
"""
import argparse
import hashlib
import json
import os
import pathlib
import sys
import tomllib

HERE = pathlib.Path(__file__).resolve().parent
SOURCE = HERE.parent.parent
sys.path.insert(0, str(SOURCE / "tests" / "fixtures"))

import make_fixtures as mf  # noqa: E402
import make_libraries as ml  # noqa: E402

TABLE = SOURCE / "data" / "gfx-targets.toml"

# EF_AMDGPU_MACH of the targets make_libraries.py does not list yet (LLVM
# llvm/include/llvm/BinaryFormat/ELF.h and AMDGPUUsage "AMDGPU EF_AMDGPU_MACH Values").
ml.MACH.update({"gfx803": 0x02A, "gfx1011": 0x034, "gfx1032": 0x038, "gfx1033": 0x039, "gfx1034": 0x03E,
                "gfx1035": 0x03D, "gfx1036": 0x045, "gfx1152": 0x055, "gfx1153": 0x058, "gfx950": 0x04F})

OVERRIDES = ["none", "same", "cross", "pernode", "malformed"]
TORCHES = ["none", "cpu", "cuda", "rocm-with", "rocm-without", "rocm-sibling"]
TOPOLOGIES = ["one", "igpu-dgpu", "two-dgpu"]
RUNTIMES = ["6.2", "6.3+", "none"]

USER = "alex"
HOME = f"/home/{USER}"
SITE = f"{HOME}/venv/lib/python3.12/site-packages"

# System ROCm per runtime side: the release, its build and HIP patch/hash (hip_version.h).
SYSTEM_ROCM = {"6.2": ("6.2.4", 120, 41134, "dd7f95766"), "6.3+": ("6.4.3", 98, 43483, "1ea1e7a95")}


def load_table(path=TABLE):
    with open(path, "rb") as f:
        data = tomllib.load(f)
    targets = {t["gfx"]: t for t in data["target"]}
    wheels = data["wheel"]
    # AMD's support list (data/rocm-support.toml) names no target this table lacks.
    with open(path.parent / "rocm-support.toml", "rb") as f:
        listed = {t["gfx"] for t in tomllib.load(f)["target"]}
    if listed - set(targets):
        sys.exit(f"{path}: no row for {', '.join(sorted(listed - set(targets)))}, which data/rocm-support.toml lists")
    for t in targets.values():
        for w in t["wheels"]:
            if w not in wheels:
                sys.exit(f"{path}: target {t['gfx']} names wheel generation {w!r}, which has no [wheel.{w}]")
    return targets, wheels


TARGETS, WHEELS = load_table()


def override_family(gfx):
    """The ISA family an override may stay within: the LLVM generic target, except gfx9-4-generic,
    whose members differ in their FP8/BF8 instructions (AMDGPUUsage: the generic excludes them), so
    code built for gfx942 is not assumed to run on gfx950; a target without a generic is alone."""
    g = TARGETS[gfx]["generic"] if gfx in TARGETS else ""
    return gfx if not g or g == "gfx9-4-generic" else g


def gfx_version(gfx):
    """gfx1031 -> 100301 (KFD gfx_target_version)."""
    name = gfx[3:]
    return int(name[:-2]) * 10000 + int(name[-2], 16) * 100 + int(name[-1], 16)


def override_value(gfx):
    """The HSA_OVERRIDE_GFX_VERSION value that selects gfx: gfx1030 -> 10.3.0, gfx90a -> 9.0.10."""
    name = gfx[3:]
    return f"{int(name[:-2])}.{int(name[-2], 16)}.{int(name[-1], 16)}"


def wheel_targets(name, gfx_for_family=None):
    """Targets a wheel carries: a generation's (every target that lists it) or, for TheRock, the
    per-family wheel of `gfx_for_family`."""
    if name == "therock":
        fam = TARGETS[gfx_for_family]["therock"]
        return sorted(g for g, t in TARGETS.items() if t["therock"] == fam and "therock" in t["wheels"])
    return sorted(g for g, t in TARGETS.items() if name in t["wheels"])


def hip_side(hip):
    major, minor = (int(x) for x in hip.split(".")[:2])
    return "6.3+" if (major, minor) >= (6, 3) else "6.2"


def siblings(gfx):
    fam = override_family(gfx)
    return [g for g in TARGETS if g != gfx and override_family(g) == fam]


# The value a same-family override uses: the member the official wheels carry (10.3.0, 11.0.0,
# 12.0.1, 9.0.0, 10.1.0); a target without a sibling gets its own value (a redundant override).
PREFERRED = {"gfx10-3-generic": "gfx1030", "gfx11-generic": "gfx1100", "gfx12-generic": "gfx1201",
             "gfx9-generic": "gfx900", "gfx10-1-generic": "gfx1010"}


def same_family_target(gfx):
    fam = override_family(gfx)
    pref = PREFERRED.get(fam)
    if pref and pref != gfx:
        return pref
    sib = siblings(gfx)
    if pref == gfx and sib:
        return sib[0] if fam != "gfx12-generic" else "gfx1200"
    return gfx


# Another family's value: the classic cross-family overrides (10.3.0 on RDNA1 and Instinct
# cards, 11.0.0 on RDNA2).
def cross_family_target(gfx):
    return "gfx1100" if override_family(gfx) in ("gfx10-3-generic", "gfx12-generic") else "gfx1030"


# Partners: the common iGPU of desktop Ryzen 7000/9000 (gfx1036), Phoenix (gfx1103) and Strix
# Point (gfx1150); discrete cards of the three consumer families.
IGPU_PARTNERS = ["gfx1036", "gfx1103", "gfx1150"]
DGPU_PARTNERS = ["gfx1100", "gfx1201", "gfx1031"]


def pick(options, *key):
    """A deterministic choice (the same machine always gets the same partner)."""
    h = int(hashlib.sha256("/".join(key).encode()).hexdigest(), 16)
    return options[h % len(options)]


def other_family_dgpu(gfx, *key):
    opts = [g for g in DGPU_PARTNERS if override_family(g) != override_family(gfx)]
    return pick(opts, gfx, *key)


def choose_wheel(gfx, kind, side):
    """(wheel name, torch version, hip version, targets) for a ROCm torch dimension, or None when
    no wheel fits. Official generations first, on the requested runtime side when one is."""
    official = [w for w, d in WHEELS.items() if d["package"] == "official"]
    fam = override_family(gfx)
    candidates = []
    if kind == "rocm-with":
        candidates = [(w, wheel_targets(w)) for w in official if gfx in wheel_targets(w)]
        if not candidates and TARGETS[gfx]["therock"]:
            candidates = [("therock", wheel_targets("therock", gfx))]
        if not candidates:
            # No wheel has ever carried it (gfx803, gfx940, gfx941): a build from source for it.
            hip = "6.2.41133-dd7f95766" if side == "6.2" else "6.4.43483-1ea1e7a95"
            torch = "2.5.1a0+git1c3d4f0" if side == "6.2" else "2.7.0a0+git9a1b2c3"
            return ("source", torch, hip, [gfx])
    elif kind == "rocm-sibling":
        if fam == gfx:
            return None
        for w in official:
            ts = wheel_targets(w)
            if gfx not in ts and any(override_family(t) == fam for t in ts):
                candidates.append((w, ts))
    elif kind == "rocm-without":
        for w in official:
            ts = wheel_targets(w)
            if all(override_family(t) != fam for t in ts):
                candidates.append((w, ts))
        if not candidates:
            # Every official wheel has its family: AMD's per-family wheel of another family.
            other = next(g for g in ("gfx1100", "gfx1201", "gfx1030") if override_family(g) != fam)
            candidates = [("therock", wheel_targets("therock", other))]
    if not candidates:
        return None
    on_side = [c for c in candidates if hip_side(WHEELS[c[0]]["hip"]) == side]
    w, ts = (on_side or candidates)[-1 if side == "6.2" else 0]
    return (w, WHEELS[w]["torch"], WHEELS[w]["hip"], ts)


def machine_id(dims):
    return "-".join(str(dims[k]) for k in ("target", "override", "torch", "topology", "runtime"))


def describe(dims):
    """The full machine (ground truth and what to write) for a dimension object, or None when the
    combination does not exist."""
    target, override, torch, topology, runtime = (dims[k] for k in
                                                 ("target", "override", "torch", "topology", "runtime"))
    key = (target, override, torch, topology, runtime)
    gpus = []
    if target != "none":
        t = TARGETS[target]
        if topology == "one":
            roles = [(target, "target")]
        elif topology == "igpu-dgpu":
            partner = pick(DGPU_PARTNERS, *key) if t["integrated"] else pick(IGPU_PARTNERS, *key)
            # KFD numbers nodes in PCI order; the discrete card sits on the lower bus.
            roles = [(partner, "partner"), (target, "target")] if t["integrated"] else \
                [(target, "target"), (partner, "partner")]
        else:
            first = other_family_dgpu(target, *key)
            if t["integrated"]:
                second = next(g for g in DGPU_PARTNERS if override_family(g) not in
                              (override_family(first), override_family(target)))
                roles = [(first, "partner"), (second, "partner"), (target, "target")]
            else:
                roles = [(target, "target"), (first, "partner")]
        for node, (gfx, role) in enumerate(roles, start=1):
            gpus.append({"node": node, "gfx": gfx, "role": role, "integrated": TARGETS[gfx]["integrated"],
                         "family": override_family(gfx), "generic": TARGETS[gfx]["generic"]})
    elif topology != "one":
        return None

    tgt_node = next((g["node"] for g in gpus if g["role"] == "target"), 1)
    env = {"VIRTUAL_ENV": f"{HOME}/venv"} if torch != "none" else {}
    ref = target if target != "none" else "gfx1031"  # the no-AMD machines carry a leftover RDNA2 value
    if override == "same":
        env["HSA_OVERRIDE_GFX_VERSION"] = override_value(same_family_target(ref))
    elif override == "cross":
        env["HSA_OVERRIDE_GFX_VERSION"] = override_value(cross_family_target(ref))
    elif override == "pernode":
        env[f"HSA_OVERRIDE_GFX_VERSION_{tgt_node}"] = override_value(same_family_target(ref))
    elif override == "malformed":
        env["HSA_OVERRIDE_GFX_VERSION"] = same_family_target(ref)  # a guide's "gfx1030" pasted as the value

    wheel = None
    if torch.startswith("rocm"):
        if runtime == "none":
            return None
        if target == "none":
            if torch != "rocm-with":
                return None
            wheel = ("rocm6.3-6.4", WHEELS["rocm6.3-6.4"]["torch"], WHEELS["rocm6.3-6.4"]["hip"],
                     wheel_targets("rocm6.3-6.4"))
        else:
            wheel = choose_wheel(target, torch, runtime)
            if wheel is None:
                return None
        # A wheel on the other side of 6.3 than asked for is the other runtime's machine.
        if hip_side(wheel[2]) != runtime:
            return None
    torch_info = {"kind": torch}
    if wheel:
        torch_info.update(wheel=wheel[0], version=wheel[1], hip=wheel[2], targets=wheel[3])
    elif torch == "cpu":
        torch_info.update(version="2.5.1+cpu")
    elif torch == "cuda":
        torch_info.update(version="2.5.1+cu124", cuda="12.4")
    return {"id": machine_id(dims), "dims": dims, "gpus": gpus, "env": env, "torch": torch_info,
            "rocm": SYSTEM_ROCM[runtime][0] if runtime in SYSTEM_ROCM else None,
            "user": USER, "home": HOME, "amd_gpu": bool(gpus)}


def all_dims(full=False):
    """Every target x override x torch x topology combination, each once, with the runtime
    drawn per combination (deterministically) among those that give a machine: some 2,400
    machines, every value of every dimension against every value of the others except the
    runtime, which varies across them. full=True: every runtime too (some 5,500 machines)."""
    for target in list(TARGETS) + ["none"]:
        for override in OVERRIDES:
            for torch in TORCHES:
                for topology in TOPOLOGIES:
                    start = RUNTIMES.index(pick(RUNTIMES, target, override, torch, topology))
                    for i in range(len(RUNTIMES)):
                        runtime = RUNTIMES[(start + i) % len(RUNTIMES)]
                        dims = {"target": target, "override": override, "torch": torch, "topology": topology,
                                "runtime": runtime}
                        if describe(dims) is None:
                            continue
                        yield dims
                        if not full:
                            break


# ---- the tree ------------------------------------------------------------------------------

def gpu_model(g, index):
    t = TARGETS[g["gfx"]]
    integrated = t["integrated"]
    gcn = g["gfx"].startswith("gfx9") or g["gfx"].startswith("gfx8")
    if integrated:
        pci_path = f"pci0000:00/0000:00:08.1/0000:{0xc4 + index:02x}:00.0"
    else:
        pci_path = f"pci0000:00/0000:00:01.{index}/0000:{2 * index + 1:02x}:00.0/0000:{2 * index + 2:02x}:00.0/" \
                   f"0000:{2 * index + 3:02x}:00.0"
    return mf.Gpu(gfx=gfx_version(g["gfx"]), device=int(t["pci_device"], 16), revision=0xC1,
                  subsystem=(0x1002, 0x0E3A), pci_path=pci_path, render_minor=128 + index,
                  asic="ip discovery", cus=12 if integrated else 60, simd_per_cu=4 if gcn else 2,
                  wave=64 if gcn else 32, arrays=2 if integrated else 8, cu_per_array=6 if integrated else 8,
                  clock=2700 if integrated else 2400, fw=2390, sdma_fw=21,
                  vram=512 * mf.MIB if integrated else 16 * mf.GIB, gtt=15 * mf.GIB + 256 * mf.MIB,
                  discrete=not integrated, link_flags=1 if integrated else 3, gpu_id=1000 + index,
                  pci_class="0x038000" if integrated else "0x030000")


def fixture_for(m, name):
    installs = []
    links = {}
    if m["rocm"]:
        ver, build, patch, githash = next(v for v in SYSTEM_ROCM.values() if v[0] == m["rocm"])
        installs.append(mf.rocm_opt(ver, build, patch, githash))
        links = {"/opt/rocm": "/etc/alternatives/rocm", "/etc/alternatives/rocm": f"/opt/rocm-{ver}"}
    t = m["torch"]
    if t["kind"] != "none":
        installs.append(mf.torch_install(SITE, t["version"], hip=t.get("hip"), cuda=t.get("cuda"),
                                         git="a8d6afb511a69687bbb2b7e88a3cf67917e1697e", annotated=True))
    env = dict(m["env"])
    return mf.Fixture(
        name=name, models=m["id"], os_release=mf.UBUNTU_2404, kernel="6.14.0-29-generic",
        group_ids=mf.UBUNTU_GROUPS, user=USER, groups=("adm", "cdrom", "sudo", "dip", "plugdev", "render", "video"),
        env=env, amdgpu_loaded=m["amd_gpu"], params=mf.PARAMS_6X, cpu_cores=16,
        gpus=[gpu_model(g, i) for i, g in enumerate(m["gpus"])], installs=installs, links=links)


def write_machine(m, out_dir):
    mf.HERE = out_dir  # make_fixtures writes HERE/<name>
    mf.write_fixture(fixture_for(m, m["id"]))
    t = m["torch"]
    if t.get("targets"):
        lib = out_dir / m["id"] / SITE.lstrip("/") / "torch" / "lib" / "libtorch_hip.so"
        lib.parent.mkdir(parents=True, exist_ok=True)
        lib.write_bytes(ml.host_library(t["targets"]))


def manifest(machines):
    """What the checker reads: the machines and, from the table, each target's override family
    and the other-family targets users run it as (works_as)."""
    return {"schema": 1, "families": {g: override_family(g) for g in TARGETS},
            "table": {g: {k: t[k] for k in ("family", "generic", "integrated")} for g, t in TARGETS.items()},
            "works_as": {g: t.get("works_as", []) for g, t in TARGETS.items()}, "machines": machines}


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", type=pathlib.Path)
    ap.add_argument("--only", nargs="*", help="machine ids to write")
    ap.add_argument("--machine", action="append", help="a dimension object (JSON) to write")
    ap.add_argument("--list", action="store_true", help="print the machine count and write nothing")
    args = ap.parse_args(argv[1:])
    if args.machine:
        dims = [json.loads(d) for d in args.machine]
    else:
        dims = list(all_dims())
    machines, seen = [], set()
    for d in dims:
        m = describe(d)
        if m is None:
            continue
        # Identical machines (a dimension that collapses for this target) are written once.
        sig = json.dumps({k: m[k] for k in ("gpus", "env", "torch", "rocm")}, sort_keys=True)
        if sig in seen:
            continue
        seen.add(sig)
        machines.append(m)
    if args.only:
        wanted = set(args.only)
        machines = [m for m in machines if m["id"] in wanted]
    if args.list:
        print(len(machines))
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    for m in machines:
        write_machine(m, args.out.resolve())
    with open(args.out / "manifest.json", "w") as f:
        json.dump(manifest(machines), f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
