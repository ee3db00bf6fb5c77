"""The man page is generated from the CLI definitions (ARCHITECTURE.md, principle 9) and kept in sync."""
from conftest import REPO


def test_committed_man_page_matches_the_binary(rmcp):
    generated = rmcp("help", "--man", check=0).stdout.decode()
    assert generated == (REPO / "docs" / "rmcp.1").read_text(), "regenerate: build/rmcp help --man > docs/rmcp.1"


def test_man_page_lists_every_command_and_global_option(rmcp):
    page = rmcp("help", "--man", check=0).stdout.decode()
    for command in ("detect", "doctor", "explain", "scan", "patch", "env", "run", "probe", "snapshot"):
        assert f".SS {command}\n" in page
    for option in (r"\-\-root", r"\-\-format", r"\-\-color", r"\-\-kb"):
        assert option in page
