"""Shared pieces of the fleet tests (docs/fleet.md, "What was verified where"): the built
binary, the shipped units and deploy files, and the real Debian daemons on loopback.

Every tool these tests need is looked up on PATH; a missing one skips its tests with the
package to install (scripts/setup.sh installs prometheus and prometheus-node-exporter)."""
import os
import pathlib
import shlex
import shutil
import socket
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
# Absolute: RMCP_BUILD_DIR may be relative (build-asan).
BUILD = (REPO / os.environ.get("RMCP_BUILD_DIR", "build")).resolve()
FIXTURES = REPO / "tests" / "fixtures"
UNITS = REPO / "packaging" / "systemd"
DEPLOY = REPO / "deploy"
# Where the units write, as installed (read back from the unit files and checked below).
TEXTFILE_DIR = "/var/lib/prometheus/node-exporter"
NFD_DIR = "/etc/kubernetes/node-feature-discovery/features.d"


def tool(name, package):
    """The tool's path, or the test is skipped naming the Debian package."""
    path = shutil.which(name)
    if not path:
        pytest.skip(f"{name} is not installed (Debian package {package}; scripts/setup.sh installs it)")
    return path


def rmcp_binary():
    binary = BUILD / "rmcp"
    if not binary.exists():
        pytest.fail(f"{binary} is missing: run scripts/setup.sh first")
    return binary


def rmcp_env(home):
    """A predictable environment: the checkout's data, no user state but the test's own."""
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "NO_COLOR": "1", "RMCP_DATA_DIR": str(REPO),
            "HOME": str(home), "XDG_CACHE_HOME": str(pathlib.Path(home) / "cache")}


def unit_exec_start(unit):
    """ExecStart= of a shipped unit file, split as systemd splits it (no quoting is used)."""
    lines = [line for line in (UNITS / unit).read_text().splitlines() if line.startswith("ExecStart=")]
    assert len(lines) == 1, (unit, lines)
    return shlex.split(lines[0].removeprefix("ExecStart="))


def exec_start_for_test(unit, root, output):
    """The unit's ExecStart as a test can run it: the built binary instead of /usr/bin/rmcp,
    `--root ROOT` (rmcp's global option, before the command) and the -o file moved into a
    temporary directory. Every other word is the unit's; what is replaced is checked here."""
    argv = unit_exec_start(unit)
    assert argv[0] == "/usr/bin/rmcp", argv
    out_at = argv.index("-o") + 1
    installed_output = pathlib.PurePosixPath(argv[out_at])
    assert str(installed_output.parent) in (TEXTFILE_DIR, NFD_DIR), argv
    argv[out_at] = str(pathlib.Path(output).parent / installed_output.name) if output is not None else "-"
    return [str(rmcp_binary()), "--root", str(root), *argv[1:]], installed_output.name


def free_port():
    """A port the kernel just handed out on 127.0.0.1 (released for the daemon to bind)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Daemon:
    """A process started for a test, always ended (SIGTERM, then SIGKILL) by stop()."""

    def __init__(self, argv, log):
        self.argv = argv
        self.log_path = log
        self.log = open(log, "wb")
        self.proc = subprocess.Popen(argv, stdout=self.log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                     start_new_session=True)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)
        self.log.close()

    def tail(self):
        return pathlib.Path(self.log_path).read_text(errors="replace")[-3000:]


@pytest.fixture
def daemons():
    """Starts daemons for one test and ends every one of them, whatever the test did."""
    started = []

    def start(argv, log):
        d = Daemon(argv, log)
        started.append(d)
        return d

    yield start
    for d in started:
        d.stop()


def fixture_roots():
    """Every fixture root (tests/fixtures/*, and the healthy zoo under tests/fixtures/healthy)."""
    roots = [p for p in sorted(FIXTURES.iterdir()) if p.is_dir() and not p.name.startswith("__")
             and p.name != "healthy"]
    roots += [p for p in sorted((FIXTURES / "healthy").iterdir()) if p.is_dir()]
    return roots


def shell_words(argv):
    return " ".join(shlex.quote(str(a)) for a in argv)
