"""`rmcp env`: profiles printed for eval, safely quoted."""
import json
import subprocess

import pytest

from conftest import FIXTURES, REPO

HOME = "/home/tester"

NASTY = "it's \"quoted\" $HOME `cmd` \\ back\\slash; *glob* \n second line"


def nasty_profiles(tmp_path):
    d = tmp_path / "profiles"
    d.mkdir()
    (d / "a.toml").write_text('name = "default"\nrank = 0\ndescription = "d"\ncost = "none"\n')
    (d / "b.toml").write_text(
        'name = "nasty"\nrank = 1\nextends = "default"\ndescription = "d"\ncost = "c"\n'
        'unset = ["GONE"]\n\n[set]\n'
        f'NASTY = """{NASTY.replace(chr(92), chr(92) * 2).replace(chr(10), chr(92) + "n")}"""\n'
        'PLAIN = "1"\nEMPTY = ""\n')
    return d


def run_sh(script, env):
    return subprocess.run(["/bin/sh", "-c", script], capture_output=True, text=True, env=env, check=True)


def env_dump(text):
    """`env -0` output as a dict."""
    out = {}
    for item in text.split("\0"):
        if item:
            k, _, v = item.partition("=")
            out[k] = v
    return out


def test_eval_in_sh_sets_exactly_the_profile(rmcp, tmp_path):
    profiles = nasty_profiles(tmp_path)
    root = tmp_path / "root"
    root.mkdir()
    out = rmcp("--root", root, "env", "--profile", "nasty", "--profile-dir", profiles,
               env={"HOME": HOME}, check=0).stdout.decode()
    script_file = tmp_path / "env.sh"
    script_file.write_text(out)
    base = {"PATH": "/usr/bin:/bin", "GONE": "x", "KEEP": "y"}
    before = env_dump(subprocess.run(["/usr/bin/env", "-0"], capture_output=True, text=True, env=base).stdout)
    after = env_dump(run_sh(f'eval "$(cat {script_file})"; /usr/bin/env -0', base).stdout)
    for volatile in ("PWD", "SHLVL", "_", "OLDPWD"):
        before.pop(volatile, None)
        after.pop(volatile, None)
    expected = dict(before)
    del expected["GONE"]
    expected.update({"NASTY": NASTY, "PLAIN": "1", "EMPTY": ""})
    assert after == expected


def test_fish_and_dotenv_quoting(rmcp, tmp_path):
    profiles = nasty_profiles(tmp_path)
    root = tmp_path / "root"
    root.mkdir()
    fish = rmcp("--root", root, "env", "--profile", "nasty", "--profile-dir", profiles, "--shell", "fish",
                env={"HOME": HOME}, check=0).stdout.decode()
    assert "set -e GONE\n" in fish
    assert "set -gx PLAIN '1'\n" in fish
    assert "set -gx NASTY 'it\\'s \"quoted\" $HOME `cmd` \\\\ back\\\\slash; *glob* \n second line'\n" in fish
    # dotenv single-quotes each value; a ' or a line break has no spelling sh and dotenv readers
    # agree on, so NASTY is refused, naming it (docs/patches.md, "rmcp env").
    refused = rmcp("--root", root, "env", "--profile", "nasty", "--profile-dir", profiles, "--shell", "dotenv",
                   env={"HOME": HOME}, check=2)
    assert refused.stdout == b"" and b"writing dotenv NASTY" in refused.stderr


def test_dotenv_sourced_by_sh_runs_nothing_and_round_trips(rmcp, tmp_path):
    """D17 (adversarial review 2026-11-28): double quotes left backticks to sh."""
    marker = tmp_path / "PWNED"
    hostile = {"TICKS": f"`touch {marker}`", "DOLLAR": f"$(touch {marker}) ${{HOME}} $HOME",
               "MIXED": 'a "b" \\c \\$d; *e* | f & g > h'}
    root = tmp_path / "root"
    (root / "home/u/.config/rmcp").mkdir(parents=True)
    (root / "home/u/.config/rmcp/profile.env").write_text(
        "".join(f"{k}='{v}'\n" for k, v in hostile.items()))
    out = rmcp("--root", root, "env", "--shell", "dotenv", env={"HOME": "/home/u"}, check=0).stdout.decode()
    for k, v in hostile.items():
        assert f"{k}='{v}'\n" in out
    env_file = tmp_path / "out.env"
    env_file.write_text(out)
    after = env_dump(run_sh(f"set -a; . {env_file}; /usr/bin/env -0", {"PATH": "/usr/bin:/bin"}).stdout)
    assert not marker.exists()
    for k, v in hostile.items():
        assert after[k] == v


def test_shipped_ladder_profiles(rmcp, tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    out = rmcp("--root", root, "env", "--profile", "miopen-conservative", env={"HOME": HOME}, check=0).stdout.decode()
    # MIOpen issue 3540: GEMM and ConvOclBwdWrW2 (and WrW53) off; Winograd and implicit GEMM,
    # reported working, stay on.
    assert out == ("export MIOPEN_DEBUG_CONV_DIRECT_OCL_WRW2='0'\nexport MIOPEN_DEBUG_CONV_DIRECT_OCL_WRW53='0'\n"
                   "export MIOPEN_DEBUG_CONV_FFT='0'\nexport MIOPEN_DEBUG_CONV_GEMM='0'\n")
    cpu = rmcp("--root", root, "env", "--profile", "cpu", env={"HOME": HOME}, check=0).stdout.decode()
    assert cpu == "unset HSA_OVERRIDE_GFX_VERSION\nexport CUDA_VISIBLE_DEVICES=''\nexport HIP_VISIBLE_DEVICES=''\n"
    off = rmcp("--root", root, "env", "--profile", "miopen-off", env={"HOME": HOME}, check=0).stdout.decode()
    assert "export RMCP_DISABLE_MIOPEN='1'\n" in off
    assert rmcp("--root", root, "env", "--profile", "no-such", env={"HOME": HOME}).returncode == 2


def test_isa_override_only_where_the_family_allows(rmcp):
    def override(fixture):
        root = FIXTURES / fixture
        if not root.is_dir():
            pytest.skip(f"fixture {fixture} missing")
        proc = rmcp("--root", root, "env", "--profile", "isa-override", env={"HOME": HOME}, check=0)
        return proc.stdout.decode(), proc.stderr.decode()
    out, _ = override("rx6700xt-gfx1031")
    assert out == "export HSA_OVERRIDE_GFX_VERSION='10.3.0'\n"
    out, err = override("rx5600xt-gfx1010-rocm52")  # RDNA1: 10.3.0 is a different family
    assert "HSA_OVERRIDE_GFX_VERSION" not in out and "no ISA-compatible override for gfx1010" in err
    out, _ = override("rx7900xtx-gfx1100")  # natively supported: nothing
    assert out == ""


@pytest.mark.parametrize("fixture,profile", [
    ("rx6700xt-gfx1031", "isa-override"),
    ("rx7900xtx-gfx1100", "default"),
    ("no-amdgpu", "default"),  # no AMD GPU: nothing hidden (KB audit 2)
])
def test_auto_profile_from_facts(rmcp, fixture, profile):
    root = FIXTURES / fixture
    if not root.is_dir():
        pytest.skip(f"fixture {fixture} missing")
    err = rmcp("--root", root, "env", "--profile", "auto", env={"HOME": HOME}, check=0).stderr.decode()
    assert f"auto: profile {profile} (" in err


def test_user_profile_env_from_applied_patches(rmcp, tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    env = {"HOME": HOME, "XDG_STATE_HOME": "/state"}
    rmcp("--root", root, "patch", "apply", "--yes", "env-miopen-no-gemm", "env-unset-override", env=env, check=0)
    out = rmcp("--root", root, "env", env=env, check=0).stdout.decode()
    lines = out.splitlines()
    assert lines[0] == "unset HSA_OVERRIDE_GFX_VERSION" and "unset HSA_OVERRIDE_GFX_VERSION_1" in lines
    assert lines[-2:] == ["export MIOPEN_DEBUG_CONV_DIRECT_OCL_WRW2='0'", "export MIOPEN_DEBUG_CONV_GEMM='0'"]
    assert all(line.startswith("unset HSA_OVERRIDE_GFX_VERSION") for line in lines[:-2])
    # The profile wins over the user's file: the cpu rung still hides the GPU.
    cpu = rmcp("--root", root, "env", "--profile", "cpu", env=env, check=0).stdout.decode()
    assert "export HIP_VISIBLE_DEVICES=''" in cpu and "export MIOPEN_DEBUG_CONV_GEMM='0'" in cpu


def test_malformed_profile_names_file_and_line(rmcp, tmp_path):
    d = tmp_path / "profiles"
    d.mkdir()
    (d / "bad.toml").write_text('name = "x"\nrank = 0\ndescription = "d"\ncost = "c"\n[set]\n"BAD NAME" = "1"\n')
    root = tmp_path / "root"
    root.mkdir()
    err = rmcp("--root", root, "env", "--profile-dir", d, env={"HOME": HOME}, check=2).stderr.decode()
    assert f"{d}/bad.toml:5" in err and "not a valid variable name" in err


def test_auto_adds_the_env_fixes_of_findings(rmcp):
    """desktop-igpu-dgpu: a global 11.0.0 override with an RDNA3 dGPU and an RDNA2 iGPU."""
    root = FIXTURES / "desktop-igpu-dgpu"
    if not root.is_dir():
        pytest.skip("fixture missing")
    proc = rmcp("--root", root, "env", "--profile", "auto", env={"HOME": HOME}, check=0)
    out = proc.stdout.decode()
    assert "{" not in out  # every placeholder resolved
    # igpu-selected: the iGPU is hidden from the ROCm runtime itself (AMD's install guide).
    assert "export ROCR_VISIBLE_DEVICES='0'\n" in out
    # With the iGPU hidden, the global 11.0.0 reaches only the gfx1100 dGPU (identical): harmless,
    # and override-redundant is info, which auto leaves alone (issue 28). No override may be set
    # for the iGPU.
    assert "HSA_OVERRIDE_GFX_VERSION_2=" not in out
    # A variable one fix sets is not unset by another finding's fix.
    if "HSA_OVERRIDE_GFX_VERSION_2=" in out:
        assert "unset HSA_OVERRIDE_GFX_VERSION_2\n" not in out


# --- do no harm (newcomer review, finding 3) ---------------------------------------------------
# `auto` hides GPUs only where detect positively finds an AMD GPU that cannot be used; with no
# AMD GPU at all (a VM, a container without devices, an NVIDIA machine) it changes nothing, so
# `rt.enable()` in shared training code or `rmcp run --profile auto` on a CUDA box never turns
# the working GPU off. The class, over every fixture root: no AMD GPU → nothing printed.

def every_root():
    roots = [p for p in sorted(FIXTURES.iterdir()) if p.is_dir() and (p / "sys").exists()]
    healthy = FIXTURES / "healthy"
    roots += [p for p in sorted(healthy.iterdir()) if p.is_dir() and (p / "sys").exists()]
    return roots


def test_auto_changes_nothing_where_detect_finds_no_amd_gpu(rmcp):
    checked = []
    for root in every_root():
        if rmcp.json("--root", root, "detect", env={"HOME": HOME})["gpus"]:
            continue
        proc = rmcp("--root", root, "env", "--profile", "auto", env={"HOME": HOME}, check=0)
        assert proc.stdout == b"", (root.name, proc.stdout)
        plan = json.loads(rmcp("--root", root, "run", "--profile", "auto", "--dry-run", "--format", "json", "--",
                               "true", env={"HOME": HOME}, check=0).stdout)
        assert plan["attempts"][0]["env"] == [] and plan["attempts"][0]["hide_gpu"] is False, (root.name, plan)
        checked.append(root.name)
    # The no-GPU and the NVIDIA-only machines are among them.
    assert {"no-amdgpu", "nvidia-only-cuda-desktop"} <= set(checked), checked


def test_auto_never_hides_the_gpus_of_another_vendor(rmcp):
    """An NVIDIA dGPU next to an AMD iGPU (laptop-780m-nvidia-cuda): whatever auto does for the
    AMD GPU, CUDA_VISIBLE_DEVICES is never touched."""
    root = FIXTURES / "healthy" / "laptop-780m-nvidia-cuda"
    out = rmcp("--root", root, "env", "--profile", "auto", env={"HOME": HOME}, check=0).stdout.decode()
    assert "CUDA_VISIBLE_DEVICES" not in out, out


def test_torch_enable_leaves_the_environment_alone_without_an_amd_gpu(rmcp, tmp_path):
    """python/rmcp/torch enable() with its default profile='auto', on the NVIDIA-only machine."""
    code = ("import json, os, warnings\n"
            "warnings.simplefilter('ignore')\n"
            "import rmcp.torch as rt\n"
            "before = dict(os.environ)\n"
            "rt.enable()\n"
            "after = dict(os.environ)\n"
            "print(json.dumps(sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))))\n")
    env = {"PATH": "/usr/bin:/bin", "HOME": HOME, "RMCP_BIN": str(rmcp.binary), "RMCP_DATA_DIR": str(REPO),
           "RMCP_ROOT": str(FIXTURES / "healthy" / "nvidia-only-cuda-desktop"), "PYTHONPATH": str(REPO / "python"),
           "CUDA_VISIBLE_DEVICES": "0", "XDG_CACHE_HOME": str(tmp_path)}
    proc = subprocess.run(["/usr/bin/python3", "-c", code], env=env, capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    changed = json.loads(proc.stdout.decode().strip().splitlines()[-1])
    assert not [k for k in changed if k.endswith("VISIBLE_DEVICES") or k.startswith("HSA_")], changed


def test_env_without_a_profile_says_so(rmcp, tmp_path):
    """Newcomer review, finding 13: `rmcp env` with nothing to print was silent."""
    root = tmp_path / "root"
    root.mkdir()
    proc = rmcp("--root", root, "env", env={"HOME": HOME}, check=0)
    assert proc.stdout == b""
    assert proc.stderr.decode().startswith("rmcp: note: no profile applied: ")
    quiet = rmcp("-q", "--root", root, "env", env={"HOME": HOME}, check=0)
    assert quiet.stdout == b"" and quiet.stderr == b""
