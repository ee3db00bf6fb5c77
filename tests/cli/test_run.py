"""`rmcp run`: the supervisor (docs/run.md).

The children are test doubles in tests/run_children/ (see its README): shell scripts that
print real-format crash text and die the way real crashes die.
"""
import hashlib
import json
import os
import pathlib
import signal
import subprocess
import sys
import time

import pytest

from conftest import BUILD, REPO

CHILDREN = REPO / "tests" / "run_children"


def child(name):
    return str(CHILDREN / name)


def run_env(tmp_path, extra=None):
    """A predictable environment: reports and profile.env under tmp_path, shipped data."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "NO_COLOR": "1", "RMCP_DATA_DIR": str(REPO),
           "HOME": str(tmp_path / "home"), "XDG_STATE_HOME": str(tmp_path / "state"),
           "XDG_CONFIG_HOME": str(tmp_path / "config")}
    if extra:
        env.update(extra)
    return env


def rmcp_run(tmp_path, *args, env=None, timeout=60, **kw):
    return subprocess.run([str(BUILD / "rmcp"), "run", *map(str, args)], env=run_env(tmp_path, env),
                          capture_output=True, timeout=timeout, **kw)


def incident_files(tmp_path):
    return sorted((tmp_path / "state" / "rmcp" / "incidents").glob("*.json"))


# --- relay -------------------------------------------------------------------------------

def test_exit_zero_relays_output_and_writes_no_report(tmp_path):
    proc = rmcp_run(tmp_path, "--", "sh", "-c", "printf 'hello\\nno newline'; printf 'err' >&2")
    assert proc.returncode == 0
    assert proc.stdout == b"hello\nno newline"
    assert proc.stderr == b"err"
    assert incident_files(tmp_path) == []


@pytest.mark.parametrize("code", [0, 1, 3, 77, 255])
def test_exit_code_is_the_childs(tmp_path, code):
    assert rmcp_run(tmp_path, "--", child("exit_with.sh"), code).returncode == code


def test_command_after_double_dash_keeps_its_own_options_and_separators(tmp_path):
    proc = rmcp_run(tmp_path, "--retries", "0", "--", "printf", "%s|", "-v", "--", "--retries")
    assert proc.returncode == 0
    assert proc.stdout == b"-v|--|--retries|"
    # Without options of its own, the command needs no "--".
    assert rmcp_run(tmp_path, "echo", "plain").stdout == b"plain\n"


def test_no_shell_and_path_lookup(tmp_path):
    # An argument with shell syntax reaches the child as one literal argument.
    proc = rmcp_run(tmp_path, "--", "printf", "%s|", "$(echo x) ; *")
    assert proc.stdout == b"$(echo x) ; *|"


def test_missing_command_is_127_and_a_message(tmp_path):
    proc = rmcp_run(tmp_path, "--", "rmcp-no-such-command-xyz")
    assert proc.returncode == 127
    assert b"rmcp: error: starting rmcp-no-such-command-xyz: No such file or directory" in proc.stderr


def test_no_command_is_a_usage_error(tmp_path):
    proc = rmcp_run(tmp_path)
    assert proc.returncode == 2
    assert b"needs a command" in proc.stderr


def test_pythonunbuffered_set_unless_user_set_it(tmp_path):
    proc = rmcp_run(tmp_path, "--", child("env.sh"), "PYTHONUNBUFFERED")
    assert proc.stdout == b"PYTHONUNBUFFERED=1\n"
    proc = rmcp_run(tmp_path, "--", child("env.sh"), "PYTHONUNBUFFERED", env={"PYTHONUNBUFFERED": ""})
    assert proc.stdout == b"PYTHONUNBUFFERED=\n"


@pytest.fixture(scope="module")
def big_random_file():
    """200 MB of random bytes and their SHA-256."""
    big = pathlib.Path("/tmp") / f"rmcp-run-test-{os.getpid()}.bin"
    digest = hashlib.sha256()
    with open(big, "wb") as f:
        for _ in range(200):
            block = os.urandom(1 << 20)
            digest.update(block)
            f.write(block)
    yield big, digest.hexdigest()
    big.unlink(missing_ok=True)


def test_binary_stream_relayed_byte_identical_on_both_streams(tmp_path, big_random_file):
    """200 MB of random bytes through stdout and stderr at once, to files, plus the log."""
    big, want = big_random_file
    out_path, err_path, log = tmp_path / "out", tmp_path / "err", tmp_path / "run.log"
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        proc = subprocess.run([str(BUILD / "rmcp"), "run", "--log", str(log), "--", child("both_streams.sh"),
                               str(big)], env=run_env(tmp_path), stdout=out, stderr=err, timeout=300)
    assert proc.returncode == 0
    assert hashlib.sha256(out_path.read_bytes()).hexdigest() == want
    assert hashlib.sha256(err_path.read_bytes()).hexdigest() == want
    # The log holds both streams: exactly twice the bytes.
    assert log.stat().st_size == 2 * big.stat().st_size


def test_binary_stream_relayed_byte_identical_to_pipes(tmp_path, big_random_file):
    """The same through pipes, where rmcp relays with tee(2) and reads once for the log."""
    import threading
    big, want = big_random_file
    log = tmp_path / "run.log"
    p = subprocess.Popen([str(BUILD / "rmcp"), "run", "--log", str(log), "--", child("both_streams.sh"), str(big)],
                         env=run_env(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    digests = {}

    def drain(name, stream):
        d = hashlib.sha256()
        while block := stream.read(1 << 20):
            d.update(block)
        digests[name] = d.hexdigest()

    readers = [threading.Thread(target=drain, args=(n, s)) for n, s in (("out", p.stdout), ("err", p.stderr))]
    for t in readers:
        t.start()
    for t in readers:
        t.join(timeout=300)
    assert p.wait(timeout=60) == 0
    assert digests == {"out": want, "err": want}
    assert log.stat().st_size == 2 * big.stat().st_size


def test_log_keeps_chunk_order_and_appends(tmp_path):
    # Order across stdout and stderr holds for chunks the relay has read before the next is
    # written (docs/run.md, "Relay": the order between streams is read order). The child waits
    # until each chunk is in the log before it writes the next, so the test does not depend on
    # how fast the relay is scheduled (fixed sleeps of 0.2 s, then 1 s, both failed under ASan on
    # a loaded 2-core machine); the wait is bounded, so a relay that never writes fails the
    # order check instead of hanging.
    log = tmp_path / "run.log"
    log.write_bytes(b"before\n")
    wait = 'for i in $(seq 600); do grep -qx "{}" "$1" && break; sleep 0.05; done'
    script = "echo one; " + wait.format("one") + "; echo two >&2; " + wait.format("two") + "; echo three"
    proc = rmcp_run(tmp_path, "--log", log, "--", "sh", "-c", script, "sh", str(log))
    assert proc.returncode == 0
    assert log.read_bytes() == b"before\none\ntwo\nthree\n"


def test_reader_gone_gives_the_child_sigpipe(tmp_path):
    # `rmcp run -- yes | head -1`: yes must die as it would without rmcp in between.
    p = subprocess.Popen([str(BUILD / "rmcp"), "run", "--", "yes"], env=run_env(tmp_path),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdout.read(100)
    p.stdout.close()
    assert p.wait(timeout=20) == 128 + signal.SIGPIPE


def test_pty_child_sees_terminals(tmp_path):
    proc = rmcp_run(tmp_path, "--pty", "--", child("tty.sh"))
    assert proc.returncode == 0
    assert proc.stdout == b"stdout-tty\n"   # no "\r\n": the relay stays byte-identical
    assert proc.stderr == b"stderr-tty\n"
    proc = rmcp_run(tmp_path, "--", child("tty.sh"))
    assert proc.stdout == b"stdout-notty\n"


def test_pty_relays_binary_bytes(tmp_path):
    data = bytes(range(256)) * 64
    src = tmp_path / "data.bin"
    src.write_bytes(data)
    proc = rmcp_run(tmp_path, "--pty", "--", "cat", src)
    assert proc.returncode == 0
    assert proc.stdout == data


# --- crashes and reports -------------------------------------------------------------------

def test_gpu_fault_sigabrt_is_134_with_report(tmp_path):
    report = tmp_path / "report.json"
    proc = rmcp_run(tmp_path, "--report", report, "--log", tmp_path / "log", "--", child("gpu_fault.sh"))
    assert proc.returncode == 134
    # Relay first: the partial line reaches stdout unchanged.
    assert proc.stdout == b"epoch 1 step 10 loss 0.693\nepoch 1 step 20 loss 0.412"
    assert b"Memory access fault by GPU node-1" in proc.stderr
    assert b"rmcp: note: attempt 1 (profile default): killed by SIGABRT (exit 134)" in proc.stderr
    assert b"likely memory-access-fault [gpu-memory-fault]" in proc.stderr  # kb: cause_varies
    doc = json.loads(report.read_text())
    assert doc["schema_version"] == 1
    assert doc["classification"] == "gpu-failure"
    assert doc["exit_code"] == 134
    assert doc["command"] == [child("gpu_fault.sh")]
    assert doc["log"] == str(tmp_path / "log")
    [attempt] = doc["attempts"]
    assert attempt["exit"] == {"signal": 6, "signal_name": "SIGABRT", "core_dumped": attempt["exit"]["core_dumped"]}
    assert attempt["exit_code"] == 134
    assert attempt["gpu_failure"] is True
    ids = [m["id"] for m in attempt["matches"]]
    assert "memory-access-fault" in ids
    fault = attempt["matches"][ids.index("memory-access-fault")]
    assert fault["category"] == "gpu-memory-fault"
    assert fault["basis"] == "family"  # a message several causes print (kb: cause_varies; docs/explain.md, "Basis")
    assert fault["stream"] == "stderr"
    assert fault["line"].startswith("Memory access fault by GPU node-1 (Agent handle: 0x55d0c8a0b2c0)")
    assert "Failed to fetch queues snapshot" in attempt["excerpt"]
    assert attempt["bytes"]["stdout"] == len(proc.stdout)
    assert "gpus" in doc["facts"] and "driver" in doc["facts"]
    assert "kernel_log" in doc
    # Similar public reports (issue 31): threads/ records, looked up by the incident's error lines.
    assert doc["similar"], doc["similar"]
    assert all(s["url"].startswith("https://") and 0 < s["similarity"] <= 1 for s in doc["similar"])
    assert "gpu-memory-fault" in {s["category"] for s in doc["similar"]}


def test_a_run_without_incident_carries_no_similar_reports(tmp_path):
    # --report writes a report for every run; similar reports only come with an incident,
    # never on a run that worked (an error word in its output is no failure).
    report = tmp_path / "report.json"
    proc = rmcp_run(tmp_path, "--report", report, "--", "sh", "-c", "echo 'error: none, all fine'")
    assert proc.returncode == 0
    assert json.loads(report.read_text())["similar"] == []


def test_default_report_path_is_under_xdg_state_home(tmp_path):
    proc = rmcp_run(tmp_path, "--", child("gpu_fault.sh"))
    assert proc.returncode == 134
    [path] = incident_files(tmp_path)
    assert f"incident report: {path}".encode() in proc.stderr
    assert json.loads(path.read_text())["attempts"][0]["exit_code"] == 134


def test_plain_traceback_is_returned_as_is(tmp_path):
    proc = rmcp_run(tmp_path, "--retries", 3, "--", child("traceback.sh"))
    assert proc.returncode == 1
    assert b"NameError" in proc.stderr
    assert b"retrying" not in proc.stderr
    assert incident_files(tmp_path) == []


def test_unrecognised_segfault_is_139_without_incident(tmp_path):
    report = tmp_path / "r.json"
    proc = rmcp_run(tmp_path, "--report", report, "--", child("segfault.sh"))
    assert proc.returncode == 139
    assert incident_files(tmp_path) == []
    doc = json.loads(report.read_text())   # --report writes even without an incident
    assert doc["classification"] == "failure"
    assert doc["attempts"][0]["exit"]["signal_name"] == "SIGSEGV"
    assert doc["attempts"][0]["gpu_failure"] is False


def test_kernel_log_lines_come_from_journalctl_on_path(tmp_path):
    # A fake journalctl (test double) on PATH: the process seam for the kernel log.
    bindir = tmp_path / "bin"
    bindir.mkdir()
    fake = bindir / "journalctl"
    fake.write_text("#!/bin/sh\n# test double for journalctl -k\n"
                    "echo \"2026-01-01T00:00:00+0000 host kernel: amdgpu 0000:03:00.0: amdgpu: [gfxhub] page fault"
                    " (src_id:0 ring:24 vmid:8 pasid:32769) args: $*\"\n")
    fake.chmod(0o755)
    report = tmp_path / "r.json"
    proc = rmcp_run(tmp_path, "--report", report, "--", child("gpu_fault.sh"),
                    env={"PATH": f"{bindir}:{os.environ.get('PATH', '/usr/bin:/bin')}"})
    assert proc.returncode == 134
    kl = json.loads(report.read_text())["kernel_log"]
    assert kl["source"] == "journalctl"
    [line] = kl["lines"]
    assert "[gfxhub] page fault" in line
    assert "-k" in line and "--since @" in line


# --- retries ---------------------------------------------------------------------------------

def profile_names():
    import tomllib  # noqa: PLC0415 (python 3.11 on Debian 12)
    profiles = []
    for f in sorted((REPO / "profiles").glob("*.toml")):
        doc = tomllib.loads(f.read_text())
        profiles.append((doc.get("rank", 0), doc["name"], doc.get("hide_gpu", False)))
    return [name for _, name, _ in sorted(profiles)], {name for _, name, hide in profiles if hide}


def test_retry_ladder_climbs_exactly_as_configured(tmp_path):
    ladder, hiding = profile_names()
    seen = tmp_path / "attempts.txt"
    report = tmp_path / "r.json"
    proc = rmcp_run(tmp_path, "--profile", "miopen-no-gemm", "--retries", 2, "--report", report, "--",
                    child("gpu_fault_unless_cpu.sh"), seen)
    assert proc.returncode == 134
    doc = json.loads(report.read_text())
    profiles = [a["profile"] for a in doc["attempts"]]
    start = ladder.index("miopen-no-gemm")
    # On this machine every rung above miopen-no-gemm changes something, so none is skipped.
    assert profiles == ladder[start:start + 3]
    assert not (set(profiles) & hiding)
    assert [a["number"] for a in doc["attempts"]] == [1, 2, 3]
    assert all(a["gpu_failure"] for a in doc["attempts"])
    lines = seen.read_text().splitlines()
    assert len(lines) == 3
    # miopen-conservative adds ConvOclBwdWrW53 to what miopen-no-gemm turns off (MIOpen issue 3540).
    assert "MIOPEN_DEBUG_CONV_GEMM=0" in lines[0] and "MIOPEN_DEBUG_CONV_DIRECT_OCL_WRW53=unset" in lines[0]
    assert "MIOPEN_DEBUG_CONV_DIRECT_OCL_WRW53=0" in lines[1]
    assert proc.stderr.count(b"retrying under profile") == 2


def test_fallback_cpu_makes_the_last_attempt_hide_the_gpu(tmp_path):
    seen = tmp_path / "attempts.txt"
    report = tmp_path / "r.json"
    proc = rmcp_run(tmp_path, "--profile", "miopen-no-gemm", "--retries", 1, "--fallback", "cpu",
                    "--report", report, "--", child("gpu_fault_unless_cpu.sh"), seen)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == b"training on cpu: done\n"
    doc = json.loads(report.read_text())
    assert doc["classification"] == "recovered"
    assert [a["hide_gpu"] for a in doc["attempts"]] == [False, True]
    assert [a["exit_code"] for a in doc["attempts"]] == [134, 0]
    assert seen.read_text().splitlines()[1].endswith("HIP_VISIBLE_DEVICES=")


def test_crash_summary_ranks_like_explain_dedups_and_ends_with_next(tmp_path):
    """Newcomer review, finding 10: the retry note names the specific cause, not a family; the
    summary lists each problem once (families hidden behind the specific entry), quotes the
    line once, and ends with the command to run next and `rmcp explain <incident>`; the
    profile has one name in --dry-run, the retry notes and the summary."""
    proc = rmcp_run(tmp_path, "--retries", 2, "--fallback", "cpu", "--", child("aperture_fault.sh"))
    assert proc.returncode == 134
    notes = [l for l in proc.stderr.decode().splitlines() if l.startswith("rmcp: ")]
    assert notes[0] == ("rmcp: note: attempt 1 under profile default ended with signal 6 (memory-access-fault); "
                        "retrying under profile miopen-no-gemm (attempt 2 of 3)"), notes
    assert "attempt 1 (profile default): killed by SIGABRT (exit 134)" in notes[2]
    assert not any("family-" in l for l in notes), notes
    recognised = [l for l in notes if "recognised" in l or "likely" in l]
    assert recognised == ["rmcp: note: likely memory-access-fault [gpu-memory-fault] in every attempt: "
                          "ROCr: Memory access fault by GPU"], notes
    assert sum("HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION" in l for l in notes) == 1, notes
    incident = incident_files(tmp_path)[0]
    assert notes[-3] == f"rmcp: note: incident report: {incident}"
    assert notes[-2] == "rmcp: note: next: rmcp patch apply env-serialize-kernels"
    assert notes[-1] == f"rmcp: note: more: rmcp explain {incident}"
    # The same name for the same first attempt everywhere.
    plain = rmcp_run(tmp_path, "--dry-run", "--", "true")
    assert plain.stdout.startswith(b"attempt 1: profile default\n")
    single = rmcp_run(tmp_path, "--", child("aperture_fault.sh"))
    assert b"rmcp: note: attempt 1 (profile default): killed by SIGABRT" in single.stderr


def test_a_run_a_retry_saved_names_the_profile_to_start_under(tmp_path):
    seen = tmp_path / "attempts.txt"
    proc = rmcp_run(tmp_path, "--profile", "miopen-no-gemm", "--retries", 1, "--fallback", "cpu", "--",
                    child("gpu_fault_unless_cpu.sh"), seen)
    assert proc.returncode == 0, proc.stderr
    assert (f"rmcp: note: next: rmcp run --profile cpu -- {child('gpu_fault_unless_cpu.sh')} {seen}"
            in proc.stderr.decode()), proc.stderr


def test_unknown_profile_is_a_usage_error(tmp_path):
    proc = rmcp_run(tmp_path, "--profile", "no-such-profile", "--", "true")
    assert proc.returncode == 2
    assert b"rmcp: error: choosing profile no-such-profile: no such profile" in proc.stderr


def test_profile_environment_is_applied(tmp_path):
    proc = rmcp_run(tmp_path, "--profile", "miopen-conservative", "--", child("env.sh"),
                    "MIOPEN_DEBUG_CONV_GEMM", "MIOPEN_DEBUG_CONV_DIRECT_OCL_WRW2")
    assert proc.returncode == 0
    assert proc.stdout == b"MIOPEN_DEBUG_CONV_GEMM=0\nMIOPEN_DEBUG_CONV_DIRECT_OCL_WRW2=0\n"


# --- signals and stalls ----------------------------------------------------------------------

def default_signals():
    # A test run started under nohup (or with SIGINT ignored, as background jobs are) would
    # pass the ignored dispositions on, and an ignored signal is neither forwarded nor trappable.
    for sig in (signal.SIGHUP, signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_DFL)


def start(tmp_path, *args):
    p = subprocess.Popen([str(BUILD / "rmcp"), "run", *map(str, args)], env=run_env(tmp_path),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=default_signals)
    assert p.stdout.readline() == b"ready\n"
    return p


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_signal_is_forwarded_to_the_child(tmp_path, sig):
    seen = tmp_path / "signals"
    p = start(tmp_path, "--", child("signals.sh"), seen)
    p.send_signal(sig)
    assert p.wait(timeout=20) == 42
    assert seen.read_text() == {signal.SIGTERM: "TERM\n", signal.SIGHUP: "HUP\n"}[sig]


def test_second_sigint_kills_the_group(tmp_path):
    seen = tmp_path / "signals"
    p = start(tmp_path, "--retries", 2, "--", child("signals.sh"), seen)
    p.send_signal(signal.SIGINT)
    deadline = time.time() + 10
    while not seen.exists() and time.time() < deadline:
        time.sleep(0.02)
    assert p.poll() is None          # the child ignores one Ctrl-C and keeps running
    p.send_signal(signal.SIGINT)
    assert p.wait(timeout=20) == 128 + signal.SIGKILL
    assert seen.read_text().startswith("INT\n")
    assert b"second interrupt: killing process group" in p.stderr.read()


def test_stall_timeout_stops_a_hang_and_reports_it(tmp_path):
    report = tmp_path / "r.json"
    t0 = time.monotonic()
    proc = rmcp_run(tmp_path, "--stall-timeout", "0.5", "--report", report, "--", child("hang.sh"))
    assert proc.returncode == 128 + signal.SIGTERM
    assert time.monotonic() - t0 < 30
    assert b"suspected GPU hang" in proc.stderr
    doc = json.loads(report.read_text())
    assert doc["classification"] == "stall"
    assert doc["attempts"][0]["stalled"] is True


def test_stall_sigterm_ignored_then_sigkill(tmp_path):
    proc = rmcp_run(tmp_path, "--stall-timeout", "0.3", "--kill-grace", "0.3", "--", child("hang.sh"), "ignore-term")
    assert proc.returncode == 128 + signal.SIGKILL


def test_lingering_grandchild_does_not_hold_rmcp(tmp_path):
    # The child leaves a silent background process holding its stdout: rmcp returns the
    # child's status once the pipe has been quiet for a moment instead of waiting for it.
    t0 = time.monotonic()
    proc = rmcp_run(tmp_path, "--", "sh", "-c", "sleep 30 & echo started; exit 5")
    assert proc.returncode == 5
    assert proc.stdout == b"started\n"
    assert time.monotonic() - t0 < 20
