"""`rmcp explain`: the corpus in tests/logs, exit codes, stdin, the kernel log, JSON."""
import gzip
import json
import os
import pathlib
import stat
import tomllib

import pytest

from conftest import REPO, FIXTURES

LOGS = REPO / "tests" / "logs"
MANIFEST = tomllib.loads((LOGS / "EXPECTED.toml").read_text())["log"]


def corpus_files():
    return sorted(p.name for p in LOGS.iterdir() if p.name.endswith((".log", ".log.gz")))


def kb_entries():
    out = {}
    for path in sorted((REPO / "kb").glob("*.toml")):
        entry = tomllib.loads(path.read_text())
        out[entry["id"]] = entry
    return out


def explain_json(rmcp, *args, check=None, **kw):
    proc = rmcp("--format", "json", "explain", "--no-facts", *args, check=check, **kw)
    return proc, json.loads(proc.stdout)


def occurrence_lines(problem):
    return {o["line"] for o in problem["occurrences"]}


def test_every_corpus_log_is_in_the_manifest():
    assert sorted(l["file"] for l in MANIFEST) == corpus_files()


@pytest.mark.parametrize("log", MANIFEST, ids=lambda l: l["file"])
def test_corpus_log_gives_expected_entries_categories_and_lines(rmcp, log):
    expects = log.get("expect", [])
    proc, out = explain_json(rmcp, LOGS / log["file"])
    assert out["schema_version"] == 2  # 2: `next`, `check`, `fixes` as ids (issue 30)
    if not expects:
        assert proc.returncode == 1, proc.stderr
        assert out["problems"] == []
        return
    assert proc.returncode == 0, proc.stderr
    found = {p["id"]: p for p in out["problems"]}
    for e in expects:
        assert e["id"] in found, (e["id"], sorted(found))
        assert found[e["id"]]["category"] == e["category"]
        assert set(e["lines"]) <= occurrence_lines(found[e["id"]]), (e["lines"], occurrence_lines(found[e["id"]]))
    # Nothing beyond what the manifest expects: a signature firing on noise is a defect.
    assert set(found) == {e["id"] for e in expects}
    if "first" in log:
        assert out["problems"][0]["id"] == log["first"], [p["id"] for p in out["problems"]]


def real_corpus_files():
    real = REPO / "threads" / "excerpts"
    return sorted(real / p.name for p in real.iterdir() if p.name.endswith(".log")) if real.is_dir() else []


def test_every_kb_signature_matches_some_corpus_line(rmcp):
    # Lines we wrote in the documented formats, and lines copied from public threads
    # (threads/excerpts/): a signature must match at least one of them.
    proc, out = explain_json(rmcp, "--all", *(LOGS / f for f in corpus_files()), *real_corpus_files())
    assert proc.returncode == 0, proc.stderr
    matched = {(p["id"], s["index"]) for p in out["problems"] for s in p["signatures_matched"]}
    missing = []
    for id_, entry in kb_entries().items():
        for i, sig in enumerate(entry.get("signatures", [])):
            if (id_, i) not in matched:
                missing.append(f"{id_} signature {i}: {sig['pattern']}")
    assert not missing, "signatures with no matching line in tests/logs or threads/excerpts:\n" + "\n".join(missing)


def test_every_category_with_signatures_has_a_corpus_log():
    categories = {e["category"] for e in kb_entries().values() if e.get("signatures")}
    covered = {x["category"] for l in MANIFEST for x in l.get("expect", [])}
    real = REPO / "threads" / "threads.toml"
    if real.exists():
        covered |= {t["category"] for t in tomllib.loads(real.read_text())["thread"] if not t.get("clean")}
    assert categories <= covered, categories - covered


def test_text_output_names_entry_location_excerpt_and_fix(rmcp):
    proc = rmcp("explain", "--no-facts", LOGS / "miopen-failure-gemm-bwd-fault.log", check=0)
    text = proc.stdout.decode()
    assert text.startswith("1. rdna2-miopen-gemm-bwd-fault [miopen-failure]")
    assert "miopen-failure-gemm-bwd-fault.log:21" in text
    assert "> 21 | Memory access fault by GPU node-1" in text
    # One vocabulary with doctor (issue 30): the command to run next, severity in capitals;
    # the ranking reasons only under -v.
    assert "next: rmcp patch apply env-miopen-no-gemm\n" in text
    assert "fix: " not in text
    assert "] CRITICAL, " in text
    assert "why here:" not in text
    assert proc.stderr == b""
    verbose = rmcp("-v", "explain", "--no-facts", LOGS / "miopen-failure-gemm-bwd-fault.log", check=0).stdout.decode()
    assert "context 'MIOpen'" in verbose
    assert "why here:" in verbose


def test_next_names_the_root_and_json_uses_next(rmcp):
    log = LOGS / "miopen-failure-gemm-bwd-fault.log"
    root = FIXTURES / "rx6600-gfx1032"
    text = rmcp("--root", root, "explain", log, check=0).stdout.decode()
    assert f"next: rmcp --root {root} patch apply env-miopen-no-gemm\n" in text
    doc = json.loads(rmcp("--root", root, "--format", "json", "explain", log, check=0).stdout)
    first = doc["problems"][0]
    assert first["next"] == f"rmcp --root {root} patch apply env-miopen-no-gemm"
    assert first["fixes"][0] == "env-miopen-no-gemm" and "env-miopen-no-gemm" in first["costs"]
    for problem in doc["problems"]:
        assert "next_step" not in problem
        assert problem["next"] is None or isinstance(problem["next"], str)


def test_crlf_and_ansi_do_not_reach_the_excerpt(rmcp):
    _, out = explain_json(rmcp, LOGS / "gpu-memory-fault-readonly-crlf.log", check=0)
    for p in out["problems"]:
        for o in p["occurrences"]:
            for line in o["excerpt"]:
                assert "\r" not in line["text"] and "\x1b" not in line["text"], line


def test_progress_bar_line_shows_the_last_redraw(rmcp):
    _, out = explain_json(rmcp, LOGS / "miopen-failure-gemm-bwd-fault.log", check=0)
    texts = [l["text"] for o in out["problems"][0]["occurrences"] for l in o["excerpt"]]
    assert all("\r" not in t for t in texts)


def test_facts_from_root_rank_the_entry_that_applies_first(rmcp):
    # An 'invalid device function' log: without facts the RDNA1 entry is a guess; on an RX 5600 XT
    # without an override (kb-rdna1-no-override) it holds, on a 7900 XTX it does not. (Until
    # issue 28 this test used rdna2-miopen-gemm-bwd-fault, which is now driven by the log alone.)
    log = LOGS / "missing-code-object-invalid-device-function.log"
    _, plain = explain_json(rmcp, log, check=0)
    assert plain["facts"] is None
    assert plain["problems"][0].get("applies_here") is None
    proc = rmcp("--root", FIXTURES / "kb-rdna1-no-override", "--format", "json", "explain", log, check=0)
    ranked = json.loads(proc.stdout)
    assert ranked["facts"].startswith("--root ")
    assert ranked["problems"][0]["id"] == "rdna1-official-wheels", [p["id"] for p in ranked["problems"]]
    assert ranked["problems"][0]["applies_here"] is True
    assert "hold on this machine" in ranked["problems"][0]["reason"]
    other = json.loads(rmcp("--root", FIXTURES / "rx7900xtx-healthy", "--format", "json", "explain", log,
                            check=0).stdout)
    assert {p["id"]: p.get("applies_here") for p in other["problems"]}.get("rdna1-official-wheels") is False


def test_stdin_with_dash_and_without_arguments(rmcp):
    data = (LOGS / "fork-after-init-dataloader.log").read_bytes()
    for args in (["-"], []):
        proc = rmcp("--format", "json", "explain", "--no-facts", *args, input=data, check=0)
        out = json.loads(proc.stdout)
        assert out["inputs"][0]["source"] == "standard input"
        assert out["problems"][0]["id"] == "dataloader-fork-after-init"


def test_gzip_on_stdin(rmcp):
    data = (LOGS / "missing-code-object-no-binary.log.gz").read_bytes()
    proc = rmcp("--format", "json", "explain", "--no-facts", "-", input=data, check=0)
    assert json.loads(proc.stdout)["problems"][0]["category"] == "missing-code-object"


def test_nothing_recognised_is_exit_1(rmcp):
    proc = rmcp("explain", "--no-facts", LOGS / "clean-training-run.log", check=1)
    assert b"No known problem recognised" in proc.stdout


def test_unreadable_log_is_exit_2_with_the_one_message_shape(rmcp, tmp_path):
    missing = tmp_path / "nope.log"
    proc = rmcp("explain", "--no-facts", missing, check=2)
    assert proc.stderr.decode() == f"rmcp: error: reading {missing}: No such file or directory\n"
    # Only the error: a log that was never read is not "no known problem" (newcomer finding 2).
    assert proc.stdout == b""
    proc = rmcp("explain", missing, check=2)  # with facts too
    assert proc.stdout == b""
    proc = rmcp("explain", "--no-facts", tmp_path, check=2)
    assert f"rmcp: error: reading {tmp_path}: Is a directory" in proc.stderr.decode()


def test_unreadable_log_among_good_ones_still_reports_and_exits_2(rmcp, tmp_path):
    proc = rmcp("--format", "json", "explain", "--no-facts", LOGS / "gpu-hang-hw-exception.log",
                tmp_path / "missing.log", check=2)
    assert json.loads(proc.stdout)["problems"][0]["id"] == "gpu-hang-ring-timeout"


def test_corrupt_gzip_is_exit_2(rmcp, tmp_path):
    good = gzip.compress(b"HW Exception by GPU node-1 (Agent handle: 0x1) reason :GPU Hang\n" * 1000)
    bad = tmp_path / "cut.log.gz"
    bad.write_bytes(good[: len(good) // 2])
    proc = rmcp("explain", "--no-facts", bad, check=2)
    assert proc.stderr.decode().startswith(f"rmcp: error: reading {bad}: ")


def test_bad_format_is_usage_error(rmcp):
    rmcp("--format", "nfd", "explain", "--no-facts", LOGS / "clean-kernel-boot.log", check=2)


def write_tool(bindir, name, script):
    path = bindir / name
    path.write_text("#!/bin/sh\n" + script)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


def fake_path(tmp_path, journalctl=None, dmesg=None):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    # Only the fakes (and sh/cat) are on PATH: the host's real journalctl never runs.
    for tool in ("sh", "cat"):
        os.symlink(f"/bin/{tool}", bindir / tool)
    if journalctl is not None:
        write_tool(bindir, "journalctl", journalctl)
    if dmesg is not None:
        write_tool(bindir, "dmesg", dmesg)
    return {"PATH": str(bindir)}


def test_kernel_log_through_fake_journalctl(rmcp, tmp_path):
    log = LOGS / "kernel-driver-fault-gfxhub-page-fault.log"
    env = fake_path(tmp_path, journalctl=f'[ "$*" = "-k -b --no-pager -n 100000" ] || exit 9\ncat "{log}"\n',
                    dmesg="exit 7\n")
    proc = rmcp("--format", "json", "explain", "--no-facts", "--kernel-log", env=env, check=0)
    out = json.loads(proc.stdout)
    assert out["inputs"][0]["source"] == "kernel log (journalctl -k -b)"
    assert out["problems"][0]["id"] == "gfxhub-page-fault"
    assert out["problems"][0]["occurrences"][0]["line"] == 2


def test_kernel_log_falls_back_to_dmesg(rmcp, tmp_path):
    log = LOGS / "device-access-pcie-atomics.log"
    env = fake_path(tmp_path, journalctl='echo "-- No entries --"\n', dmesg=f'cat "{log}"\n')
    proc = rmcp("--format", "json", "explain", "--no-facts", "--kernel-log", env=env, check=0)
    out = json.loads(proc.stdout)
    assert out["inputs"][0]["source"] == "kernel log (dmesg)"
    assert out["problems"][0]["id"] == "pcie-atomics-rejected"


def test_kernel_log_unreadable_is_an_environment_error(rmcp, tmp_path):
    env = fake_path(tmp_path, dmesg='echo "dmesg: read kernel buffer failed: Operation not permitted" >&2\nexit 1\n')
    proc = rmcp("explain", "--no-facts", "--kernel-log", env=env, check=3)
    err = proc.stderr.decode()
    assert err.startswith("rmcp: error: reading the kernel log: ")
    assert "journalctl" in err and "dmesg exited with 1" in err


def test_kernel_log_with_clean_boot_is_exit_1(rmcp, tmp_path):
    env = fake_path(tmp_path, journalctl=f'cat "{LOGS / "clean-kernel-boot.log"}"\n')
    rmcp("explain", "--no-facts", "--kernel-log", env=env, check=1)


def test_json_is_valid_utf8_for_invalid_input(rmcp):
    proc = rmcp("--format", "json", "explain", "--no-facts", LOGS / "out-of-memory-hipmalloc.log", check=0)
    proc.stdout.decode("utf-8")  # raises if the JSON carried raw invalid bytes
    out = json.loads(proc.stdout)
    texts = [l["text"] for o in out["problems"][0]["occurrences"] for l in o["excerpt"]]
    assert any("\ufffd" in t for t in texts)


# Issue 13, seventh round: a pasted report with no failure line. The facts speak only when a
# critical entry holds; then the setting behind it (config-risk) is named first.
MIXED_OLLAMA = """\
level=INFO source=amd_linux.go:389 msg="skipping rocm gfx compatibility check" HSA_OVERRIDE_GFX_VERSION=10.3.0
level=INFO source=types.go:130 msg="inference compute" id=0 library=rocm compute=gfx1010 name=1002:731f total="8.0 GiB"
level=INFO source=types.go:130 msg="inference compute" id=1 library=rocm compute=gfx1030 name=1002:73bf total="16.0 GiB"
"""

# rocminfo under a global override the excerpt does not show: both agents run as gfx1201.
MIXED_ROCMINFO = """\
Agent 2
  Name:                    gfx1201
  Marketing Name:          AMD Radeon AI PRO R9700
Agent 3
  Name:                    gfx1201
  Marketing Name:          Radeon 8060S Graphics
"""

HEALTHY_ROCMINFO = """\
Agent 2
  Name:                    gfx1100
  Marketing Name:          AMD Radeon RX 7900 XTX
"""

SAME_FAMILY_OVERRIDE = """\
export HSA_OVERRIDE_GFX_VERSION=10.3.0
Agent 2
  Name:                    gfx1030
  Marketing Name:          AMD Radeon RX 6700 XT
"""


def test_report_of_a_global_override_on_mixed_gpus_names_the_setting_first(rmcp, tmp_path):
    log = tmp_path / "report.txt"
    log.write_text(MIXED_ROCMINFO)
    _, out = explain_json(rmcp, log, check=0)
    ids = [p["id"] for p in out["problems"]]
    assert ids[0] == "override-global-mixed-gpus", ids
    assert out["problems"][0]["category"] == "config-risk"
    # The cross-family state it causes (gfx1151, on AMD's list, run as gfx1201) is still
    # reported, after it.
    assert "override-on-supported-gpu" in ids[1:], ids


def test_report_of_an_rdna1_card_run_as_gfx1030_without_a_failure_stays_clean(rmcp, tmp_path):
    """KB audit 2, item 2: an RX 5700 run as 10.3.0 is a risk (warning), not a failure for
    certain; a report without a failure line and without a critical state gets no answer."""
    log = tmp_path / "report.txt"
    log.write_text(MIXED_OLLAMA)
    _, out = explain_json(rmcp, log, check=1)
    assert out["problems"] == []


@pytest.mark.parametrize("report", [HEALTHY_ROCMINFO, SAME_FAMILY_OVERRIDE], ids=["healthy", "same-family-override"])
def test_report_without_a_failure_or_a_critical_state_stays_clean(rmcp, tmp_path, report):
    log = tmp_path / "report.txt"
    log.write_text(report)
    _, out = explain_json(rmcp, log, check=1)
    assert out["problems"] == []


# Issue 13, fifteenth round: a report's GPU targets say which GPU is integrated (LLVM's processor
# table), so an iGPU listed next to a discrete GPU raises the visibility entries for the reporter.
IGPU_NEXT_TO_DGPU = """\
RuntimeError: HIP error: invalid device function
$ rocm_agent_enumerator
gfx000
gfx1100
gfx1036
"""


def test_report_with_an_igpu_next_to_a_dgpu_names_the_visibility_risk(rmcp, tmp_path):
    log = tmp_path / "report.txt"
    log.write_text(IGPU_NEXT_TO_DGPU)
    _, out = explain_json(rmcp, log, check=0)
    assert out["facts_source"] == "report"
    assert [g["gfx_target"] for g in out["report_facts"]["gpus"]] == ["gfx1100", "gfx1036"]
    by_id = {p["id"]: p for p in out["problems"]}
    assert out["problems"][0]["id"] == "hip-invalid-device-function"  # the failure the log shows comes first
    assert by_id["igpu-selected"]["facts_only"] is True
    # With the iGPU hidden the setting is no longer a risk.
    log.write_text("export ROCR_VISIBLE_DEVICES=0\n" + IGPU_NEXT_TO_DGPU)
    _, out = explain_json(rmcp, log, check=0)
    assert "igpu-selected" not in {p["id"] for p in out["problems"]}
