"""`rmcp patch`: plan/apply/rollback/status under --root (docs/patches.md).

Every test applies to a temporary tree. The crash test uses the test-only fault injection
RMCP_TEST_KILL_AFTER_STEP (docs/patches.md), honoured only under a --root other than /.
"""
import fcntl
import hashlib
import json
import os
import pathlib
import shutil
import signal
import stat
import tomllib

import pytest

from conftest import FIXTURES, GOLDEN, REPO

import sys  # noqa: E402
sys.path.insert(0, str(FIXTURES))
import make_libraries  # noqa: E402

HOME = "/home/tester"
STATE = "/state"  # XDG_STATE_HOME inside the root; journals go here, outside the hashed tree
SITE = HOME + "/.local/lib/python3.11/site-packages"
EXCLUDE = {"state", "var/lib/rmcp"}

ENV_FILE = HOME + "/.config/rmcp/profile.env"
ORIGINAL_ENV_FILE = "# mine\nexport KEEP_ME='yes'\n"

# A patch with one target of each kind (plus advisory steps): the crash test kills after each.
MULTI = ["env-miopen-no-gemm", "modprobe-cwsr-disable", "python-spawn-hook", "env-alloc-conf"]


def make_tree(tmp_path):
    root = tmp_path / "root"
    (root / "etc/modprobe.d").mkdir(parents=True)
    (root / "etc/os-release").write_text('ID=debian\nVERSION_ID="12"\n')
    (root / "etc/modprobe.d/amdgpu.conf").write_text("options amdgpu noretry=0\n")
    (root / "var/lib").mkdir(parents=True)
    (root / "state").mkdir()
    cfg = root / HOME.lstrip("/") / ".config/rmcp"
    cfg.mkdir(parents=True)
    env_file = cfg / "profile.env"
    env_file.write_text(ORIGINAL_ENV_FILE)
    env_file.chmod(0o600)
    (root / "usr/lib/python3.11").mkdir(parents=True)
    (root / HOME.lstrip("/") / "link-to-etc").symlink_to("../../etc")
    return root


def tree_hash(root):
    """Every file's content and mode, every directory's mode, every symlink's target."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        rel_dir = os.path.relpath(dirpath, root)
        dirnames[:] = [d for d in dirnames
                       if os.path.normpath(os.path.join(rel_dir, d)) not in EXCLUDE]
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            rel = os.path.normpath(os.path.join(rel_dir, name))
            st = os.lstat(path)
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("link", os.readlink(path))
            elif stat.S_ISDIR(st.st_mode):
                out[rel] = ("dir", stat.S_IMODE(st.st_mode))
            else:
                out[rel] = ("file", stat.S_IMODE(st.st_mode),
                            hashlib.sha256(pathlib.Path(path).read_bytes()).hexdigest())
    return out


def penv(**extra):
    env = {"HOME": HOME, "XDG_STATE_HOME": STATE, "RMCP_ASSUME_UID": "0"}
    env.update({k: str(v) for k, v in extra.items()})
    return env


def patch(rmcp, root, *args, env=None, **kw):
    return rmcp("--root", root, "patch", *args, env=env or penv(), **kw)


def apply(rmcp, root, ids, env=None, **kw):
    return patch(rmcp, root, "apply", "--yes", "--site-packages", SITE, *ids, env=env, **kw)


def test_list_and_show(rmcp):
    out = rmcp("patch", "list", check=0).stdout.decode()
    assert "modprobe-cwsr-disable" in out and "env-miopen-no-gemm" in out
    show = rmcp("patch", "show", "modprobe-cwsr-disable", check=0).stdout.decode()
    for word in ("why:", "cost:", "evidence:", "reversible:", "cwsr_enable=0", "update-initramfs -u", "dracut -f",
                 "mkinitcpio -P"):
        assert word in show
    data = rmcp.json("patch", "show", "env-miopen-no-gemm")
    assert data["schema_version"] == 1
    assert data["operations"] == [{"kind": "env", "set": {"MIOPEN_DEBUG_CONV_DIRECT_OCL_WRW2": "0",
                                                          "MIOPEN_DEBUG_CONV_GEMM": "0"}}]
    assert rmcp("patch", "show", "no-such-patch").returncode == 2


def test_every_kb_fix_names_an_existing_patch(rmcp):
    ids = {p["id"] for p in rmcp.json("patch", "list")["patches"]}
    kb_files = sorted((REPO / "kb").glob("*.toml"))
    if not kb_files:
        pytest.skip("kb/ has no entries yet")
    missing = []
    for f in kb_files:
        for fix in tomllib.loads(f.read_text()).get("fixes", []):
            if fix["patch"] not in ids:
                missing.append(f"{f.name}: {fix['patch']}")
    assert not missing, missing


def test_plan_touches_nothing_and_shows_diffs(rmcp, tmp_path):
    root = make_tree(tmp_path)
    before = tree_hash(root)
    out = patch(rmcp, root, "plan", "--site-packages", SITE, *MULTI, check=0).stdout.decode()
    assert tree_hash(root) == before
    assert not (root / "state/rmcp").exists()
    assert f"--- a{ENV_FILE}" in out and f"+++ b{ENV_FILE}" in out
    assert "+export MIOPEN_DEBUG_CONV_GEMM='0'" in out
    assert "--- /dev/null\n+++ b/etc/modprobe.d/rmcp-cwsr.conf" in out
    assert "+options amdgpu cwsr_enable=0" in out
    assert "$ sudo update-initramfs -u" in out  # Debian tree: the Debian command only
    assert "dracut" not in out


def test_apply_then_rollback_is_byte_identical(rmcp, tmp_path):
    root = make_tree(tmp_path)
    before = tree_hash(root)
    out = apply(rmcp, root, MULTI, check=0).stdout.decode()
    assert "applied transaction" in out and "sudo update-initramfs -u" in out
    assert (root / "etc/modprobe.d/rmcp-cwsr.conf").read_text().endswith(
        "options amdgpu cwsr_enable=0\n")
    env_text = (root / ENV_FILE.lstrip("/")).read_text()
    assert "export KEEP_ME='yes'" in env_text and "export MIOPEN_DEBUG_CONV_GEMM='0'" in env_text
    assert stat.S_IMODE((root / ENV_FILE.lstrip("/")).stat().st_mode) == 0o600  # mode kept
    pth = root / SITE.lstrip("/") / "rmcp-startup.pth"
    assert "rmcp.torch.enable()" in pth.read_text()
    assert tree_hash(root) != before
    status = patch(rmcp, root, "status", check=0).stdout.decode()
    assert "applied" in status and "modprobe-cwsr-disable" in status
    patch(rmcp, root, "rollback", check=0)
    assert tree_hash(root) == before
    data = rmcp.json("--root", root, "patch", "status", env=penv())
    assert [t["state"] for t in data["transactions"]] == ["rolled-back"]
    # Nothing left to roll back: a note, exit 0.
    assert "nothing to roll back" in patch(rmcp, root, "rollback", check=0).stderr.decode()


def test_applying_twice_changes_nothing_the_second_time(rmcp, tmp_path):
    root = make_tree(tmp_path)
    apply(rmcp, root, MULTI, check=0)
    after_first = tree_hash(root)
    second = apply(rmcp, root, MULTI, check=0).stdout.decode()
    assert "nothing to write" in second
    assert tree_hash(root) == after_first
    assert len(rmcp.json("--root", root, "patch", "status", env=penv())["transactions"]) == 1


def test_transactions_roll_back_newest_first(rmcp, tmp_path):
    root = make_tree(tmp_path)
    before = tree_hash(root)
    apply(rmcp, root, ["env-miopen-no-gemm"], check=0)
    apply(rmcp, root, ["env-alloc-conf"], check=0)
    first = rmcp.json("--root", root, "patch", "status", env=penv())["transactions"][0]["id"]
    refused = patch(rmcp, root, "rollback", first, check=2).stderr.decode()
    assert "roll that back first" in refused
    patch(rmcp, root, "rollback", check=0)
    patch(rmcp, root, "rollback", check=0)
    assert tree_hash(root) == before


def steps_of(rmcp, root):
    plan = rmcp.json("--root", root, "patch", "plan", "--site-packages", SITE, *MULTI, env=penv())
    return sum(1 for s in plan["steps"] if "target" in s and not s["in_effect"])


def test_crash_at_every_step_is_reported_and_repaired(rmcp, tmp_path):
    """SIGKILL after the journal (k=0) and after each write (k=1..n); status, then rollback."""
    probe = make_tree(tmp_path / "probe")
    n = steps_of(rmcp, probe)
    assert n == 4  # profile.env, modprobe file, .pth, profile.env again (env-alloc-conf)
    for k in range(0, n + 1):
        root = make_tree(tmp_path / f"k{k}")
        before = tree_hash(root)
        proc = apply(rmcp, root, MULTI, env=penv(RMCP_TEST_KILL_AFTER_STEP=k))
        assert proc.returncode == -signal.SIGKILL, (k, proc.returncode, proc.stderr)
        status = rmcp.json("--root", root, "patch", "status", env=penv())
        assert [t["state"] for t in status["transactions"]] == ["interrupted"], k
        text = patch(rmcp, root, "status", check=0).stdout.decode()
        assert f"rmcp --root {root} patch rollback" in text  # the command to paste, root included
        patch(rmcp, root, "rollback", check=0)
        assert tree_hash(root) == before, f"tree differs after crash at step {k}"
        status = rmcp.json("--root", root, "patch", "status", env=penv())
        assert [t["state"] for t in status["transactions"]] == ["rolled-back"]


def test_failed_step_rolls_back_with_exit_4(rmcp, tmp_path):
    root = make_tree(tmp_path)
    before = tree_hash(root)
    proc = apply(rmcp, root, MULTI, env=penv(RMCP_TEST_FAIL_STEP=3), check=4)
    assert "every change was rolled back" in proc.stderr.decode()
    assert tree_hash(root) == before
    status = rmcp.json("--root", root, "patch", "status", env=penv())
    assert [t["state"] for t in status["transactions"]] == ["failed-rolled-back"]


def test_incomplete_rollback_exits_5_and_says_what_to_do(rmcp, tmp_path):
    root = make_tree(tmp_path)
    before = tree_hash(root)
    proc = apply(rmcp, root, MULTI, env=penv(RMCP_TEST_FAIL_STEP=3, RMCP_TEST_FAIL_RESTORE=1), check=5)
    err = proc.stderr.decode()
    txn = rmcp.json("--root", root, "patch", "status", env=penv())["transactions"][0]
    assert txn["state"] == "interrupted"
    assert ENV_FILE in err and "/etc/modprobe.d/rmcp-cwsr.conf" in err
    assert txn["journal"] in err
    assert f"rmcp --root {root} patch rollback {txn['id']}" in err
    patch(rmcp, root, "rollback", txn["id"], check=0)
    assert tree_hash(root) == before


def test_not_root_for_etc_is_refused(rmcp, tmp_path):
    root = make_tree(tmp_path)
    before = tree_hash(root)
    proc = apply(rmcp, root, ["modprobe-cwsr-disable"], env=penv(RMCP_ASSUME_UID=1000), check=3)
    assert "needs root" in proc.stderr.decode()
    assert tree_hash(root) == before
    # User targets need no root.
    apply(rmcp, root, ["env-miopen-no-gemm"], env=penv(RMCP_ASSUME_UID=1000), check=0)


def test_symlink_out_of_the_root_is_refused(rmcp, tmp_path):
    """An absolute link resolves inside the root (as in a chroot): to the root's own
    /etc/passwd, which is not on the allowlist (docs/security.md)."""
    root = make_tree(tmp_path)
    (root / "etc/modprobe.d/rmcp-cwsr.conf").symlink_to("/etc/passwd")
    before = tree_hash(root)
    err = apply(rmcp, root, ["modprobe-cwsr-disable"], check=2).stderr.decode()
    assert "it resolves to /etc/passwd" in err and "outside the allowlist" in err
    assert tree_hash(root) == before


def test_symlink_to_a_file_outside_the_allowlist_is_refused(rmcp, tmp_path):
    root = make_tree(tmp_path)
    (root / "etc/shadow").write_text("secret\n")
    (root / "etc/modprobe.d/rmcp-cwsr.conf").symlink_to("../shadow")
    err = apply(rmcp, root, ["modprobe-cwsr-disable"], check=2).stderr.decode()
    assert "rmcp: error: refusing target /etc/modprobe.d/rmcp-cwsr.conf" in err
    assert "outside the allowlist" in err
    assert (root / "etc/shadow").read_text() == "secret\n"


def test_site_packages_outside_home_and_venvs_is_refused(rmcp, tmp_path):
    root = make_tree(tmp_path)
    (root / "usr/lib/python3/dist-packages").mkdir(parents=True)
    err = patch(rmcp, root, "apply", "--yes", "--site-packages", "/usr/lib/python3/dist-packages",
                "python-spawn-hook", check=2).stderr.decode()
    assert "neither" in err
    # A virtual environment is fine.
    venv = root / "opt/venv"
    (venv / "lib/python3.11/site-packages").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    patch(rmcp, root, "apply", "--yes", "--site-packages", "/opt/venv/lib/python3.11/site-packages",
          "python-spawn-hook", check=0)


def write_patch(dir_, name, text):
    dir_.mkdir(exist_ok=True)
    (dir_ / name).write_text(text)
    return dir_


BASE = 'id = "test-patch"\ntitle = "t"\nwhy = "w"\ncost = "c"\nevidence = "reported"\n'


def test_unknown_module_parameter_names_file_and_line(rmcp, tmp_path):
    d = write_patch(tmp_path / "p", "x.toml",
                    BASE + '\n[[operation]]\nkind = "modprobe"\nparams = { evil_param = "1" }\n')
    err = rmcp("patch", "--patch-dir", d, "list", check=2).stderr.decode()
    assert f"{d}/x.toml:9" in err and "unknown amdgpu module parameter 'evil_param'" in err


def test_invalid_module_parameter_value_is_refused(rmcp, tmp_path):
    d = write_patch(tmp_path / "p", "x.toml",
                    BASE + '\n[[operation]]\nkind = "modprobe"\n\n[operation.params]\ncwsr_enable = "7"\n')
    err = rmcp("patch", "--patch-dir", d, "list", check=2).stderr.decode()
    assert f"{d}/x.toml:11" in err and "invalid value '7' for amdgpu.cwsr_enable" in err


@pytest.mark.parametrize("text,line", [
    (BASE + "\n[[operation]\n", 7),                                   # TOML syntax
    (BASE + 'colour = "red"\n', 6),                                    # unknown key
    (BASE + '\n[[operation]]\nkind = "shell"\ncommand = "rm -rf /"\n', 7),  # unknown kind
])
def test_malformed_patch_files_name_file_and_line(rmcp, tmp_path, text, line):
    d = write_patch(tmp_path / "p", "bad.toml", text)
    err = rmcp("patch", "--patch-dir", d, "list", check=2).stderr.decode()
    assert f"{d}/bad.toml:{line}" in err, err


def test_apply_without_tty_and_without_yes_is_refused(rmcp, tmp_path):
    root = make_tree(tmp_path)
    before = tree_hash(root)
    err = patch(rmcp, root, "apply", "env-miopen-no-gemm", input=b"y\n", check=2).stderr.decode()
    assert "stdin is not a terminal" in err and "--yes" in err
    assert tree_hash(root) == before


def test_a_second_apply_waits_for_the_lock(rmcp, tmp_path):
    root = make_tree(tmp_path)
    lock_dir = root / "state/rmcp"
    lock_dir.mkdir(parents=True)
    with open(lock_dir / "lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        err = apply(rmcp, root, ["env-miopen-no-gemm"], check=3).stderr.decode()
        assert "another rmcp patch apply or rollback is running" in err
    apply(rmcp, root, ["env-miopen-no-gemm"], check=0)


def test_startup_hook_never_breaks_python(tmp_path):
    """The .pth line with no rmcp package: silent; with a broken one: still silent."""
    import subprocess
    site = tmp_path / "site"
    site.mkdir()
    (site / "rmcp-startup.pth").write_text(_hook_text())
    # -S: no site-packages at start-up, so an rmcp installed system-wide stays out of the way
    # and "no rmcp package" really means none; addsitedir then processes only our .pth.
    code = "import site, sys; site.addsitedir(sys.argv[1]); print('ok')"
    proc = subprocess.run(["/usr/bin/python3", "-S", "-c", code, str(site)], capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin"})
    assert proc.stdout == "ok\n" and proc.stderr == ""
    pkg = tmp_path / "pkgs" / "rmcp"
    (pkg / "torch").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "torch" / "__init__.py").write_text(
        "import os\ndef enable():\n    open(os.environ['MARK'], 'w').write('enabled')\n")
    mark = tmp_path / "mark"
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(tmp_path / "pkgs"), "MARK": str(mark)}
    proc = subprocess.run(["/usr/bin/python3", "-S", "-c", code, str(site)], capture_output=True, text=True, env=env)
    assert proc.stdout == "ok\n" and proc.stderr == "" and mark.read_text() == "enabled"
    mark.unlink()
    proc = subprocess.run(["/usr/bin/python3", "-S", "-c", code, str(site)], capture_output=True, text=True,
                          env={**env, "RMCP_STARTUP_HOOK": "0"})
    assert proc.stdout == "ok\n" and not mark.exists()
    (pkg / "torch" / "__init__.py").write_text("def enable():\n    raise RuntimeError('broken')\n")
    proc = subprocess.run(["/usr/bin/python3", "-S", "-c", code, str(site)], capture_output=True, text=True, env=env)
    assert proc.stdout == "ok\n" and proc.stderr == ""


def _hook_text():
    return _HOOK_CACHE["text"]


_HOOK_CACHE = {}


@pytest.fixture(autouse=True)
def _hook(rmcp, tmp_path_factory):
    if "text" not in _HOOK_CACHE:
        root = make_tree(tmp_path_factory.mktemp("hook"))
        plan = rmcp.json("--root", root, "patch", "plan", "--site-packages", SITE, "python-spawn-hook", env=penv())
        _HOOK_CACHE["text"] = plan["steps"][0]["content"]


GOLDEN_PLANS = [
    ("rx6700xt-gfx1031", "env-override-gfx1030", HOME),
    ("rx7900xtx-gfx1100", "modprobe-cwsr-disable", HOME),
    ("kfd-no-access", "advise-render-group", HOME),
    ("laptop-780m-gfx1103", "python-spawn-hook", "/home/lee"),  # the venv PyTorch detect finds
    ("desktop-igpu-dgpu", "env-hip-visible-dgpu", HOME),
    ("rx7600s-gfx1102-no-override", "env-override-same-family", HOME),  # one family: global 11.0.0
    ("rx9070xt-rocm62", "advise-install-rocm-torch", HOME),
    ("kb-rdna1-no-override", "advise-install-rocm-torch", HOME),  # RDNA1: the command chosen by GPU
]


@pytest.mark.parametrize("fixture,patch_id,home", GOLDEN_PLANS)
def test_golden_plans(rmcp, fixture, patch_id, home):
    """Regenerate with scripts/regen-golden.sh (it sets RMCP_REGEN_GOLDEN=1 here); review the diff."""
    root = FIXTURES / fixture
    if not root.is_dir():
        pytest.skip(f"fixture {fixture} missing")
    out = rmcp("--root", root, "patch", "plan", patch_id, env={"HOME": home}, check=0).stdout.decode()
    golden = GOLDEN / fixture / f"plan-{patch_id}.txt"
    if os.environ.get("RMCP_REGEN_GOLDEN"):
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(out)
    assert out == golden.read_text()


@pytest.mark.parametrize("patch_id", ["env-override-per-node", "env-override-same-family"])
def test_no_override_for_an_igpu_next_to_a_discrete_gpu(rmcp, patch_id):
    """KB audit 2, item 1: gfx1100 + gfx1036 on a ROCm 6.3 wheel used to get
    HSA_OVERRIDE_GFX_VERSION_2=10.3.0, making ROCm run kernels on the iGPU; now nothing needs one."""
    root = FIXTURES / "desktop-igpu-dgpu-hip-visible"
    err = rmcp("--root", root, "patch", "plan", patch_id, env={"HOME": HOME}, check=3).stderr.decode()
    assert "no GPU on this machine needs an override" in err


def test_per_node_override_needs_a_gpu_that_wants_one(rmcp):
    root = FIXTURES / "rx7900xtx-gfx1100"
    if not root.is_dir():
        pytest.skip("fixture missing")
    err = rmcp("--root", root, "patch", "plan", "env-override-per-node", env={"HOME": HOME}, check=3).stderr.decode()
    assert "no GPU on this machine needs an override" in err


def test_per_node_override_is_refused_where_the_runtime_ignores_it(rmcp, tmp_path):
    """libhsakmt reads HSA_OVERRIDE_GFX_VERSION_<node> from ROCm 6.3 on (ROCR-Runtime commit
    84567b64); desktop-igpu-dgpu's torch is 2.3.0+rocm6.0, whose runtime would ignore it. Its dGPU
    made a gfx1102 (outside AMD's list: it needs 11.0.0) next to the gfx1036 iGPU (another family),
    so only a per-node value would do, and the runtime would drop it."""
    root = tmp_path / "desktop-igpu-dgpu"
    shutil.copytree(FIXTURES / "desktop-igpu-dgpu", root, symlinks=True)
    props = root / "sys/class/kfd/kfd/topology/nodes/1/properties"
    props.write_text(props.read_text().replace("gfx_target_version 110000", "gfx_target_version 110002"))
    for patch_id in ("env-override-per-node", "env-override-same-family"):
        err = rmcp("--root", root, "patch", "plan", patch_id, env={"HOME": HOME}, check=3).stderr.decode()
        assert "does not read HSA_OVERRIDE_GFX_VERSION_<node>" in err and "6.0.32830" in err, err


def test_same_family_override_follows_coverage(rmcp, tmp_path):
    """gfx1101 (on AMD's list) with a torch without gfx1101 code needs 11.0.0; with gfx1101 code it
    needs nothing. AMD's list alone would say nothing in both cases."""
    src = FIXTURES / "rx7800xt-gfx1101-override"
    root = tmp_path / "r"
    shutil.copytree(src, root, symlinks=True)
    environ = root / "proc/self/environ"
    environ.write_bytes(b"".join(kv + b"\0" for kv in environ.read_bytes().split(b"\0")
                                 if kv and not kv.startswith(b"HSA_OVERRIDE_GFX_VERSION=")))
    out = rmcp("--root", root, "patch", "plan", "env-override-same-family", env={"HOME": HOME}, check=0).stdout
    assert b"+export HSA_OVERRIDE_GFX_VERSION='11.0.0'" in out
    lib = next(root.glob("home/ivo/venv/lib/python3.12/site-packages/torch/lib/libtorch_hip.so"))
    lib.write_bytes(make_libraries.host_library(["gfx1030", "gfx1100", "gfx1101"]))
    err = rmcp("--root", root, "patch", "plan", "env-override-same-family", env={"HOME": HOME}, check=3).stderr
    assert b"no GPU on this machine needs an override" in err


def test_clean_library_path_keeps_non_rocm_entries(rmcp, tmp_path):
    root = make_tree(tmp_path)
    # detect reads the environment of the machine described by the root (its /proc/self/environ).
    (root / "proc/self").mkdir(parents=True)
    (root / "proc/self/environ").write_bytes(
        b"LD_LIBRARY_PATH=/opt/rocm-6.2/lib:/usr/local/lib:/custom/rocm/lib64:/opt/rocm/lib\0ROCM_PATH=/custom/rocm\0")
    out = patch(rmcp, root, "plan", "env-clean-library-path", check=0).stdout.decode()
    assert "+export LD_LIBRARY_PATH='/usr/local/lib'" in out and "+unset ROCM_PATH" in out


def test_apply_says_how_it_takes_effect_and_how_to_undo(rmcp, tmp_path):
    """Newcomer review, finding 13: after `patch apply` the shell is unchanged; the output says
    how the change reaches programs, then how to undo it, in text and JSON."""
    root = tmp_path / "root"
    shutil.copytree(FIXTURES / "rx6700xt-gfx1031", root, symlinks=True)
    proc = rmcp("--root", root, "patch", "apply", "--yes", "env-override-same-family", env={"HOME": HOME}, check=0)
    lines = proc.stdout.decode().splitlines()
    assert lines[-2] == (f"takes effect: for commands started with `rmcp --root {root} run -- CMD`; in a shell once "
                         f"you run `eval \"$(rmcp --root {root} env)\"` (this shell is unchanged until then)")
    assert lines[-1].startswith(f"undo: rmcp --root {root} patch rollback ")
    doc = json.loads(rmcp("--root", root, "--format", "json", "patch", "apply", "--yes", "env-miopen-no-gemm",
                          env={"HOME": HOME}, check=0).stdout)
    assert doc["undo"] == doc["rollback"] and doc["undo"].startswith(f"rmcp --root {root} patch rollback ")
    assert len(doc["takes_effect"]) == 1 and "run -- CMD" in doc["takes_effect"][0]


def test_the_plan_says_what_the_env_diff_does(rmcp):
    """The summary named the patch's nine unsets while the diff exported the derived value."""
    out = rmcp("--root", FIXTURES / "rx6700xt-gfx1031", "patch", "plan", "env-override-same-family",
               env={"HOME": HOME}, check=0).stdout.decode()
    assert ("profile.env: export HSA_OVERRIDE_GFX_VERSION='10.3.0'; unset HSA_OVERRIDE_GFX_VERSION_0 … "
            "HSA_OVERRIDE_GFX_VERSION_8 (9 variables)") in out
    assert "+export HSA_OVERRIDE_GFX_VERSION='10.3.0'" in out
