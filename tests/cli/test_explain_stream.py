"""`rmcp explain -` on a pipe streams (issue 30 item 5, newcomer review finding 4): stdin is
relayed to stdout byte for byte as it arrives, each problem is announced on stderr when its
line is read, the report follows on stderr at the end of input. Files and JSON do not relay."""
import json
import os
import subprocess
import sys
import threading
import time

from conftest import REPO

LOGS = REPO / "tests" / "logs"


def start(rmcp, *args):
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "NO_COLOR": "1", "RMCP_DATA_DIR": str(REPO),
           "XDG_CACHE_HOME": str(rmcp.cache_dir)}
    return subprocess.Popen([str(rmcp.binary), *map(str, args)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env)


class TimedReader:
    """Reads a pipe in a thread; each complete line with the time it arrived."""

    def __init__(self, pipe):
        self.lines = []
        self.raw = b""
        self._pipe = pipe
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        pending = b""
        while True:
            chunk = os.read(self._pipe.fileno(), 65536)
            if not chunk:
                return
            now = time.monotonic()
            self.raw += chunk
            pending += chunk
            while b"\n" in pending:
                line, pending = pending.split(b"\n", 1)
                self.lines.append((now, line))

    def join(self):
        self._thread.join(timeout=30)


def test_each_line_is_relayed_within_100_ms_of_its_arrival(rmcp):
    """The issue's test: `python3 -c '... print(i, flush=True) ... sleep(0.3)' | rmcp explain -`,
    with this test as the writer, so that each line's arrival time is known."""
    proc = start(rmcp, "explain", "-")
    out = TimedReader(proc.stdout)
    sent = []
    for i in range(5):
        sent.append(time.monotonic())
        proc.stdin.write(b"%d\n" % i)
        proc.stdin.flush()
        time.sleep(0.3)
    proc.stdin.close()
    out.join()
    err = proc.stderr.read()
    assert proc.wait(timeout=30) == 1  # nothing recognised
    assert out.raw == b"0\n1\n2\n3\n4\n"
    delays = [arrived - written for written, (arrived, _) in zip(sent, out.lines)]
    assert len(delays) == 5 and max(delays) < 0.1, delays
    # The report is on stderr, after the input ended: stdout is the input and nothing else.
    assert err == b"No known problem recognised in 5 lines (standard input).\n"


def test_the_issue_pipeline_shows_lines_as_they_come(rmcp, tmp_path):
    """The literal pipeline of the issue through a shell: lines come 0.3 s apart, not at the end."""
    script = "import time; [print(i, flush=True) or time.sleep(0.3) for i in range(5)]"
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "NO_COLOR": "1", "RMCP_DATA_DIR": str(REPO),
           "XDG_CACHE_HOME": str(rmcp.cache_dir)}
    proc = subprocess.Popen(["/bin/sh", "-c", f"{sys.executable} -c '{script}' | {rmcp.binary} explain -"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    out = TimedReader(proc.stdout)
    out.join()
    proc.wait(timeout=30)
    assert [line for _, line in out.lines] == [b"0", b"1", b"2", b"3", b"4"]
    gaps = [b[0] - a[0] for a, b in zip(out.lines, out.lines[1:])]
    assert min(gaps) > 0.2, gaps  # each came when it was printed, 0.3 s after the one before


def test_a_problem_is_announced_when_its_line_arrives_and_stdout_stays_byte_exact(rmcp):
    log = (LOGS / "fork-after-init-dataloader.log").read_bytes()
    cut = log.index(b"RuntimeError: Cannot re-initialize CUDA")
    cut = log.index(b"\n", cut) + 1
    proc = start(rmcp, "explain", "--no-facts", "-")
    out = TimedReader(proc.stdout)
    err = TimedReader(proc.stderr)
    proc.stdin.write(log[:cut])
    proc.stdin.flush()
    # The matched line was written and the input is still open: the announcement comes now.
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not any(b"recognised" in line for _, line in err.lines):
        time.sleep(0.02)
    announced = [line for _, line in err.lines]
    assert any(line.startswith(b"rmcp: recognised standard input:22: CRITICAL dataloader-fork-after-init: ")
               for line in announced), announced
    proc.stdin.write(log[cut:])
    proc.stdin.close()
    out.join()
    err.join()
    assert proc.wait(timeout=30) == 0
    assert out.raw == log  # the relay, byte for byte: nothing of rmcp's own on stdout
    report = err.raw.decode()
    assert "1. dataloader-fork-after-init [fork-after-init] CRITICAL" in report
    assert report.count("rmcp: recognised") == 1  # announced once


def test_files_json_and_no_relay_do_not_relay(rmcp, tmp_path):
    log = LOGS / "fork-after-init-dataloader.log"
    data = log.read_bytes()
    # A file: the report on stdout, nothing relayed.
    proc = rmcp("explain", "--no-facts", log, check=0)
    assert proc.stdout.startswith(b"1. dataloader-fork-after-init")
    # A file redirected into stdin is no stream either.
    with open(log, "rb") as f:
        proc = subprocess.run([str(rmcp.binary), "explain", "--no-facts", "-"], stdin=f, capture_output=True,
                              env={"PATH": "/usr/bin:/bin", "NO_COLOR": "1", "RMCP_DATA_DIR": str(REPO),
                                   "XDG_CACHE_HOME": str(rmcp.cache_dir)})
    assert proc.returncode == 0 and proc.stdout.startswith(b"1. dataloader-fork-after-init")
    # A pipe with --no-relay: as before streaming, the report on stdout at the end.
    proc = rmcp("explain", "--no-facts", "--no-relay", "-", input=data, check=0)
    assert proc.stdout.startswith(b"1. dataloader-fork-after-init") and data not in proc.stdout
    # JSON: one document on stdout, never the input.
    proc = rmcp("--format", "json", "explain", "--no-facts", "-", input=data, check=0)
    assert json.loads(proc.stdout)["problems"][0]["id"] == "dataloader-fork-after-init"


def test_a_family_entry_is_not_announced_beside_a_specific_one(rmcp):
    """The same ranking as the summary: on a line a specific entry recognised, its family entry
    (HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION is both) is not announced."""
    line = (b"Memory access fault by GPU node-1 (Agent handle: 0x55d0) on address 0x7f00. Reason: Page not "
            b"present or supervisor privilege.\n:0:rocdevice.cpp :2614: HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION\n")
    proc = rmcp("explain", "--no-facts", "-", input=line + b"Aborted (core dumped)\n")
    # memory-access-fault is a message several causes print (kb: cause_varies): "likely".
    announced = [l for l in proc.stderr.decode().splitlines() if l.startswith(("rmcp: recognised", "rmcp: likely"))]
    assert announced and all("family-" not in l for l in announced), announced
    assert any("memory-access-fault" in l for l in announced), announced


def test_a_relay_that_cannot_write_is_exit_3_and_the_diagnosis_still_comes(rmcp):
    """The relay writes through the one stdout writer (util/standard_output.hpp): a full disk is
    exit 3 with the one message, never a silent success, and the scan goes on."""
    data = (LOGS / "fork-after-init-dataloader.log").read_bytes()
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "NO_COLOR": "1", "RMCP_DATA_DIR": str(REPO),
           "XDG_CACHE_HOME": str(rmcp.cache_dir)}
    with open("/dev/full", "wb") as full:
        proc = subprocess.run([str(rmcp.binary), "explain", "--no-facts", "-"], input=data, stdout=full,
                              stderr=subprocess.PIPE, env=env, timeout=60)
    err = proc.stderr.decode()
    assert proc.returncode == 3, err
    assert "rmcp: error: writing standard output: No space left on device" in err
    assert "1. dataloader-fork-after-init [fork-after-init] CRITICAL" in err


def test_quiet_relays_the_input_and_says_nothing_else(rmcp):
    """-q holds a command's text report (the CLI frame), but the relayed input is the data on
    stdout: it passes, and nothing else is printed; the exit code tells."""
    data = (LOGS / "fork-after-init-dataloader.log").read_bytes()
    proc = rmcp("-q", "explain", "--no-facts", "-", input=data, check=0)
    assert proc.stdout == data and proc.stderr == b""
    # A file under -q: the one summary line.
    proc = rmcp("-q", "explain", "--no-facts", LOGS / "fork-after-init-dataloader.log", check=0)
    assert proc.stdout == b"1 problem recognised: dataloader-fork-after-init\n"
