"""From finding to fixed: doctor's per-finding status in the environment a training run gets,
the next command, `doctor --fix`, one `auto` for every front end, `run --dry-run`, and
profile.env in sh syntax (docs/patches.md, "From finding to fixed").

Every test works on a copy of a fixture: tests/fixtures is never modified.
"""
import json
import shutil

import pytest

from conftest import FIXTURES, fixture_roots
from test_patch import tree_hash

HOME = "/home/tester"
STATE = "/state"
ENV_FILE = HOME + "/.config/rmcp/profile.env"
NOT_OPEN = {"fixed-by-profile", "fixed", "pending"}


def env():
    return {"HOME": HOME, "XDG_STATE_HOME": STATE, "RMCP_ASSUME_UID": "0"}


def copy_fixture(tmp_path, name):
    root = tmp_path / name
    shutil.copytree(FIXTURES / name, root, symlinks=True)
    return root


def doctor(rmcp, root, *args):
    proc = rmcp("--root", root, "doctor", "--format", "json", *args, env=env())
    assert proc.returncode in (0, 1), proc.stderr.decode()
    return json.loads(proc.stdout)


def key(f):
    return (f["id"], (f["gpu"] or {}).get("index"))


def fixable(report):
    return {key(f) for f in report["findings"]
            if f["status"] == "open" and " patch apply " in (f["next"] or "")}


@pytest.mark.parametrize("fixture", [p.name for p in fixture_roots()])
def test_fix_then_doctor_then_rollback(rmcp, tmp_path, fixture):
    """doctor --fix -y applies the first fix of every open finding in one transaction; doctor
    then shows those findings fixed or pending, exits by what is still open, and rollback
    restores the tree byte for byte and the findings open again."""
    root = copy_fixture(tmp_path, fixture)
    before = doctor(rmcp, root)
    wanted = fixable(before)
    if not wanted:
        pytest.skip(f"{fixture}: no finding with a fix that writes something")
    pristine = tree_hash(root)
    proc = rmcp("--root", root, "doctor", "--fix", "-y", "--format", "json", env=env(), check=0)
    fixed = json.loads(proc.stdout)
    txn = fixed["transaction"]
    assert txn, fixed
    assert fixed["rollback"] == f"rmcp --root {root} patch rollback {txn}"
    after = doctor(rmcp, root)
    by_key = {key(f): f for f in after["findings"]}
    for k in wanted:
        if k in by_key:
            assert by_key[k]["status"] in NOT_OPEN, by_key[k]
            assert by_key[k]["fixed_by"] in (txn, None), by_key[k]
    open_critical = [f for f in after["findings"] if f["status"] == "open" and f["severity"] == "critical"]
    code = rmcp("--root", root, "doctor", "--fail-on", "critical", env=env()).returncode
    assert code == (1 if open_critical else 0), open_critical
    rmcp("--root", root, "patch", "rollback", txn, env=env(), check=0)
    assert tree_hash(root) == pristine
    again = doctor(rmcp, root)
    assert fixable(again) == wanted


def open_by_severity(report, severity):
    return {key(f) for f in report["findings"] if f["status"] == "open" and f["severity"] == severity}


@pytest.mark.parametrize("fixture", [p.name for p in fixture_roots()])
def test_following_next_never_raises_the_critical_count(rmcp, tmp_path, fixture):
    """Issue 28: each open finding's `next:` command (`rmcp patch apply ID`), applied alone on a
    copy, never leaves more open criticals than before, nor a critical that was not there."""
    root = copy_fixture(tmp_path, fixture)
    before = doctor(rmcp, root)
    nexts = sorted({f["next"].split(" patch apply ", 1)[1].split()[0] for f in before["findings"]
                    if f["status"] == "open" and " patch apply " in (f["next"] or "")})
    if not nexts:
        pytest.skip(f"{fixture}: no open finding whose next command applies a patch")
    critical = open_by_severity(before, "critical")
    for patch_id in nexts:
        pristine = tree_hash(root)
        applied = rmcp("--root", root, "patch", "apply", "-y", "--format", "json", patch_id, env=env(), check=0)
        assert applied.returncode == 0, applied.stderr.decode()
        after = open_by_severity(doctor(rmcp, root), "critical")
        assert len(after) <= len(critical) and after <= critical, f"{patch_id}: {sorted(after - critical)}"
        txn = json.loads(applied.stdout)["transaction"]
        if txn:
            rmcp("--root", root, "patch", "rollback", txn, env=env(), check=0)
        assert tree_hash(root) == pristine


def test_fix_refuses_without_a_terminal(rmcp, tmp_path):
    root = copy_fixture(tmp_path, "rx6700xt-gfx1031")
    pristine = tree_hash(root)
    proc = rmcp("--root", root, "doctor", "--fix", env=env(), input=b"", check=2)
    assert "refusing without confirmation: stdin is not a terminal" in proc.stderr.decode()
    assert "--yes" in proc.stderr.decode()
    assert tree_hash(root) == pristine


def test_every_open_finding_ends_with_its_next_command(rmcp, tmp_path):
    root = copy_fixture(tmp_path, "rx6700xt-gfx1031")
    report = doctor(rmcp, root)
    finding = next(f for f in report["findings"] if f["id"] == "rdna2-no-override")
    assert finding["status"] == "open"
    assert finding["next"] == f"rmcp --root {root} patch apply env-override-same-family"
    # The first screen's next steps lead with it; under -v the finding's block ends with it and its undo.
    text = rmcp("--root", root, "doctor", env=env(), check=1).stdout.decode()
    assert f"\n  1. rmcp --root {root} patch apply env-override-same-family\n" in text
    verbose = rmcp("--root", root, "-v", "doctor", env=env(), check=1).stdout.decode()
    block = verbose.split("CRITICAL rdna2-no-override")[1].split("\n\n")[0]
    assert block.rstrip().splitlines()[-2:] == [f"  next: rmcp --root {root} patch apply env-override-same-family",
                                                f"  undo: rmcp --root {root} patch rollback"]


def test_patch_apply_then_doctor_sees_profile_env(rmcp, tmp_path):
    """The user story: apply the named patch, doctor says the finding is fixed by profile.env
    (with the transaction), names paths inside the root as such, and says how to verify."""
    root = copy_fixture(tmp_path, "rx6700xt-gfx1031")
    proc = rmcp("--root", root, "patch", "apply", "-y", "env-override-same-family", env=env(), check=0)
    out, err = proc.stdout.decode(), proc.stderr.decode()
    assert f"  wrote {root}{ENV_FILE}\n" in out
    assert f"rmcp: note: verify with: rmcp --root {root} doctor\n" in err
    txn = out.split("applied transaction ")[1].split()[0]
    report = doctor(rmcp, root)
    finding = next(f for f in report["findings"] if f["id"] == "rdna2-no-override")
    assert finding["status"] == "fixed-by-profile"
    assert finding["fixed_by"] == txn
    text = rmcp("--root", root, "doctor", env=env()).stdout.decode()
    assert "rdna2-no-override (fixed by profile.env)" in text
    assert f'\n  1. eval "$(rmcp --root {root} env)"\n' in text  # how it takes effect in this shell
    verbose = rmcp("--root", root, "-v", "doctor", env=env()).stdout.decode()
    assert f"status: fixed by profile.env (transaction {txn})" in verbose


@pytest.mark.sweep
@pytest.mark.parametrize("fixture", [p.name for p in fixture_roots()])
def test_env_run_and_doctor_fix_agree_on_auto(rmcp, tmp_path, fixture):
    """One auto decision (patch::choose_auto): `rmcp env --profile auto` (which rmcp.torch.enable()
    runs), `rmcp run --profile auto --dry-run` and `rmcp doctor --fix` choose the same rung, and
    env and run the same variables."""
    root = copy_fixture(tmp_path, fixture)
    proc = rmcp("--root", root, "env", "--profile", "auto", "--shell", "sh", env=env(), check=0)
    notes = [l for l in proc.stderr.decode().splitlines() if l.startswith("rmcp: note: auto: profile ")]
    assert len(notes) == 1, proc.stderr
    env_profile = notes[0].split("auto: profile ")[1].split()[0]
    exported = {}
    for line in proc.stdout.decode().splitlines():
        if line.startswith("export "):
            name, value = line[len("export "):].split("=", 1)
            exported[name] = value.strip("'")
    plan = json.loads(rmcp("--root", root, "run", "--profile", "auto", "--dry-run", "--format", "json",
                           "--", "true", env=env(), check=0).stdout)
    assert plan["profile"] == env_profile
    assert plan["argv"] == ["true"]
    run_set = {e["name"]: e["value"] for e in plan["attempts"][0]["env"] if e["value"] is not None}
    assert run_set == exported
    fix = json.loads(rmcp("--root", root, "doctor", "--fix", "-y", "--format", "json", env=env(), check=0).stdout)
    assert fix["auto_profile"] == env_profile


def test_run_dry_run_starts_nothing(rmcp, tmp_path):
    root = copy_fixture(tmp_path, "rx6700xt-gfx1031")
    marker = tmp_path / "started"
    proc = rmcp("--root", root, "run", "--profile", "auto", "--retries", "1", "--dry-run", "--",
                "touch", marker, env=env(), check=0)
    out = proc.stdout.decode()
    assert out.startswith("attempt 1: profile isa-override\n")
    assert "  set HSA_OVERRIDE_GFX_VERSION=10.3.0\n" in out
    assert "attempt 2: profile " in out
    assert out.endswith(f"argv: touch {marker}\n")
    assert not marker.exists()


HAND_EDITED = """# written by hand
export HSA_OVERRIDE_GFX_VERSION="10.3.0"
MIOPEN_FIND_MODE=FAST   # a comment
unset -v HIP_VISIBLE_DEVICES
"""


def test_hand_edited_profile_env_round_trip(rmcp, tmp_path):
    """Ordinary sh lines are read as sh reads them; rmcp's own write is canonical; rollback
    gives back the hand-edited bytes."""
    root = copy_fixture(tmp_path, "rx6700xt-gfx1031")
    path = root / ENV_FILE.lstrip("/")
    path.parent.mkdir(parents=True)
    path.write_text(HAND_EDITED)
    plan = json.loads(rmcp("--root", root, "run", "--dry-run", "--format", "json", "--", "true",
                           env=env(), check=0).stdout)
    changes = {e["name"]: e["value"] for e in plan["attempts"][0]["env"]}
    assert changes == {"HSA_OVERRIDE_GFX_VERSION": "10.3.0", "MIOPEN_FIND_MODE": "FAST", "HIP_VISIBLE_DEVICES": None}
    report = doctor(rmcp, root)
    assert next(f for f in report["findings"] if f["id"] == "rdna2-no-override")["status"] == "fixed-by-profile"
    out = rmcp("--root", root, "patch", "apply", "-y", "env-alloc-conf", env=env(), check=0).stdout.decode()
    txn = out.split("applied transaction ")[1].split()[0]
    written = path.read_text()
    assert "export HSA_OVERRIDE_GFX_VERSION='10.3.0'\n" in written
    assert "export MIOPEN_FIND_MODE='FAST'\n" in written
    assert "unset HIP_VISIBLE_DEVICES\n" in written
    rmcp("--root", root, "patch", "rollback", txn, env=env(), check=0)
    assert path.read_text() == HAND_EDITED


def test_profile_env_that_needs_a_shell_is_refused_with_file_and_line(rmcp, tmp_path):
    root = copy_fixture(tmp_path, "rx6700xt-gfx1031")
    path = root / ENV_FILE.lstrip("/")
    path.parent.mkdir(parents=True)
    path.write_text("A=1\nexport B=\"$(id -u)\"\n")
    err = rmcp("--root", root, "run", "--", "true", env=env(), check=2).stderr.decode()
    assert f"{ENV_FILE}:2" in err
    assert "needs a shell" in err


PROBED = """# Written by `rmcp probe --save`
name = "probed"
rank = 5
description = "measured here"
cost = "none measured"

[set]
MIOPEN_DEBUG_CONV_GEMM = "0"
"""


def test_user_profiles_are_found_by_name(rmcp, tmp_path):
    """$XDG_CONFIG_HOME/rmcp/profiles/*.toml (inside the root under --root) add to the shipped
    ladder for env, run and doctor; a user's profile with a shipped name wins, with a note."""
    root = copy_fixture(tmp_path, "rx6700xt-gfx1031")
    profiles = root / HOME.lstrip("/") / ".config/rmcp/profiles"
    profiles.mkdir(parents=True)
    (profiles / "probed.toml").write_text(PROBED)
    out = rmcp("--root", root, "env", "--profile", "probed", env=env(), check=0).stdout.decode()
    assert out == "export MIOPEN_DEBUG_CONV_GEMM='0'\n"
    plan = json.loads(rmcp("--root", root, "run", "--profile", "probed", "--dry-run", "--format", "json",
                           "--", "true", env=env(), check=0).stdout)
    assert plan["profile"] == "probed"
    assert plan["attempts"][0]["env"] == [{"name": "MIOPEN_DEBUG_CONV_GEMM", "value": "0"}]
    rmcp("--root", root, "doctor", "--profile", "probed", env=env())
    (profiles / "mine.toml").write_text(PROBED.replace('"probed"', '"default"').replace("rank = 5", "rank = 0"))
    proc = rmcp("--root", root, "env", "--profile", "default", env=env(), check=0)
    assert proc.stdout.decode() == "export MIOPEN_DEBUG_CONV_GEMM='0'\n"
    assert f"rmcp: note: profile default: yours ({profiles}/mine.toml) is used instead of the shipped one" \
        in proc.stderr.decode()
    (profiles / "bad.toml").write_text("name = \"bad\"\nrank = \"x\"\n")
    err = rmcp("--root", root, "env", "--profile", "probed", env=env(), check=2).stderr.decode()
    assert f"{profiles}/bad.toml:" in err


def test_module_option_fix_is_pending_until_reboot(rmcp, tmp_path):
    """A modprobe.d file changes nothing until amdgpu loads again: the finding stays in the
    facts, and doctor says pending (with the transaction) instead of open."""
    root = copy_fixture(tmp_path, "kb-strix-halo")
    before = next(f for f in doctor(rmcp, root)["findings"] if f["id"] == "strix-halo-cwsr")
    assert before["status"] == "open"
    out = rmcp("--root", root, "patch", "apply", "-y", "modprobe-cwsr-disable", env=env(), check=0).stdout.decode()
    assert f"  wrote {root}/etc/modprobe.d/rmcp-cwsr.conf\n" in out
    txn = out.split("applied transaction ")[1].split()[0]
    after = next(f for f in doctor(rmcp, root)["findings"] if f["id"] == "strix-halo-cwsr")
    assert after["status"] == "pending"
    assert after["fixed_by"] == txn
    assert after["next"] == "sudo reboot"
    assert "needs reboot" in after["status_detail"]


def test_doctor_under_a_profile_says_fixed_when_run_under_it(rmcp, tmp_path):
    root = copy_fixture(tmp_path, "rx6700xt-gfx1031")
    rmcp("--root", root, "doctor", "--fail-on", "critical", env=env(), check=1)
    report = doctor(rmcp, root, "--profile", "auto")
    finding = next(f for f in report["findings"] if f["id"] == "rdna2-no-override")
    assert finding["status"] == "fixed-by-profile"
    assert finding["status_detail"] == "fixed when run under `rmcp run --profile auto`"
    assert finding["next"] == f'eval "$(rmcp --root {root} env --profile auto)"'
    rmcp("--root", root, "doctor", "--profile", "auto", "--fail-on", "critical", env=env(), check=0)


def test_group_joined_after_login_is_pending_until_re_login(rmcp, tmp_path):
    """The render-group advisory is the user's to run (rmcp never runs usermod). Once
    /etc/group lists the user in the group that owns /dev/kfd but this login session's groups
    (/proc/self/status) still lack it, the finding is pending a re-login, not open; a user the
    group file does not list stays open with the advisory as the next step."""
    root = copy_fixture(tmp_path, "kfd-no-access")
    before = {f["id"]: f for f in doctor(rmcp, root)["findings"]}
    assert before["kfd-no-access"]["status"] == "open"
    assert "usermod" in before["kfd-no-access"]["next"]
    group = root / "etc" / "group"
    group.write_text(group.read_text().replace("render:x:109:\n", "render:x:109:jo\n"))
    after = {f["id"]: f for f in doctor(rmcp, root)["findings"]}
    assert after["kfd-no-access"]["status"] == "pending"
    assert "re-login" in after["kfd-no-access"]["status_detail"]
    assert "'render'" in after["kfd-no-access"]["status_detail"]
    assert not after["kfd-no-access"].get("next")
    detect = json.loads(rmcp("--root", root, "detect", "--format", "json", env=env()).stdout)
    assert detect["kfd"]["user_in_group"] is False
    assert detect["kfd"]["user_listed_in_group"] is True
