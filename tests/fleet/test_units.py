"""The systemd units of packaging/systemd (issue 32, item 2): `systemd-analyze verify` clean,
hardened (`systemd-analyze security` exposure at most what docs/fleet.md records), timers at
boot and every 15 minutes, and installed by `cmake --install` without being enabled."""
import os
import re
import shutil
import subprocess

import pytest

from conftest import BUILD, NFD_DIR, TEXTFILE_DIR, UNITS, rmcp_binary, tool, unit_exec_start

SERVICES = {"rmcp-doctor.service": TEXTFILE_DIR, "rmcp-nfd.service": NFD_DIR}
TIMERS = ["rmcp-doctor.timer", "rmcp-nfd.timer"]
# docs/fleet.md records 1.2 ("OK") for both with systemd 252 (Debian 12); a change that
# loosens the sandbox fails here first.
MAX_EXPOSURE = 1.2


def staged_units(tmp_path):
    """The units with /usr/bin/rmcp replaced by the built binary (verify checks that ExecStart's
    program exists) and MANPATH holding the built man page (verify runs `man` for each
    Documentation=man: link); nothing else changed."""
    for unit in [*SERVICES, *TIMERS]:
        text = (UNITS / unit).read_text()
        (tmp_path / unit).write_text(text.replace("/usr/bin/rmcp", str(rmcp_binary())))
    man = tmp_path / "man" / "man1"
    man.mkdir(parents=True)
    page = BUILD / "shell-files" / "rmcp.1.gz"
    if not page.exists():
        pytest.fail(f"{page} is missing: build the rmcp_shell_files target")
    shutil.copy(page, man / "rmcp.1.gz")
    return {**os.environ, "MANPATH": str(tmp_path / "man"), "SYSTEMD_LOG_COLOR": "0"}


def test_systemd_analyze_verify_is_clean(tmp_path):
    analyze = tool("systemd-analyze", "systemd")
    env = staged_units(tmp_path)
    proc = subprocess.run([analyze, "verify", *[str(tmp_path / u) for u in [*SERVICES, *TIMERS]]], env=env,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and not proc.stdout.strip() and not proc.stderr.strip(), proc.stdout + proc.stderr


@pytest.mark.parametrize("service", sorted(SERVICES))
def test_security_exposure(service, tmp_path):
    analyze = tool("systemd-analyze", "systemd")
    env = staged_units(tmp_path)
    proc = subprocess.run([analyze, "security", "--offline=true", "--no-pager", str(tmp_path / service)], env=env,
                          capture_output=True, text=True, timeout=60)
    match = re.search(r"Overall exposure level for \S+: ([0-9.]+)", proc.stdout)
    assert match, proc.stdout + proc.stderr
    assert float(match.group(1)) <= MAX_EXPOSURE, proc.stdout


@pytest.mark.parametrize("service,output_dir", sorted(SERVICES.items()))
def test_service_is_sandboxed_to_its_output_directory(service, output_dir):
    keys = {}
    for line in (UNITS / service).read_text().splitlines():
        if "=" in line and not line.startswith("#"):
            k, v = line.split("=", 1)
            keys.setdefault(k, []).append(v)
    assert keys["ProtectSystem"] == ["strict"]
    assert keys["ReadWritePaths"] == [output_dir]
    assert keys["NoNewPrivileges"] == ["yes"] and keys["PrivateTmp"] == ["yes"]
    assert keys["PrivateNetwork"] == ["yes"] and keys["IPAddressDeny"] == ["any"]
    assert keys["Type"] == ["oneshot"]
    assert "Install" not in (UNITS / service).read_text(), "the timer starts it; the service has no [Install]"
    argv = unit_exec_start(service)
    assert argv[argv.index("-o") + 1].startswith(output_dir + "/")


@pytest.mark.parametrize("timer", TIMERS)
def test_timer_runs_at_boot_and_every_15_minutes(timer):
    text = (UNITS / timer).read_text()
    assert "OnBootSec=" in text and "OnUnitActiveSec=15min" in text
    assert "[Install]\nWantedBy=timers.target" in text


def test_cmake_install_ships_the_units_without_enabling_them():
    """scripts/test.sh installs the build into RMCP_INSTALLED_DESTDIR (cmake --install --prefix
    /usr); outside it this test is skipped."""
    destdir = os.environ.get("RMCP_INSTALLED_DESTDIR")
    if not destdir:
        pytest.skip("RMCP_INSTALLED_DESTDIR is not set (scripts/test.sh sets it)")
    unit_dir = os.path.join(destdir, "usr/lib/systemd/system")
    assert sorted(os.listdir(unit_dir)) == sorted([*SERVICES, *TIMERS])
    for unit in [*SERVICES, *TIMERS]:
        with open(os.path.join(unit_dir, unit)) as installed:
            assert installed.read() == (UNITS / unit).read_text()
    # Enabling would be a symlink under /etc/systemd/system (or a postinst): neither exists.
    assert not os.path.exists(os.path.join(destdir, "etc/systemd"))
