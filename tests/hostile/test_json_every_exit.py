"""With --format json, every command on every exit path prints exactly one JSON document on
stdout (docs/exit-codes.md, "Errors as data"; docs/security.md, "JSON on every exit path").

Generated: the commands are read from rmcp's own help (a command added later is covered
without touching this file), and each is run on a set of exit paths: its ordinary use on a
fixture root, an unknown option, an unexpected argument, a --root that does not exist, plus
the failing paths listed for it below. Round 2 found `patch rollback` printing text (and
nothing when there was nothing to roll back) and `run -- /missing` printing nothing (D15).

The only stdout that is not rmcp's own: `run` once its child started (its stdout is the
child's; the cases below start none). Text-by-nature output (env's script, completions, help,
the manual page) comes as a string inside the document.
"""
import json
import re
import subprocess

import pytest

from conftest import BUILD, FIXTURES, REPO

FIXTURE = FIXTURES / "rx6600-gfx1032"


def all_commands(binary, prefix=()):
    """Every command and subcommand, from the "Subcommands:" section of each --help. A
    command with subcommands is listed too: run alone, it must still answer in JSON."""
    proc = subprocess.run([str(binary), *prefix, "--help"], capture_output=True, timeout=60,
                          env={"PATH": "/usr/bin:/bin", "NO_COLOR": "1", "RMCP_DATA_DIR": str(REPO)})
    text = proc.stdout.decode(errors="replace")
    names = []
    if "\nSubcommands:\n" in text:
        for line in text.split("\nSubcommands:\n", 1)[1].splitlines():
            if line.startswith("   "):
                continue  # a summary wrapped to 80 columns
            m = re.match(r"^  ([a-z][a-z0-9-]*)\s", line)
            if not m:
                break
            names.append(m.group(1))
    out = [list(prefix)] if prefix else []
    for name in names:
        if name != "help" or not prefix:
            out += all_commands(binary, (*prefix, name))
    return out


# The ordinary use of each command, and its own failing paths (HOME and the state
# directories are a fresh temporary directory; ROOT is a fixture root).
ORDINARY = {
    "detect": [["detect", "--root", "ROOT"]],
    "doctor": [["doctor", "--root", "ROOT"]],
    "scan": [["scan", "/nonexistent/lib.so"], ["scan", "TMP/empty-dir"]],
    "env": [["env", "--profile", "cpu"], ["env", "--profile", "no-such-profile"]],
    "explain": [["explain", "/dev/null"], ["explain", "/nonexistent/log"]],
    "run": [["run", "--dry-run", "--", "true"], ["run", "--", "/nonexistent-command"], ["run"],
            ["run", "--", "TMP"]],
    "snapshot": [["snapshot", "--root", "ROOT", "-o", "TMP/out.tar.gz"], ["snapshot", "--list", "TMP/out.tar.gz"],
                 ["snapshot", "--root", "ROOT", "-o", "/nonexistent/dir/out.tar.gz"]],
    "kb list": [["kb", "list"]],
    "kb show": [["kb", "show", "no-such-entry"]],
    "kb render": [["kb", "render"]],
    "kb lint": [["kb", "lint"]],
    "patch list": [["patch", "list"]],
    "patch show": [["patch", "show", "env-miopen-no-gemm"], ["patch", "show", "no-such-patch"]],
    "patch plan": [["patch", "--root", "ROOT", "plan", "env-miopen-no-gemm"]],
    "patch apply": [["--root", "ROOT_COPY", "patch", "apply", "--yes", "env-miopen-no-gemm"],
                    ["--root", "ROOT_COPY", "patch", "apply", "env-miopen-no-gemm"]],
    "patch rollback": [["--root", "ROOT_COPY", "patch", "rollback"],
                       ["--root", "ROOT_COPY", "patch", "rollback", "20990101T000000.000000000"]],
    "patch status": [["--root", "ROOT_COPY", "patch", "status"]],
    "probe": [["probe", "--python", "/nonexistent/python3"]],
    "probe report": [["probe", "report", "/nonexistent/probe.json"]],
    "completions": [["completions", "bash"], ["completions", "no-such-shell"]],
    "help": [["help"], ["help", "detect"], ["help", "no-such-command"], ["help", "--man"]],
}


def exit_paths():
    binary = BUILD / "rmcp"
    if not binary.exists():
        return [pytest.param(None, None, id="rmcp-not-built")]
    cases = [pytest.param("", [], id="no command")]
    for leaf in all_commands(binary):
        name = " ".join(leaf)
        for args in ORDINARY.get(name, [leaf]):
            cases.append(pytest.param(name, args, id=" ".join(args)))
        cases.append(pytest.param(name, [*leaf, "--no-such-flag"], id=f"{name} --no-such-flag"))
        cases.append(pytest.param(name, [*leaf, "unexpected-argument-xyz"], id=f"{name} unexpected-argument"))
        cases.append(pytest.param(name, ["--root", "/nonexistent", *leaf], id=f"--root /nonexistent {name}"))
    return cases


@pytest.mark.parametrize("name,args", exit_paths())
def test_one_json_document_on_every_exit_path(rmcp, tmp_path, name, args):
    assert name is not None, "rmcp is not built"
    assert len(exit_paths()) > 60  # the commands were found in the help
    (tmp_path / "empty-dir").mkdir()
    root_copy = tmp_path / "root"
    (root_copy / "etc/modprobe.d").mkdir(parents=True)
    (root_copy / "etc/os-release").write_text('ID=debian\nVERSION_ID="12"\n')
    (root_copy / "home/u/.config/rmcp").mkdir(parents=True)
    (root_copy / "home/u/.config/rmcp/profile.env").write_text("# mine\n")
    if name in ("patch rollback", "patch status"):
        rmcp("--root", root_copy, "patch", "apply", "--yes", "env-miopen-no-gemm",
             env={"HOME": "/home/u", "RMCP_ASSUME_UID": "0"}, check=0)
    subst = {"ROOT": str(FIXTURE), "ROOT_COPY": str(root_copy)}
    argv = [subst.get(a, a.replace("TMP", str(tmp_path))) for a in args]
    home = "/home/u" if "ROOT_COPY" in args else str(tmp_path)
    proc = rmcp("--format", "json", *argv, input=b"",
                env={"HOME": home, "XDG_STATE_HOME": str(tmp_path / "state"),
                     "XDG_CACHE_HOME": str(tmp_path / "cache"), "RMCP_ASSUME_UID": "0"})
    what = (argv, proc.returncode, proc.stdout[-2000:], proc.stderr[-2000:])
    assert proc.returncode >= 0, what  # no signal, no abort
    try:
        doc = json.loads(proc.stdout)  # exactly one document: trailing text is an error too
    except ValueError as e:
        pytest.fail(f"not one JSON document on stdout ({e}): {what}")
    assert isinstance(doc, dict), what
    if proc.returncode not in (0, 1):
        assert "error" in doc and doc["error"]["exit_code"] == proc.returncode, what
