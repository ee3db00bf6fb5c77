"""Text is bytes until it is shown (docs/security.md, "Text from input"): a hostile byte string
(invalid UTF-8, C1 controls raw and UTF-8 encoded, ESC sequences, DEL, a bidi override, NUL
where a file can hold one) put into every kind of input rmcp shows: the values detect reads,
a path and an argument named in an error, a log line explain matches, an environment value.
Every command ends (no abort, no signal), every JSON document parses, and neither stdout nor
stderr carries a control a terminal would act on. Also: commands printed for pasting are
quoted (D16), user profile names are checked (D16), dotenv output is inert (D17), and a long
PYTORCH_HIP_ALLOC_CONF is matched without recursion (D3)."""
import json
import os
import re
import shlex
import shutil
import subprocess

import pytest

from conftest import FIXTURES, write

# ESC sequences (OSC title, CSI clear screen), C1 CSI/OSC/ST as UTF-8, raw C1 bytes, invalid
# UTF-8, DEL and RIGHT-TO-LEFT OVERRIDE; no NUL (arguments and environment values cannot hold one).
HOSTILE = b"X\x1b]0;PWN\x07\x1b[2J\xc2\x9b6n\xc2\x9d0;T\xc2\x9c\x9b\x85\xff\xfe\x7f\xe2\x80\xaeY"
HOSTILE_WITH_NUL = HOSTILE + b"\x00Z"

# What a terminal acts on: C0 but tab and newline, DEL, C1 (U+0080..U+009F), the bidi
# overrides and isolates. The text must also be valid UTF-8 (a raw 0x80..0x9f is a C1 control
# on an 8-bit terminal).
CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f\x80-\x9f\u202a-\u202e\u2066-\u2069]")


def assert_terminal_safe(data, what):
    text = data.decode("utf-8")  # raises on invalid UTF-8 (and so on a raw C1 byte)
    found = CONTROLS.search(text)
    assert found is None, f"{what}: control {found.group()!r} at {found.start()}: {text[max(0, found.start() - 80):found.start() + 40]!r}"


def assert_ended(proc, allowed, what):
    assert proc.returncode >= 0, f"{what}: killed by signal {-proc.returncode}: {proc.stderr[-2000:]!r}"
    assert proc.returncode in allowed, (what, proc.returncode, proc.stderr[-2000:])


def check(proc, allowed, what, json_out=False):
    assert_ended(proc, allowed, what)
    assert_terminal_safe(proc.stdout, f"{what} (stdout)")
    assert_terminal_safe(proc.stderr, f"{what} (stderr)")
    if json_out:
        return json.loads(proc.stdout)
    return None


def arg(data):
    """Bytes as a command-line argument (subprocess encodes str with the file-system encoding)."""
    return os.fsdecode(data)


def hostile_root(tmp_path):
    """A real fixture with the hostile bytes in every value detect reads that a file holds."""
    root = tmp_path / "root"
    shutil.copytree(FIXTURES / "rx6800xt-gfx1030-rocm61", root, symlinks=True)
    write(root / "etc/os-release", b'ID=debian\nVERSION_ID="12"\nPRETTY_NAME="Deb' + HOSTILE_WITH_NUL + b'"\n')
    write(root / "sys/module/amdgpu/version", b"6.7.0" + HOSTILE_WITH_NUL + b"\n")
    write(root / "proc/sys/kernel/osrelease", b"6.8.0-" + HOSTILE + b"\n")
    version_py = root / "home/alex/ml/lib/python3.10/site-packages/torch/version.py"
    write(version_py, b"__version__ = '2.3.0+rocm6.0" + HOSTILE + b"'\nhip = '6.0." + HOSTILE + b"'\n")
    environ = (root / "proc/self/environ").read_bytes()
    environ += b"HIP_VISIBLE_DEVICES=" + HOSTILE + b"\x00HSA_OVERRIDE_GFX_VERSION=" + HOSTILE + b"\x00"
    environ += b"PYTORCH_HIP_ALLOC_CONF=" + HOSTILE + b"\x00"
    write(root / "proc/self/environ", environ)
    (root / os.fsdecode(b"opt/rocm-6.2.0" + HOSTILE)).mkdir(parents=True)
    return root


ENV = {"HOME": "/home/alex", "XDG_STATE_HOME": "/state"}


@pytest.mark.parametrize("args, allowed, json_out", [
    (["detect"], {0}, False),
    (["detect", "--format", "json"], {0}, True),
    (["detect", "--format", "nfd"], {0}, False),
    (["doctor"], {0, 1}, False),
    (["doctor", "--format", "json"], {0, 1}, True),
    (["doctor", "--format", "prometheus"], {0, 1}, False),
    (["doctor", "--profile", "auto"], {0, 1}, False),
    (["doctor", "--fix", "--format", "json"], {0, 1, 2}, True),
    (["env", "--profile", "auto"], {0}, False),
    (["run", "--dry-run", "--profile", "auto", "--", "true"], {0}, False),
    (["run", "--dry-run", "--format", "json", "--", "true"], {0}, True),
    (["scan"], {0, 1}, False),
    (["scan", "--format", "json"], {0, 1}, True),
])
def test_values_detect_reads(rmcp, tmp_path, args, allowed, json_out):
    root = hostile_root(tmp_path)
    doc = check(rmcp("--root", root, *args, env=ENV), allowed, " ".join(args), json_out)
    if args[:3] == ["detect", "--format", "json"]:
        # The value is there, with U+FFFD for what is not UTF-8 and the controls escaped.
        assert "Deb" in json.dumps(doc)


def test_snapshot_of_hostile_values(rmcp, tmp_path):
    """D4: an invalid byte in a value or a directory name detect reads aborted snapshot."""
    root = hostile_root(tmp_path)
    out = tmp_path / "s.tgz"
    check(rmcp("--root", root, "snapshot", "-o", out, env=ENV), {0}, "snapshot")
    listing = check(rmcp("--root", root, "snapshot", "--list", "--format", "json", env=ENV), {0},
                    "snapshot --list", json_out=True)
    assert listing["entries"]
    check(rmcp("--root", root, "snapshot", "--list", env=ENV), {0}, "snapshot --list (text)")
    # The bundle unpacks to a root whose facts.json parses.
    unpacked = tmp_path / "unpacked"
    unpacked.mkdir()
    subprocess.run(["tar", "-xzf", out, "-C", unpacked], check=True)
    for meta in unpacked.rglob("*.json"):
        json.loads(meta.read_bytes())


@pytest.mark.parametrize("args, allowed", [
    (["detect", "--root", arg(b"/nonexistent" + HOSTILE)], {2, 3}),
    (["kb", "show", arg(b"no" + HOSTILE + b"such")], {2}),
    (["patch", "show", arg(b"no" + HOSTILE)], {2}),
    (["patch", "plan", arg(b"no" + HOSTILE)], {2}),
    (["explain", arg(b"/nonexistent/" + HOSTILE + b".log")], {2, 3}),
    (["scan", arg(b"/nonexistent/" + HOSTILE)], {2, 3}),
    (["env", "--profile", arg(b"no" + HOSTILE)], {2}),
    (["doctor", "--profile", arg(b"no" + HOSTILE)], {2}),
    (["run", "--profile", arg(b"no" + HOSTILE), "--dry-run", "--", "true"], {2}),
    (["probe", "report", arg(b"/nonexistent/" + HOSTILE)], {2, 3}),
    (["--kb", arg(b"/nonexistent/" + HOSTILE), "doctor"], {2, 3}),
])
@pytest.mark.parametrize("fmt", ["text", "json"])
def test_paths_and_arguments_in_errors(rmcp, tmp_path, args, allowed, fmt):
    """D11: an error naming a path or argument with invalid UTF-8 aborted under --format json."""
    root = tmp_path / "root"
    write(root / "etc/os-release", "ID=debian\n")
    full = ([] if args[0] == "detect" else ["--root", root]) + ["--format", fmt] + args
    proc = rmcp(*full, env={"HOME": str(tmp_path)})
    check(proc, allowed, " ".join(map(str, args)))
    assert proc.stderr.startswith(b"rmcp: error: ")
    if fmt == "json":
        doc = json.loads(proc.stdout)
        assert doc["error"]["exit_code"] == proc.returncode
        assert "\ufffd" in json.dumps(doc, ensure_ascii=False) or "\\ufffd" in json.dumps(doc)


FAULT = (b"Memory access fault by GPU node-1 (Agent handle: 0x1) on address 0x7f. Reason: Page not present or "
         b"supervisor privilege. ")


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_log_lines_explain_matches(rmcp, tmp_path, fmt):
    """D18: C1 controls as UTF-8 in a matched line reached the terminal raw."""
    log = write(tmp_path / "c1.log", b"before " + HOSTILE_WITH_NUL + b"\n" + FAULT + HOSTILE_WITH_NUL + b"\n"
                + b"after \x1b[31m" + HOSTILE + b"\n")
    proc = rmcp("explain", "--no-facts", "--format", fmt, log, env={"HOME": str(tmp_path),
                                                                       "XDG_CACHE_HOME": str(tmp_path)})
    doc = check(proc, {0}, f"explain {fmt}", json_out=fmt == "json")
    if doc is not None:
        assert doc["recognised"] >= 1 and doc["problems"]
    else:
        assert b"Memory access fault" in proc.stdout


def test_run_notes_on_a_hostile_child(rmcp, tmp_path):
    """run relays the child's bytes as they are (they are the child's output), but its own
    notes about what it recognised go through the terminal-safe path."""
    script = write(tmp_path / "child.sh", b"#!/bin/sh\nprintf '%s\\n' '" + FAULT + HOSTILE + b"' >&2\nexit 1\n", 0o755)
    proc = rmcp("run", "--retries", "0", "--", script,
                env={"HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path)})
    assert_ended(proc, {1}, "run")
    notes = b"\n".join(line for line in proc.stderr.split(b"\n") if line.startswith(b"rmcp: "))
    assert notes, proc.stderr
    assert_terminal_safe(notes, "run's notes")


def test_dumped_json_escapes_c1_and_stays_valid(rmcp, tmp_path):
    """The one JSON path escapes what a terminal acts on; the document means the same text."""
    root = hostile_root(tmp_path)
    proc = rmcp("--root", root, "detect", "--format", "json", env=ENV, check=0)
    assert b"\xc2\x9b" not in proc.stdout and b"\x1b" not in proc.stdout and b"\x7f" not in proc.stdout
    facts = json.loads(proc.stdout)
    assert "\u009b" in json.dumps(facts, ensure_ascii=False)  # escaped, not dropped


# ---- D3: the known crash of a backtracking regex ---------------------------------------------------

def alloc_root(tmp_path, value):
    """A root whose torch honours expandable_segments (2.11, a ROCm build) and whose snapshot
    environment holds PYTORCH_HIP_ALLOC_CONF=value."""
    root = tmp_path / "root"
    shutil.copytree(FIXTURES / "rx6800xt-gfx1030-rocm61", root, symlinks=True)
    version_py = root / "home/alex/ml/lib/python3.10/site-packages/torch/version.py"
    write(version_py, "__version__ = '2.11.0+rocm6.4'\nhip = '6.4.43482-0f2d60242'\n")
    environ = [e for e in (root / "proc/self/environ").read_bytes().split(b"\0")
               if e and not e.startswith(b"PYTORCH_HIP_ALLOC_CONF=")]
    environ.append(b"PYTORCH_HIP_ALLOC_CONF=" + value)
    write(root / "proc/self/environ", b"\0".join(environ) + b"\0")
    return root


def findings(rmcp, root, env, *extra):
    proc = rmcp("--root", root, "doctor", "--format", "json", *extra, env=env, timeout=60)
    assert_ended(proc, {0, 1}, "doctor")
    return {f["id"] for f in json.loads(proc.stdout)["findings"]}


MEGABYTE_OF_BLANKS = b" " * (1 << 20)
# profile.env is read up to 1 MiB (Root::read_file's default): just under it.
NEARLY_A_MEGABYTE_OF_BLANKS = b" " * 1_000_000


@pytest.mark.parametrize("tail, holds", [(b"x", False), (b"True", True)])
def test_long_alloc_conf_in_a_snapshot_environ(rmcp, tmp_path, tail, holds):
    root = alloc_root(tmp_path, b"expandable_segments:" + MEGABYTE_OF_BLANKS + tail)
    assert ("alloc-expandable-segments" in findings(rmcp, root, ENV)) == holds
    # the same value through `auto` (env, run --dry-run) and the other formats
    check(rmcp("--root", root, "env", "--profile", "auto", env=ENV), {0}, "env --profile auto")
    check(rmcp("--root", root, "run", "--profile", "auto", "--dry-run", "--", "true", env=ENV), {0}, "run --dry-run")
    check(rmcp("--root", root, "doctor", "--format", "prometheus", env=ENV), {0, 1}, "doctor prometheus")


@pytest.mark.parametrize("tail, holds", [(b"x", False), (b"True", True)])
def test_long_alloc_conf_in_profile_env(rmcp, tmp_path, tail, holds):
    """profile.env is evaluated as the environment `rmcp run` gives the program."""
    root = alloc_root(tmp_path, b"garbage_collection_threshold:0.6")
    write(root / "home/alex/.config/rmcp/profile.env",
          b"export PYTORCH_HIP_ALLOC_CONF='expandable_segments:" + NEARLY_A_MEGABYTE_OF_BLANKS + tail + b"'\n")
    assert ("alloc-expandable-segments" in findings(rmcp, root, ENV)) == holds
    check(rmcp("--root", root, "env", "--profile", "auto", env=ENV), {0}, "env --profile auto")


@pytest.mark.parametrize("tail", [b"x", b"True"])
def test_long_alloc_conf_in_the_live_environment(rmcp, tmp_path, tail):
    # 120 KiB: one environment string may hold at most 128 KiB (MAX_ARG_STRLEN).
    value = "expandable_segments:" + " " * (120 << 10) + tail.decode()
    env = {"HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path), "PYTORCH_HIP_ALLOC_CONF": value}
    for args in (["doctor", "--format", "json"], ["doctor", "--profile", "auto"], ["env", "--profile", "auto"]):
        proc = rmcp(*args, env=env, timeout=60)
        assert_ended(proc, {0, 1}, " ".join(args))
        if "json" in args:
            json.loads(proc.stdout)


# ---- D16: commands for pasting, profile names --------------------------------------------------------

def test_rollback_command_is_quoted_for_a_hostile_root(rmcp, tmp_path):
    marker = tmp_path / "PWNED"
    root = tmp_path / f"r x;$(touch {marker})"
    write(root / "etc/os-release", "ID=debian\n")
    (root / "etc/modprobe.d").mkdir(parents=True)
    write(root / "home/u/.config/rmcp/profile.env", "# mine\n")
    proc = rmcp("--root", root, "patch", "apply", "--yes", "env-miopen-no-gemm", "modprobe-cwsr-disable",
                env={"HOME": "/home/u", "RMCP_ASSUME_UID": "0", "RMCP_TEST_FAIL_STEP": "2",
                     "RMCP_TEST_FAIL_RESTORE": "1"})
    assert proc.returncode == 5, proc.stderr
    line = next(l for l in proc.stderr.decode().splitlines() if "then run: " in l)
    words = shlex.split(line.split("then run: ", 1)[1])
    assert words[:3] == ["rmcp", "--root", str(root)] and words[3:5] == ["patch", "rollback"]
    assert not marker.exists()


@pytest.mark.parametrize("name", ["fix;touch /tmp/PWNED;", "../../etc", "Upper", "a b", "-x", "x" * 65, ""])
def test_user_profile_names_are_checked(rmcp, tmp_path, name):
    root = tmp_path / "root"
    shutil.copytree(FIXTURES / "rx6700xt-gfx1031", root, symlinks=True)
    profile = write(root / "home/sam/.config/rmcp/profiles/x.toml",
                    f'name = "{name}"\nrank = 5\ncost = "x"\ndescription = "d"\n'
                    '[set]\nHSA_OVERRIDE_GFX_VERSION = "10.3.0"\n')
    proc = rmcp("--root", root, "doctor", "--profile", name or "x", env={"HOME": "/home/sam"})
    assert proc.returncode == 2, proc.stderr
    assert f"{profile}:1".encode() in proc.stderr
    assert b"profile name" in proc.stderr or (name == "" and b"'name'" in proc.stderr), proc.stderr
    assert b"next: eval" not in proc.stdout


def test_paste_ready_commands_of_doctor_are_shell_words(rmcp, tmp_path):
    """Every command doctor prints to be pasted (the next steps' "N. command" and "undo:" lines;
    under -v each finding's "next:" and "undo:") parses as shell words with the --root given."""
    marker = tmp_path / "PWNED"
    root = tmp_path / f"r x;`touch {marker}`"
    shutil.copytree(FIXTURES / "rx6700xt-gfx1031", root, symlinks=True)
    nexts = []
    for verbosity in ((), ("-v",)):
        proc = rmcp("--root", root, *verbosity, "doctor", env={"HOME": "/home/sam"})
        assert_ended(proc, {0, 1}, "doctor")
        for line in proc.stdout.decode().splitlines():
            step = re.match(r"^  [0-9]+\. (.*)$", line)
            if step:
                nexts.append(step.group(1))
            for label in ("next: ", "undo: "):
                if line.lstrip().startswith(label):
                    nexts.append(line.split(label, 1)[1])
    assert len(nexts) >= 4, nexts
    for command in nexts:
        words = shlex.split(command)
        if "--root" in words:
            assert words[words.index("--root") + 1] == str(root)
    assert not marker.exists()


def test_env_refuses_a_value_with_terminal_controls(rmcp, tmp_path):
    root = tmp_path / "root"
    write(root / "home/u/.config/rmcp/profile.env", b"X='a\x1b]0;PWN\x07b'\n")
    proc = rmcp("--root", root, "env", env={"HOME": "/home/u"})
    check(proc, {2}, "env with ESC in a value")
    assert b"printing the environment X" in proc.stderr
