"""`rmcp help` and `rmcp completions bash|zsh|fish`, from the same CLI definitions as --help.

The command tree is read from the binary's own --help output (every command, every nested
subcommand, every option), and each completion script must name all of it; bash must
accept the bash script (`bash -n`) and complete with it; zsh and fish check theirs when
they are installed (scripts/setup.sh does not install them).
"""
import re
import shutil
import subprocess

import pytest

from conftest import BUILD, REPO


def section(help_text, title):
    """The first words of the lines of a --help section ("Options:", "Subcommands:")."""
    lines = help_text.split(title + "\n", 1)[1].split("\n\n", 1)[0].splitlines() if title + "\n" in help_text else []
    # Two spaces: an entry; more: its description wrapped to 80 columns.
    return [line.split()[0] for line in lines if line.startswith("  ") and not line.startswith("   ") and line.split()]


def command_tree(rmcp, path=()):
    """{command path: [option names]} for rmcp and every (nested) subcommand, from --help."""
    text = rmcp(*path, "--help", check=0).stdout.decode()
    options = []
    for names in section(text, "Options:"):
        options += [n for n in names.split(",") if n.startswith("-")]
    tree = {path: options}
    for sub in section(text, "Subcommands:"):
        tree.update(command_tree(rmcp, path + (sub,)))
    return tree


@pytest.fixture(scope="module")
def tree(rmcp):
    tree = command_tree(rmcp)
    assert ("patch", "apply") in tree and "--site-packages" in tree[("patch", "apply")]
    assert ("completions",) in tree and "--root" in tree[()]
    return tree


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_every_command_and_option_is_in_the_script(rmcp, tree, shell):
    script = rmcp("completions", shell, check=0).stdout.decode()
    for path, options in tree.items():
        for word in path:
            assert re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", script), (shell, path)
        for option in options:
            name = option.lstrip("-") if shell == "fish" else option
            assert re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", script), (shell, path, option)


def test_bash_accepts_the_script(rmcp, tmp_path):
    script = tmp_path / "rmcp.bash"
    script.write_bytes(rmcp("completions", "bash", check=0).stdout)
    subprocess.run(["bash", "-n", str(script)], check=True)


@pytest.mark.parametrize("shell, check", [("zsh", ["zsh", "-n"]), ("fish", ["fish", "--no-execute"])])
def test_other_shells_accept_their_scripts(rmcp, tmp_path, shell, check):
    if not shutil.which(check[0]):
        pytest.skip(f"{shell} is not installed")
    script = tmp_path / f"rmcp.{shell}"
    script.write_bytes(rmcp("completions", shell, check=0).stdout)
    subprocess.run([*check, str(script)], check=True)


BASH_CASES = [
    (["rmcp", ""], {"detect", "doctor", "patch", "completions", "help"}),
    (["rmcp", "patch", ""], {"list", "show", "plan", "apply", "rollback", "status"}),
    (["rmcp", "patch", "apply", "--s"], {"--site-packages"}),
    (["rmcp", "--root", "/tmp", "doctor", "--fail-on", ""], {"info", "warning", "critical"}),
    (["rmcp", "--color", ""], {"auto", "always", "never"}),
    (["rmcp", "help", "patch", ""], {"list", "apply"}),
    (["rmcp", "completions", ""], {"bash", "zsh", "fish"}),
    (["rmcp", "doctor", "--f"], {"--fail-on", "--format"}),
]


@pytest.mark.parametrize("words, expected", BASH_CASES, ids=lambda v: " ".join(v) if isinstance(v, list) else "")
def test_bash_completes_from_the_definitions(rmcp, tmp_path, words, expected):
    script = tmp_path / "rmcp.bash"
    script.write_bytes(rmcp("completions", "bash", check=0).stdout)
    quoted = " ".join("'" + w + "'" for w in words)
    driver = (f"source {script}\nCOMP_WORDS=({quoted}); COMP_CWORD={len(words) - 1}; COMPREPLY=()\n"
              "_rmcp\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n")
    out = subprocess.run(["bash", "-c", driver], capture_output=True, text=True, check=True).stdout.split()
    assert expected <= set(out), (words, out)
    assert all(w.startswith(words[-1]) for w in out), (words, out)


def bash_complete(rmcp, tmp_path, words):
    script = tmp_path / "rmcp.bash"
    script.write_bytes(rmcp("completions", "bash", check=0).stdout)
    quoted = " ".join("'" + str(w) + "'" for w in words)
    driver = (f"source {script}\nCOMP_WORDS=({quoted}); COMP_CWORD={len(words) - 1}; COMPREPLY=()\n"
              "_rmcp\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n")
    env = {"PATH": "/usr/bin:/bin", "RMCP_DATA_DIR": str(REPO)}
    return subprocess.run(["bash", "-c", driver], capture_output=True, text=True, check=True, env=env).stdout.split()


# Values the binary knows but the definitions do not: completed at TAB time through the
# hidden `rmcp __complete KIND` (review finding 20). words[0] is the binary under test.
DYNAMIC_CASES = [
    (["patch", "apply", "env-"], {"env-rocr-visible-dgpu", "env-override-gfx1030"}),
    (["patch", "show", ""], {"env-unset-override"}),
    (["kb", "show", "rdna2-"], {"rdna2-no-override"}),
    (["env", "--profile", ""], {"default", "miopen-no-gemm", "auto"}),
    (["run", "--profile", "a"], {"auto"}),
    (["--format", ""], {"text", "json", "nfd", "prometheus"}),
    (["probe", "--device", ""], {"auto", "cpu", "cuda"}),
]


@pytest.mark.parametrize("words, expected", DYNAMIC_CASES, ids=lambda v: " ".join(v) if isinstance(v, list) else "")
def test_bash_completes_ids_profiles_and_values(rmcp, tmp_path, words, expected):
    out = bash_complete(rmcp, tmp_path, [BUILD / "rmcp", *words])
    assert expected <= set(out), (words, out)
    assert all(w.startswith(words[-1]) for w in out), (words, out)


def test_complete_lists_what_the_data_holds(rmcp):
    patches = rmcp("__complete", "patches", check=0).stdout.decode().split()
    assert patches == sorted(p.stem for p in (REPO / "patches").glob("*.toml"))
    kb = rmcp("__complete", "kb", check=0).stdout.decode().split()
    assert set(kb) == {e["id"] for e in rmcp.json("kb", "list")["entries"]}


def test_no_option_is_offered_twice(rmcp, tmp_path):
    for words in (["doctor", "--"], ["patch", "apply", "--"], ["kb", "show", "--"]):
        out = bash_complete(rmcp, tmp_path, ["rmcp", *words])
        assert "--help" in out and len(out) == len(set(out)), (words, out)


def test_hidden_complete_command_is_not_in_help_man_or_completion(rmcp):
    assert "__complete" not in rmcp("--help", check=0).stdout.decode()
    assert "__complete" not in rmcp("help", "--man", check=0).stdout.decode().replace("rmcp __complete", "")
    script = rmcp("completions", "bash", check=0).stdout.decode()
    assert "'__complete'" not in script and " __complete)" not in script


def test_completions_needs_a_known_shell(rmcp):
    proc = rmcp("completions", "tcsh", check=2)
    assert b"tcsh" in proc.stderr


# --- rmcp help -----------------------------------------------------------------------------

def test_help_lists_every_command_with_its_summary(rmcp, tree):
    text = rmcp("help", check=0).stdout.decode()
    assert "Usage: rmcp" in text
    commands = [path[0] for path in tree if len(path) == 1]
    listed = {}
    for line in text.split("Subcommands:\n", 1)[1].split("\n\n")[0].splitlines():
        if line.startswith("  ") and not line.startswith("    "):
            name, _, summary = line.strip().partition(" ")
            listed[name] = summary.strip()
        else:  # a summary wrapped to 80 columns continues
            listed[name] += " " + line.strip()
    assert set(commands) <= set(listed), (commands, listed)
    for command in commands:
        # The list shows a description up to its first ';' (80 columns); the rest is on the
        # command's own page.
        summary = rmcp(command, "--help", check=0).stdout.decode().splitlines()[0]
        assert summary.startswith(listed[command].strip()), command
        assert listed[command].strip() == summary.split(";")[0], command


def test_help_of_a_nested_subcommand(rmcp):
    text = rmcp("help", "patch", "apply", check=0).stdout.decode()
    assert text == rmcp("patch", "apply", "--help", check=0).stdout.decode()
    assert "Usage: rmcp patch apply" in text and "--site-packages" in text and "--yes" in text


def test_help_of_an_unknown_command_is_a_usage_error(rmcp):
    proc = rmcp("help", "patch", "frobnicate", check=2)
    assert proc.stderr.decode().startswith("rmcp: error: looking up help for patch frobnicate: no such command")


def test_man_page_has_every_option_of_every_command(rmcp, tree):
    page = rmcp("help", "--man", check=0).stdout.decode()
    for section_name in ("ENVIRONMENT", "FILES", "EXIT STATUS", "EXAMPLES"):
        assert f"\n.SH {section_name}\n" in page
    for path, options in tree.items():
        for option in options:
            if option in ("-h", "--help"):
                continue
            assert option.replace("-", r"\-") in page, (path, option)
        if len(path) == 2:
            assert f".B {path[0]} {path[1]}\n" in page, path


def test_built_completion_files_are_the_binarys(rmcp):
    """The build writes the files it installs (cmake/Install.cmake) with the same binary."""
    for shell, name in (("bash", "bash/rmcp"), ("zsh", "zsh/_rmcp"), ("fish", "fish/rmcp.fish")):
        assert (BUILD / "shell-files" / name).read_bytes() == rmcp("completions", shell, check=0).stdout, shell
