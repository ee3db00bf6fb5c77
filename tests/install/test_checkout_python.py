"""The checkout's Python package without writing into the system (the newcomer review, finding 25).

scripts/setup.sh writes nothing into a site-packages directory; it removes the rmcp.pth that its
earlier versions wrote (scripts/old-pth.sh), only when that file names this very checkout's
python/ directory. The function runs here on temporary directories.
"""
from install_support import REPO  # first: the shared paths
import subprocess


def remove_old_pth(site, checkout):
    return subprocess.run(["bash", "-c", 'source scripts/old-pth.sh && rmcp_remove_old_pth "$1" "$2"', "-",
                           str(site), str(checkout)], cwd=REPO, capture_output=True, text=True, check=True)


def test_removes_the_pth_an_earlier_setup_wrote(tmp_path):
    (tmp_path / "rmcp.pth").write_text(f"{REPO}/python\n")
    proc = remove_old_pth(tmp_path, REPO)
    assert not (tmp_path / "rmcp.pth").exists()
    assert "removing" in proc.stderr and "rmcp.pth" in proc.stderr


def test_leaves_any_other_pth_alone(tmp_path):
    for content in ("/elsewhere/python\n", f"{REPO}/python\nimport os\n", ""):
        (tmp_path / "rmcp.pth").write_text(content)
        proc = remove_old_pth(tmp_path, REPO)
        assert (tmp_path / "rmcp.pth").read_text() == content and proc.stderr == ""
    (tmp_path / "rmcp.pth").unlink()
    (tmp_path / "other").write_text(f"{REPO}/python\n")
    (tmp_path / "rmcp.pth").symlink_to(tmp_path / "other")  # not a file setup.sh wrote
    remove_old_pth(tmp_path, REPO)
    assert (tmp_path / "rmcp.pth").is_symlink()


def test_nothing_there_is_fine(tmp_path):
    assert remove_old_pth(tmp_path, REPO).stderr == ""


def test_setup_touches_site_packages_only_to_remove_the_old_pth():
    """The class: every command line of setup.sh that names a Python library directory is the removal."""
    lines = [line for line in (REPO / "scripts" / "setup.sh").read_text().splitlines()
             if not line.lstrip().startswith("#") and any(w in line for w in ("purelib", "site-packages",
                                                                               "dist-packages", ".pth"))]
    assert lines and all("rmcp_remove_old_pth" in line for line in lines), lines
