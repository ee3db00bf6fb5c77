"""Every command's standard output goes through one checked writer (src/core/util/
standard_output.hpp, docs/security.md "Output"): a failed write is `rmcp: error: writing
standard output: <cause>` and exit 3, never exit 0 with the output lost, never an abort
(round 2's D8: `kb list > /dev/full` aborted with 134, `doctor --format prometheus >
/dev/full` exited 0).

One table of commands (PRINTERS), each run with stdout on /dev/full (ENOSPC) and on a pipe
whose reader is gone (EPIPE, with SIGPIPE at its default action as a shell leaves it). A new
command or format is one row."""
import json
import os
import signal
import subprocess

import pytest

from conftest import FIXTURES, REPO

HEALTHY = FIXTURES / "rx7900xtx-healthy"
FINDINGS = FIXTURES / "desktop-igpu-dgpu"  # doctor exits 1 here: the stdout error must still win
LOG = REPO / "tests" / "logs" / "clean-training-run.log"
PATCH = "env-miopen-no-gemm"
ENTRY = "alloc-conf-invalid"
SAVED_RESULT = "SAVED_RESULT"  # replaced by a saved `probe --format json` result (fixture below)

# (argv, formats): each format is one case; "" means the command's default (text).
PRINTERS = [
    (["--version"], [""]),
    (["--help"], [""]),
    (["help"], [""]),
    (["help", "patch", "apply"], [""]),
    (["help", "--man"], [""]),
    (["completions", "bash"], [""]),
    (["completions", "fish"], [""]),
    (["--root", HEALTHY, "detect"], ["", "json", "nfd"]),
    (["--root", HEALTHY, "doctor"], ["", "json", "prometheus"]),
    (["--root", FINDINGS, "doctor"], ["", "json", "prometheus"]),
    (["--root", HEALTHY, "doctor", "-o", "-"], ["", "prometheus"]),
    (["--root", HEALTHY, "explain", "--no-facts", LOG], ["", "json"]),
    (["--root", HEALTHY, "scan", HEALTHY], ["", "json"]),
    (["--root", HEALTHY, "env", "--profile", "cpu"], [""]),
    (["--root", HEALTHY, "env", "--profile", "cpu", "--shell", "fish"], [""]),
    (["--root", HEALTHY, "env", "--profile", "cpu", "--shell", "dotenv"], [""]),
    (["patch", "list"], ["", "json"]),
    (["patch", "show", PATCH], ["", "json"]),
    (["--root", HEALTHY, "patch", "plan", PATCH], ["", "json"]),
    (["--root", HEALTHY, "patch", "status"], ["", "json"]),
    (["kb", "list"], ["", "json"]),
    (["kb", "show", ENTRY], ["", "json"]),
    (["kb", "lint"], ["", "json"]),
    (["--root", HEALTHY, "snapshot", "--list"], ["", "json"]),
    (["--root", HEALTHY, "snapshot", "-o", "-"], [""]),
    (["--root", HEALTHY, "run", "--dry-run", "--", "true"], ["", "json"]),
    (["probe", "report", SAVED_RESULT], ["", "json"]),
]

CASES = [(argv, fmt) for argv, formats in PRINTERS for fmt in formats]


def case_id(case):
    argv, fmt = case
    shown = " ".join(a.name if hasattr(a, "name") and a != HEALTHY else str(a) for a in argv
                     if a not in ("--root", HEALTHY, FINDINGS))
    return f"{shown} [{fmt or 'default'}]" + (" (findings)" if FINDINGS in argv else "")


@pytest.fixture(scope="module")
def saved_result(rmcp, tmp_path_factory):
    """A probe result to print: one tiny CPU probe (about the interpreter's start-up)."""
    where = tmp_path_factory.mktemp("saved-result")
    catalogue = where / "catalogue.toml"
    catalogue.write_text('[[family]]\nname = "tiny"\nop = "conv2d"\ninput = [2, 4, 4]\nweight = [2, 2, 3, 3]\n'
                         'padding = [1, 1]\nbatch = [1]\ndirections = ["forward"]\ndtypes = ["float32"]\n')
    proc = rmcp("probe", "--python", "/usr/bin/python3", "--catalogue", catalogue, "--repeat", "1", "--warmup", "0",
                "--format", "json", timeout=120)
    if proc.returncode == 3:
        pytest.skip(f"SKIPPED VISIBLY: no PyTorch for a probe result: {proc.stderr.decode()[-300:]}")
    assert proc.returncode == 0, proc.stderr
    path = where / "result.json"
    path.write_bytes(proc.stdout)
    return path


def command(rmcp, argv, fmt, request, tmp_path):
    args = [str(a) for a in argv]
    if SAVED_RESULT in args:
        args[args.index(SAVED_RESULT)] = str(request.getfixturevalue("saved_result"))
    full = [str(rmcp.binary), *(["--format", fmt] if fmt else []), *args]
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "NO_COLOR": "1", "RMCP_DATA_DIR": str(REPO),
           "HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / "state"),
           "XDG_CONFIG_HOME": str(tmp_path / "config"), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    return full, env


def check_failure(proc, cause):
    assert proc.returncode >= 0, f"killed by signal {-proc.returncode}: {proc.stderr[-2000:]}"
    assert proc.returncode == 3, (proc.returncode, proc.stderr[-2000:])
    assert f"rmcp: error: writing standard output: {cause}\n".encode() in proc.stderr, proc.stderr[-2000:]
    assert b"terminate called" not in proc.stderr


@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
def test_output_on_a_full_device_is_exit_3(rmcp, request, tmp_path, case):
    full, env = command(rmcp, *case, request, tmp_path)
    with open("/dev/full", "wb") as dev_full:
        proc = subprocess.run(full, env=env, stdout=dev_full, stderr=subprocess.PIPE, timeout=60)
    check_failure(proc, "No space left on device")


@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
def test_output_into_a_closed_pipe_is_exit_3(rmcp, request, tmp_path, case):
    full, env = command(rmcp, *case, request, tmp_path)
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        # restore_signals (the default) gives rmcp SIGPIPE's default action, as a shell does:
        # without the writer's care, the first write would kill it.
        proc = subprocess.run(full, env=env, stdout=write_end, stderr=subprocess.PIPE, timeout=60)
    finally:
        os.close(write_end)
    check_failure(proc, "Broken pipe")


def test_a_failure_code_is_kept_and_the_output_error_still_said(rmcp, tmp_path):
    """A command that already failed (exit 2 here) keeps its code; the lost JSON error object
    is reported on stderr next to the first error."""
    with open("/dev/full", "wb") as dev_full:
        proc = subprocess.run([str(rmcp.binary), "--format", "json", "detect", "--root", "/nonexistent"],
                              stdout=dev_full, stderr=subprocess.PIPE, timeout=60,
                              env={"PATH": "/usr/bin:/bin", "RMCP_DATA_DIR": str(REPO)})
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith(b"rmcp: error: opening root /nonexistent")
    assert b"rmcp: error: writing standard output: No space left on device\n" in proc.stderr


def test_the_same_commands_succeed_on_a_working_stdout(rmcp, request, tmp_path):
    """The table is not a list of commands that fail anyway: with a pipe that is read, each
    prints something and exits 0 or 1 (doctor's findings)."""
    for argv, formats in PRINTERS:
        for fmt in formats:
            full, env = command(rmcp, argv, fmt, request, tmp_path)
            proc = subprocess.run(full, env=env, capture_output=True, timeout=60)
            assert proc.returncode in (0, 1), (full, proc.returncode, proc.stderr[-1000:])
            assert proc.stdout, full
            if fmt == "json":
                json.loads(proc.stdout)


@pytest.mark.parametrize("sink", ["/dev/full", "closed pipe"])
def test_run_says_when_the_childs_output_was_lost(rmcp, tmp_path, sink):
    """`run` relays its child's bytes itself (the writer's one exception, docs/security.md
    "Output"), and checks those writes too: a child that exits 0 after its output was lost
    is not a successful run."""
    argv = [str(rmcp.binary), "--root", str(HEALTHY), "run", "--", "echo", "relayed"]
    env = {"PATH": "/usr/bin:/bin", "RMCP_DATA_DIR": str(REPO), "HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path)}
    if sink == "/dev/full":
        with open("/dev/full", "wb") as out:
            proc = subprocess.run(argv, stdout=out, stderr=subprocess.PIPE, timeout=60, env=env)
        cause = "No space left on device"
    else:
        read_end, write_end = os.pipe()
        os.close(read_end)
        try:
            proc = subprocess.run(argv, stdout=write_end, stderr=subprocess.PIPE, timeout=60, env=env)
        finally:
            os.close(write_end)
        cause = "Broken pipe"
    assert proc.returncode == 3, proc.stderr
    assert f"rmcp: error: relaying the command's output to standard output: {cause}\n".encode() in proc.stderr


def test_run_relays_a_child_into_a_closed_pipe_without_dying(rmcp, tmp_path):
    """`run` relays its child's bytes itself (docs/security.md, "Output": the one exception to the
    writer); a reader that went away is the child's EPIPE/SIGPIPE, as without rmcp, and never
    rmcp's own death by SIGPIPE."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        proc = subprocess.run([str(rmcp.binary), "--root", str(HEALTHY), "run", "--", "sh", "-c",
                               "for i in $(seq 1 2000); do echo line $i; done"],
                              stdout=write_end, stderr=subprocess.PIPE, timeout=60,
                              env={"PATH": "/usr/bin:/bin", "RMCP_DATA_DIR": str(REPO), "HOME": str(tmp_path),
                                   "XDG_STATE_HOME": str(tmp_path)})
    finally:
        os.close(write_end)
    assert proc.returncode != 0, proc.stderr
    assert proc.returncode != -signal.SIGPIPE, "rmcp itself died of SIGPIPE"
