"""Failures are data too: with --format json every failure is one JSON object on stdout,
an unknown --format is a usage error everywhere, doctor's Prometheus output survives the
textfile-collector idiom (docs/exit-codes.md)."""
import json
import re

import pytest

from conftest import FIXTURES

ERROR_KEYS = {"doing", "path", "cause", "exit_code"}


def error_of(proc):
    data = json.loads(proc.stdout)
    assert set(data["error"]) == ERROR_KEYS, data
    assert data["error"]["exit_code"] == proc.returncode
    return data["error"]


FAILING = [
    (["detect", "--root", "/nonexistent"], 2),
    (["doctor", "--root", "/nonexistent"], 2),
    (["scan", "/nonexistent/lib.so"], 2),
    (["env", "--profile", "no-such-profile"], 2),
    (["patch", "show", "no-such-patch"], 2),
    (["snapshot", "--root", "/nonexistent", "-o", "/nonexistent/never.tar.gz"], 2),
    (["detect", "--no-such-flag"], 2),
    (["no-such-command"], 2),
    (["run", "--stall-timeout", "nan", "--", "true"], 2),
    (["explain", "/nonexistent/log.txt"], 2),
]


@pytest.mark.parametrize("args,code", FAILING, ids=[" ".join(a) for a, _ in FAILING])
def test_every_failure_is_one_json_object_on_stdout(rmcp, args, code):
    """`rmcp --format json detect --root /nonexistent` printed nothing on stdout."""
    proc = rmcp("--format", "json", *args)
    assert proc.returncode == code, proc.stderr
    error = error_of(proc)
    assert error["cause"] and error["doing"]
    assert proc.stderr.startswith(b"rmcp: error: ")  # and still the message for people


COMMANDS = [["detect"], ["doctor"], ["scan", "/nonexistent"], ["env", "--profile", "cpu"],
            ["run", "--", "true"], ["snapshot", "-o", "OUT"], ["patch", "list"],
            ["patch", "status"], ["explain", "/dev/null"], ["help"], ["patch", "rollback"]]


@pytest.mark.parametrize("args", COMMANDS, ids=[" ".join(a) for a in COMMANDS])
@pytest.mark.parametrize("fmt", ["bogus", "JSON", ""])
def test_unknown_format_is_a_usage_error_for_every_command(rmcp, tmp_path, args, fmt):
    """`rmcp --format bogus env --profile cpu` exited 0 (also run and snapshot)."""
    args = [str(tmp_path / "never.tar.gz") if a == "OUT" else a for a in args]
    proc = rmcp("--format", fmt, "--root", FIXTURES / "rx6600-gfx1032", *args,
                env={"HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path)})
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert b"format" in proc.stderr
    assert not (tmp_path / "never.tar.gz").exists()


def test_explain_says_why_an_input_is_incomplete(rmcp, tmp_path):
    """explain's JSON marked an unreadable input complete:false without the reason."""
    truncated_gz = tmp_path / "log.gz"
    truncated_gz.write_bytes(b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03" + b"\x01\x02\x03")
    good = tmp_path / "ok.log"
    good.write_text("Memory access fault by GPU node-1 (Agent handle: 0x1) on address 0x7f. "
                    "Reason: Page not present or supervisor privilege.\n")
    proc = rmcp("explain", "--no-facts", "--format", "json", good, truncated_gz)
    assert proc.returncode == 2
    data = json.loads(proc.stdout)
    by_source = {i["source"]: i for i in data["inputs"]}
    assert by_source[str(good)]["complete"] is True and by_source[str(good)]["error"] is None
    bad = by_source[str(truncated_gz)]
    assert bad["complete"] is False and bad["error"], bad
    assert data["error"]["exit_code"] == 2 and data["error"]["path"] == str(truncated_gz)


PROM_LINE = re.compile(r'^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\\n]|\\.)*",?)*\})? -?[0-9.eE+-]+$')


def test_prometheus_output_exits_0_with_critical_findings(rmcp, tmp_path):
    """`doctor --format prometheus > f.tmp && mv f.tmp f.prom` left no file whenever there
    was a critical finding, since doctor exited 1."""
    root = FIXTURES / "desktop-igpu-dgpu"
    proc = rmcp("doctor", "--root", root, "--format", "prometheus")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.decode().splitlines()
    types = {}
    for line in lines:
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split()
            types[name] = kind
        elif not line.startswith("#"):
            assert PROM_LINE.match(line), line
            name = line.split("{")[0].split(" ")[0]
            assert name in types, line
            # A counter's name ends in _total and nothing else does (Prometheus naming).
            assert name.endswith("_total") == (types[name] == "counter"), (name, types[name])
    assert types["rmcp_last_run_timestamp_seconds"] == "gauge"
    stamp = [l for l in lines if l.startswith("rmcp_last_run_timestamp_seconds ")]
    assert len(stamp) == 1 and float(stamp[0].split()[1]) > 1.6e9
    # An explicit --fail-on keeps the old contract.
    assert rmcp("doctor", "--root", root, "--format", "prometheus", "--fail-on", "critical").returncode == 1
    assert rmcp("doctor", "--root", root).returncode == 1  # text: the default still fails on critical
