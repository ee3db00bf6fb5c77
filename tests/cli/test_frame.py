"""The command-line frame every command shares (issue 30, item 4; docs/ux.md).

The commands are not listed here: they come from the binary (`rmcp __complete commands`,
generated from the CLI definitions, with what each one's stdout is under -q). ARGS gives each
command the arguments that make it run on a fixture root; a command without an entry fails
test_every_command_has_arguments, so a new command cannot slip past these checks.

For every command:
  -q   a report prints at most one line (its summary, or nothing), a document (the data asked
       for: a script, help) prints the same as without -q; no note or warning on stderr;
       the same exit code as without -q.
  -v   the same exit code, and every line the plain run prints (-v adds, never hides).
  --format bogus   refused with exit 2 (no command ignores --format).
  --format json    one JSON document with schema_version, rmcp_version and kb_version,
                   whether the command succeeded or not.
"""
import json
import re
import shutil

import pytest

from conftest import FIXTURES, REPO

FIXTURE = FIXTURES / "desktop-igpu-dgpu"
LOG = REPO / "tests" / "logs" / "gpu-hang-hw-exception.log"
PYTHON = "/usr/bin/python3"
CATALOGUE = """
[[family]]
name = "q"
op = "conv1d"
input = [2, 12]
weight = [2, 2, 3]
batch = [1]
directions = ["forward"]
dtypes = ["float32"]
"""

# Each command's arguments; "ROOT" is a writable copy of FIXTURE, "TMP" a scratch directory,
# "RESULT" a saved probe result, "CATALOGUE" a one-scenario probe catalogue.
ARGS = {
    "detect": [],
    "doctor": ["--no-scan"],
    "explain": ["--no-facts", LOG],
    "scan": [FIXTURES / "rx7900xtx-healthy"],
    "patch list": [],
    "patch show": ["env-rocr-visible-dgpu"],
    "patch plan": ["env-rocr-visible-dgpu"],
    "patch apply": ["-y", "env-rocr-visible-dgpu"],
    "patch rollback": [],
    "patch status": [],
    "env": [],
    "run": ["--", "/bin/true"],
    "probe": ["--python", PYTHON, "--catalogue", "CATALOGUE", "--repeat", "1", "--warmup", "0", "--timeout", "20",
              "--device", "cpu"],
    "probe report": ["RESULT"],
    "snapshot": ["-o", "TMP/snap.tar.gz"],
    "kb list": [],
    "kb show": ["rdna2-no-override"],
    "kb render": ["-o", "TMP/kb-pages"],
    "kb lint": [],
    "completions": ["bash"],
    "help": [],
}
# With --format json where the plain arguments print no document: `run` relays its child's
# output and prints JSON only for its plan (--dry-run) or a failure before the child starts.
JSON_ARGS = {"run": ["--dry-run", "--", "/bin/true"]}
# What must have happened before the command runs (on the same ROOT).
SETUP = {"patch rollback": ["patch", "apply", "-y", "env-rocr-visible-dgpu"]}
# Global options a command needs whatever the verbosity (kb render writes markdown only).
FORMAT = {"kb render": "markdown"}


@pytest.fixture(scope="module")
def commands(rmcp):
    out = rmcp("__complete", "commands", check=0).stdout.decode()
    listed = dict(line.split("\t") for line in out.splitlines())
    assert listed and set(listed.values()) <= {"report", "document"}, out
    return listed


@pytest.fixture(scope="module")
def probe_result(rmcp, tmp_path_factory):
    where = tmp_path_factory.mktemp("frame-probe")
    (where / "catalogue.toml").write_text(CATALOGUE)
    proc = rmcp("probe", *[where / "catalogue.toml" if a == "CATALOGUE" else a for a in ARGS["probe"]], "--format",
                "json", check=0, timeout=120)
    (where / "result.json").write_bytes(proc.stdout)
    return where


def invoke(rmcp, tmp_path, probe_result, command, *extra, args=None):
    root = tmp_path / "root"
    if not root.exists():
        shutil.copytree(FIXTURE, root, symlinks=True)
    scratch = tmp_path / "scratch"
    scratch.mkdir(exist_ok=True)

    def word(a):
        a = str(a)
        return (a.replace("TMP", str(scratch)).replace("RESULT", str(probe_result / "result.json"))
                .replace("CATALOGUE", str(probe_result / "catalogue.toml")))

    env = {"HOME": str(tmp_path / "home"), "XDG_STATE_HOME": str(tmp_path / "state"),
           "XDG_CONFIG_HOME": str(tmp_path / "config")}
    fmt = ["--format", FORMAT[command]] if command in FORMAT else []
    if command in SETUP:
        rmcp("--root", root, *SETUP[command], env=env, check=0)
    proc = rmcp("--root", root, *extra, *fmt, *command.split(), *map(word, args or ARGS[command]), env=env,
                timeout=120)
    # Each run has its own directory and transaction: outputs name them TMP and TXN, to compare runs.
    proc.stdout = re.sub(rb"\d{8}T\d{6}\.\d+", b"TXN", proc.stdout.replace(str(tmp_path).encode(), b"TMP"))
    return proc


def test_every_command_has_arguments(commands):
    assert set(commands) == set(ARGS), "give each command its arguments in ARGS"


def test_commands_listed_include_the_main_ones(commands):
    for name in ("detect", "doctor", "explain", "scan", "env", "run", "probe", "snapshot", "kb show", "patch apply"):
        assert name in commands


@pytest.mark.parametrize("command", sorted(ARGS))
def test_quiet_and_verbose_mean_the_same_for_every_command(rmcp, commands, probe_result, tmp_path, command):
    plain = invoke(rmcp, tmp_path / "plain", probe_result, command)
    quiet = invoke(rmcp, tmp_path / "quiet", probe_result, command, "-q")
    verbose = invoke(rmcp, tmp_path / "verbose", probe_result, command, "-v")
    assert plain.returncode in (0, 1), (plain.returncode, plain.stderr[-2000:])
    assert quiet.returncode == plain.returncode == verbose.returncode, (quiet.stderr, verbose.stderr)
    if commands[command] == "document":
        assert quiet.stdout == plain.stdout
    else:
        assert len(quiet.stdout.decode().splitlines()) <= 1, quiet.stdout.decode()
    noise = [line for line in quiet.stderr.decode().splitlines() if line.startswith(("rmcp: note:", "rmcp: warning:"))]
    assert not noise, noise
    # A hint to add -v is what -v replaces ("Details: add -v", doctor).
    missing = {line for line in set(plain.stdout.decode().splitlines()) - set(verbose.stdout.decode().splitlines())
               if "add -v" not in line}
    # A probe's timings differ from run to run; everything else -v shows in full.
    if command != "probe":
        assert not missing, sorted(missing)[:5]


@pytest.mark.parametrize("command", sorted(ARGS))
def test_every_command_checks_format(rmcp, probe_result, tmp_path, command):
    proc = invoke(rmcp, tmp_path, probe_result, command, "--format", "bogus") if command not in FORMAT else None
    if proc is None:
        pytest.skip("kb render takes --format markdown only: checked in test_kb")
    assert proc.returncode == 2, (proc.returncode, proc.stdout[-500:], proc.stderr[-500:])
    assert b"format" in proc.stderr


@pytest.mark.parametrize("command", sorted(ARGS))
def test_every_json_output_is_one_enveloped_document(rmcp, probe_result, tmp_path, command):
    FORMAT_SAVED = FORMAT.pop(command, None)
    try:
        proc = invoke(rmcp, tmp_path, probe_result, command, "--format", "json", args=JSON_ARGS.get(command))
    finally:
        if FORMAT_SAVED:
            FORMAT[command] = FORMAT_SAVED
    doc = json.loads(proc.stdout)
    for key in ("schema_version", "rmcp_version", "kb_version"):
        assert key in doc, (command, key, list(doc))
    if proc.returncode not in (0, 1):
        assert doc["error"]["exit_code"] == proc.returncode


def test_quiet_keeps_errors_on_stderr(rmcp):
    proc = rmcp("-q", "explain", "/nonexistent/log")
    assert proc.returncode == 2 and proc.stdout == b""
    assert b"rmcp: error:" in proc.stderr


def test_quiet_summaries(rmcp, tmp_path):
    out = rmcp("-q", "detect", "--root", FIXTURE, check=0).stdout.decode()
    assert out.startswith("2 AMD GPUs (GPU 0 gfx1100, GPU 1 gfx1036)"), out
    out = rmcp("-q", "doctor", "--root", FIXTURE, "--no-scan").stdout.decode()
    assert out.startswith("rmcp doctor: ") and out.count("\n") == 1, out
    out = rmcp("-q", "scan", FIXTURES / "rx7900xtx-healthy", check=0).stdout.decode()
    assert out.startswith("scanned ") and "with GPU code" in out


def test_json_is_not_held_by_quiet(rmcp):
    doc = json.loads(rmcp("-q", "detect", "--root", FIXTURE, "--format", "json", check=0).stdout)
    assert doc["gpus"]


def test_quiet_and_verbose_together_are_refused(rmcp):
    proc = rmcp("-q", "-v", "detect", "--root", FIXTURE)
    assert proc.returncode == 2 and b"-q and -v" in proc.stderr


# Argument errors (review finding 16): what was meant, and which help to read.
@pytest.mark.parametrize("argv, expected", [
    (["doctr"], ["`doctr` is not a command of `rmcp`", "did you mean doctor?", "Run 'rmcp --help'"]),
    (["patch", "bogus"], ["`bogus` is not a command of `rmcp patch`", "list, show, plan, apply, rollback, status",
                          "Run 'rmcp patch --help'"]),
    (["patch", "aply", "x"], ["did you mean apply?"]),
    (["patch"], ["`rmcp patch` needs a command: list, show", "Run 'rmcp patch --help'"]),
    (["doctor", "--bogus"], ["unknown option --bogus for `rmcp doctor`", "Run 'rmcp doctor --help'"]),
    (["doctor", "--fail-onn", "info"], ["did you mean --fail-on?"]),
    (["--colour", "never", "detect"], ["unknown option --colour", "did you mean --color?"]),
    (["kb", "show"], ["Run 'rmcp kb show --help'"]),
])
def test_argument_errors_say_what_was_meant(rmcp, argv, expected):
    proc = rmcp(*argv)
    err = proc.stderr.decode()
    assert proc.returncode == 2 and proc.stdout == b"", err
    assert err.startswith("rmcp: error: parsing arguments: "), err
    for text in expected:
        assert text in err, (text, err)


def test_rmcp_alone_prints_short_usage_on_stderr(rmcp):
    proc = rmcp()
    assert proc.returncode == 2 and proc.stdout == b""
    err = proc.stderr.decode()
    assert err.startswith("usage: rmcp ") and "doctor" in err and len(err.splitlines()) <= 4, err


def test_error_label_is_coloured_when_colour_is_on(rmcp):
    coloured = rmcp("--color", "always", "explain", "/nonexistent/log").stderr.decode()
    assert "rmcp: \x1b[1m\x1b[31merror:\x1b[0m\x1b[0m " in coloured, repr(coloured)
    plain = rmcp("--color", "never", "explain", "/nonexistent/log").stderr.decode()
    assert plain.startswith("rmcp: error: ") and "\x1b" not in plain
    # A parse error before --color is read, and the colour choice written after the error.
    assert "\x1b[31m" in rmcp("doctr", "--color", "always").stderr.decode()


def test_root_that_is_no_system_tree_warns_once(rmcp, tmp_path):
    proc = rmcp("doctor", "--root", tmp_path, "--no-scan", check=0)
    warnings = [l for l in proc.stderr.decode().splitlines() if l.startswith("rmcp: warning:")]
    assert len(warnings) == 1 and "does not look like a system tree" in warnings[0], warnings
    assert b"system tree" not in rmcp("doctor", "--root", FIXTURE, "--no-scan").stderr


# Terminal: TERM=dumb, NO_COLOR and the locale (review finding 19).
def test_dumb_terminal_and_locale_give_plain_ascii(rmcp):
    utf8 = rmcp("kb", "show", "rdna2-no-override", env={"LANG": "C.UTF-8"}, check=0).stdout.decode()
    ascii_ = rmcp("kb", "show", "rdna2-no-override", env={"LANG": "C", "LC_ALL": "C"}, check=0).stdout.decode()
    assert "—" in utf8 or "→" in utf8
    assert all(g not in ascii_ for g in "✓✗—→…"), ascii_
    assert ascii_ == utf8.replace("—", "--").replace("→", "->").replace("✓", "+").replace("✗", "x").replace("…", "...")


def test_kb_show_follows_columns(rmcp):
    for columns in (60, 100):
        out = rmcp("kb", "show", "rdna2-no-override", env={"COLUMNS": str(columns), "LANG": "C.UTF-8"}, check=0)
        widest = max(len(line) for line in out.stdout.decode().splitlines())
        long_words = [w for line in out.stdout.decode().splitlines() for w in line.split() if len(w) > columns - 8]
        assert widest <= columns or long_words, widest


def test_explain_prose_follows_columns(rmcp, tmp_path):
    """Finding 19: explain's prose (what, basis, cost, check, public threads) wraps to COLUMNS; the
    excerpt (machine output), the rank line and the `next` command (for pasting) stay whole."""
    log = tmp_path / "fault.log"
    log.write_text("Memory access fault by GPU node-1 (Agent handle: 0x55d0c8a0b2c0) on address 0x7f1c2a400000. "
                   "Reason: Page not present or supervisor privilege.\nAborted (core dumped)\n")
    for columns in (60, 100):
        out = rmcp("explain", "--no-facts", log, env={"COLUMNS": str(columns), "LANG": "C.UTF-8"}, check=0)
        lines = out.stdout.decode().splitlines()
        assert any(l.startswith("   what: ") for l in lines), lines
        prose = [l for l in lines if " | " not in l and not l.startswith("   next: ") and not re.match(r"\d+\. ", l)
                 and not l.startswith(("https://", "  https://", "    "))]
        # a label with one long word (a path, a URL) cannot be wrapped
        too_wide = [l for l in prose if len(l) > columns and " " in l.strip().partition(": ")[2].strip()]
        assert not too_wide, (columns, too_wide)


# Help (review finding 18): no CLI11 artefacts, summaries within 80 columns.
def test_help_has_no_cli11_artefacts_and_fits_80_columns(rmcp, commands):
    pages = [rmcp("--help", check=0).stdout.decode()]
    for command in commands:
        pages.append(rmcp(*command.split(), "--help", check=0).stdout.decode())
    for page in pages:
        for artefact in ("Excludes:", ":{", ":INT", "REQUIRED"):
            assert artefact not in page, (artefact, page[:400])
        assert not re.search(r"\bin \[\d", page), page[:400]  # CLI11's ":INT in [1 - 1000]"
    top = pages[0]
    listing = top[top.index("Subcommands:"):top.index("Exit codes:")]
    for line in listing.splitlines():
        assert len(line) <= 80, line


def test_man_page_header_exit_codes_and_examples(rmcp):
    page = rmcp("help", "--man", env={"SOURCE_DATE_EPOCH": "1764288000"}, check=0).stdout.decode()
    version = rmcp("--version", check=0).stdout.decode().split()[1]
    assert page.startswith(f'.TH RMCP 1 "2025-11-28" "rmcp {version}" "User Commands"\n'), page[:200]
    # The exit-code table appears once, unfilled.
    assert page.count("patch apply failed and was rolled back") == 1
    exit_status = page[page.index(".SH EXIT STATUS"):]
    assert exit_status.startswith(".SH EXIT STATUS\n.nf\n")
    # env's sh and fish examples are separate lines.
    env = page[page.index(".SS env"):page.index(".SS run")]
    assert "\n.br\nfish:" in env, env
    assert "/usr/share/doc/rmcp/" in page
