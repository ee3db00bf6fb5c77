"""doctor in a real terminal (tmux): colour on, the pager for output longer than the screen,
the terminal's width followed; TERM=dumb, NO_COLOR and LANG=C give plain ASCII.

tmux (Debian's package, installed by scripts/setup.sh) gives rmcp a pseudo-terminal of a
known size; capture-pane -e keeps the escape sequences, so colour can be seen.
"""

import os
import shutil
import subprocess
import time
import uuid

import pytest

from conftest import BUILD, REPO

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed (scripts/setup.sh)")

FIXTURE = "tests/fixtures/desktop-igpu-dgpu"


class Pane:
    def __init__(self, tmp_path, width, height, env):
        self.socket = str(tmp_path / "tmux.sock")
        self.name = "rmcp-" + uuid.uuid4().hex[:8]
        self.env = env
        self.width, self.height = width, height

    def tmux(self, *args, check=True):
        return subprocess.run(["tmux", "-S", self.socket, *args], capture_output=True, text=True, check=check,
                              timeout=20)

    def run(self, command):
        """Starts `command` in a fresh window of the fixed size; the shell is env -i'd to self.env."""
        env_words = " ".join(f"{k}={shlex_quote(v)}" for k, v in self.env.items())
        shell = f"cd {shlex_quote(str(REPO))} && env -i {env_words} {command}; echo __RC=$?; sleep 30"
        self.tmux("-f", "/dev/null", "new-session", "-d", "-s", self.name, "-x", str(self.width), "-y",
                  str(self.height), "sh", "-c", shell)

    def capture(self, escapes=False):
        args = ["capture-pane", "-p", "-t", self.name]
        if escapes:
            args.insert(1, "-e")
        return self.tmux(*args).stdout

    def wait_for(self, text, seconds=15):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            screen = self.capture()
            if text in screen:
                return screen
            time.sleep(0.1)
        raise AssertionError(f"{text!r} never appeared; screen:\n{self.capture()}")

    def close(self):
        self.tmux("kill-server", check=False)


def shlex_quote(s):
    import shlex
    return shlex.quote(s)


def base_env(tmp_path, **extra):
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "TERM": "xterm-256color", "LANG": "C.UTF-8",
           "RMCP_DATA_DIR": str(REPO), "XDG_CACHE_HOME": str(tmp_path / "cache"), "PAGER": "less -FRX"}
    env.update(extra)
    return env


@pytest.fixture
def pane_factory(tmp_path):
    panes = []

    def make(width=80, height=24, **extra):
        p = Pane(tmp_path, width, height, base_env(tmp_path, **extra))
        panes.append(p)
        return p
    yield make
    for p in panes:
        p.close()


def test_colour_and_width_on_a_terminal(pane_factory):
    pane = pane_factory(width=70, height=40)
    pane.run(f"{BUILD}/rmcp --root {FIXTURE} doctor")
    pane.wait_for("__RC=")
    coloured = pane.capture(escapes=True)
    assert "\x1b[" in coloured, "no colour on a terminal"
    plain = pane.capture()
    lines = [l for l in plain.splitlines() if l.strip() and not l.startswith("__RC")]
    # tmux wraps what is wider than the pane; rmcp must not need it: every line fits 70 columns
    # except a command to paste, which is printed whole.
    assert "[✗] GPU 1" in plain
    assert all(len(l) <= 70 for l in lines if not l.startswith("  1. ")), plain


def test_pager_for_output_longer_than_the_screen(pane_factory):
    pane = pane_factory(width=80, height=20)
    pane.run(f"{BUILD}/rmcp --root {FIXTURE} -v doctor")
    # less -FRX stays open on a long page and shows its prompt, ":", on the last line.
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        screen = pane.capture()
        if "__RC=" in screen or screen.rstrip("\n").splitlines()[-1:] == [":"]:
            break
        time.sleep(0.1)
    assert "__RC=" not in screen, "no pager: the page ran past the screen\n" + screen
    assert screen.rstrip("\n").splitlines()[-1] == ":", screen
    pane.tmux("send-keys", "-t", pane.name, "q")
    pane.wait_for("__RC=")


def test_short_output_needs_no_pager(pane_factory):
    pane = pane_factory(width=80, height=50)
    pane.run(f"{BUILD}/rmcp --root {FIXTURE} doctor")
    pane.wait_for("__RC=")


@pytest.mark.parametrize("extra", [{"TERM": "dumb"}, {"NO_COLOR": "1"}, {"LANG": "C"}],
                         ids=["TERM=dumb", "NO_COLOR", "LANG=C"])
def test_plain_terminals_get_plain_ascii(pane_factory, extra):
    pane = pane_factory(width=80, height=60, **extra)
    pane.run(f"{BUILD}/rmcp --root {FIXTURE} doctor")
    pane.wait_for("__RC=")
    screen = pane.capture(escapes=True)
    if "LANG" in extra:
        assert all(ord(c) < 128 for c in screen), screen
        assert "[x] GPU 1" in pane.capture()
    else:
        # TERM=dumb and NO_COLOR turn colour off; the locale still decides the glyphs.
        assert "\x1b[3" not in screen and "\x1b[1m" not in screen, screen
