"""`rmcp kb list|show|render|lint`: the knowledge base as documentation and
its checks, run against the shipped kb/ and against small knowledge bases written here."""
import json
import tomllib

import pytest

from conftest import FIXTURES, REPO

KB = REPO / "kb"
DOCS_KB = REPO / "docs" / "kb"


def entries():
    return {p.stem: tomllib.loads(p.read_text()) for p in sorted(KB.glob("*.toml"))}


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


GOOD = '''id = "{id}"
title = "A test entry"
category = "config-risk"
severity = "{severity}"
confidence = "{confidence}"
summary = "First sentence. Second sentence."
references = ["{ref}"]
[applies]
fact = "driver.loaded"
equals = true
[[fixes]]
patch = "{patch}"
cost = "{cost}"
'''


def entry(id_="t", severity="warning", confidence="reported", ref="https://github.com/ROCm/ROCm/issues/1",
          patch="advise-ignore", cost="a reboot"):
    return GOOD.format(id=id_, severity=severity, confidence=confidence, ref=ref, patch=patch, cost=cost)


def test_list_text_and_json(rmcp):
    text = rmcp("kb", "list", check=0).stdout.decode()
    header, *rows = text.splitlines()
    assert header.split() == ["ID", "SEVERITY", "CATEGORY", "CONFIDENCE", "TITLE"]
    assert len(rows) == len(entries())
    data = rmcp.json("kb", "list")
    assert data["schema_version"] == 1
    ids = [e["id"] for e in data["entries"]]
    assert ids == sorted(entries())
    for e in data["entries"]:
        toml = entries()[e["id"]]
        assert e["severity"] == toml["severity"] and e["confidence"] == toml["confidence"]
        assert e["title"] == toml["title"] and e["category"] == toml["category"]
        assert e["fixes"] == [f["patch"] for f in toml.get("fixes", [])]
        assert e["summary_line"] and e["summary_line"] in " ".join(toml["summary"].split())


def test_show_text(rmcp):
    raw = rmcp("kb", "show", "rdna2-no-override", check=0).stdout.decode()
    assert raw.startswith("rdna2-no-override — RDNA2 GPU outside ROCm's list")
    # Wrapped to the output's width (80 here, not a terminal; tests/cli/test_frame.py): the
    # sentences are compared with their line breaks as spaces.
    for line in raw.splitlines():  # a longer line is one word (a URL) that cannot be broken
        assert len(line) <= 80 or " " not in line.strip().removeprefix("- "), line
    out = " ".join(raw.split())
    assert "When doctor reports it:" in out
    assert "`gpu.gfx_target` (the GPU's chip target) is one of gfx1031, gfx1032" in out
    assert "not: `gpu.override` (an HSA_OVERRIDE_GFX_VERSION that applies to this GPU) is known" in out
    assert "/for GPU arch : gfx103[1-5]/" in out
    assert "1. env-override-same-family: gfx1030 kernels run unvalidated" in out
    assert "https://github.com/ROCm/MIOpen/issues/3540" in out
    # Maintainer notes ("Audit item 2 confirmed ...") only with -v (issue 30, item 9).
    assert "otes:" not in out and "audit" not in out.lower()
    assert out.rstrip().endswith("(add -v for maintainer notes)")
    for verbose in (("-v", "kb", "show", "rdna2-no-override"), ("kb", "show", "rdna2-no-override", "--verbose")):
        full = rmcp(*verbose, check=0).stdout.decode()
        assert "Maintainer notes:" in full and "audit" in full.split("Maintainer notes:")[1].lower()
        assert " ".join(full.split()).split("Maintainer notes:")[0] == out.split("defined in")[0]
    log_only = rmcp("kb", "show", "mes-hang", check=0).stdout.decode()
    assert "never from facts: this entry recognises log lines only" in log_only


def test_show_json(rmcp):
    data = rmcp.json("kb", "show", "override-on-supported-gpu")
    toml = entries()["override-on-supported-gpu"]
    assert data["schema_version"] == 1 and data["id"] == "override-on-supported-gpu"
    assert data["references"] == toml["references"]
    assert data["fixes"] == toml["fixes"]
    assert data["applies"][0] == {"depth": 0, "text": "all of:"}
    assert any("cross_family" in line["text"] for line in data["applies"])
    assert "3461" in data["notes"]
    assert data["signatures"][0]["pattern"] == toml["signatures"][0]["pattern"]


def test_show_unknown_id_is_a_usage_error(rmcp):
    proc = rmcp("kb", "show", "no-such-entry")
    assert proc.returncode == 2 and proc.stdout == b""
    assert proc.stderr.decode() == ("rmcp: error: looking up knowledge-base entry no-such-entry: no such entry "
                                    "(see `rmcp kb list`)\n")


@pytest.mark.parametrize("args", [("kb", "list", "--format", "markdown"), ("kb", "render", "-o", "x"),
                                  ("kb", "render", "-o", "x", "--format", "json"), ("kb",), ("kb", "show")])
def test_usage_errors(rmcp, tmp_path, args):
    proc = rmcp(*args)
    assert proc.returncode == 2, (args, proc.stderr)


def test_render_writes_one_page_per_entry_and_an_index(rmcp, tmp_path):
    out = tmp_path / "pages"
    rmcp("kb", "render", "--format", "markdown", "-o", out, check=0)
    names = sorted(p.name for p in out.iterdir())
    assert names == sorted([f"{i}.md" for i in entries()] + ["index.md"])
    index = (out / "index.md").read_text()
    for i in entries():
        assert f"[{i}]({i}.md)" in index
    page = (out / "strix-halo-cwsr.md").read_text()
    assert page.startswith("<!-- Generated by `rmcp kb render")
    assert "## When doctor reports it" in page and "## Fixes" in page and "## Notes" in page
    assert "<https://github.com/ROCm/ROCm/issues/5724>" in page


def test_checked_in_pages_are_in_sync(rmcp, tmp_path):
    """docs/kb/ is regenerated by scripts/render-kb.sh; this fails when kb/ changed without it."""
    out = tmp_path / "pages"
    rmcp("--kb", KB, "kb", "render", "--format", "markdown", "-o", out, check=0)
    fresh = {p.name: p.read_text() for p in out.iterdir()}
    checked_in = {p.name: p.read_text() for p in DOCS_KB.glob("*.md")}
    assert sorted(fresh) == sorted(checked_in), "run scripts/render-kb.sh"
    stale = [n for n in fresh if fresh[n] != checked_in[n]]
    assert not stale, f"run scripts/render-kb.sh: {stale}"


def test_lint_passes_on_the_shipped_knowledge_base(rmcp):
    proc = rmcp("kb", "lint")
    assert proc.returncode == 0, proc.stdout.decode()
    last = proc.stdout.decode().splitlines()[-1]
    assert last.startswith(f"{len(entries())} entries checked, 0 problems; healthy machines: debian-rocm-cpu-torch, "
                           "rx7900xtx-healthy, laptop-780m-healthy")
    data = rmcp.json("kb", "lint")
    assert data["problems"] == [] and data["entries"] == len(entries())
    # The three healthy fixtures, then every tree of the healthy-machine zoo, in name order.
    zoo = sorted(p.name for p in (REPO / "tests" / "fixtures" / "healthy").iterdir() if (p / ".rmcp-meta").is_file())
    assert data["healthy"] == ["debian-rocm-cpu-torch", "rx7900xtx-healthy", "laptop-780m-healthy"] + zoo


@pytest.mark.parametrize("text,check,words", [
    (entry(confidence="vendor-confirmed", ref="https://example.org/blog"), "confidence-source", "vendor reference"),
    (entry(confidence="user-confirmed", ref="https://rocm.docs.amd.com/page.html"), "confidence-source", "thread"),
    (entry(confidence="reported", ref="https://example.org/blog"), "confidence-source", "thread or vendor"),
    (entry(cost="none"), "cost", "says nothing"),
    (entry(patch="no-such-patch"), "patch", "no such patch"),
    # driver.loaded is true on the healthy 7900 XTX: a warning that fires there is a false alarm.
    (entry(severity="warning"), "healthy-fires", "rx7900xtx-healthy"),
    # ROCm's tracker under the search index's name (issue 30, item 9): the address users know is named.
    (entry(ref="https://github.com/ROCm/legacy-rocm-build/issues/4557"), "reference-address",
     "https://github.com/ROCm/ROCm/issues/4557"),
])
def test_lint_finds_each_kind_of_problem(rmcp, tmp_path, text, check, words):
    write(tmp_path / "kb" / "t.toml", text)
    proc = rmcp("--kb", tmp_path / "kb", "kb", "lint", "--format", "json",
                "--healthy", FIXTURES / "rx7900xtx-healthy")
    assert proc.returncode == 1, proc.stderr
    problems = json.loads(proc.stdout)["problems"]
    assert any(p["check"] == check and words in p["message"] and p["entry"] == "t" for p in problems), problems


def test_lint_refuses_the_legacy_rocm_address_in_patches_too(rmcp, tmp_path):
    """The same rule for patches/*.toml: a copy of the shipped patches with one legacy address."""
    patches = tmp_path / "patches"
    patches.mkdir()
    for source in (REPO / "patches").glob("*.toml"):
        (patches / source.name).write_text(source.read_text())
    target = patches / "advise-rocm-packages.toml"
    assert "https://github.com/ROCm/ROCm/issues/6367" in target.read_text()
    target.write_text(target.read_text().replace("https://github.com/ROCm/ROCm/issues/6367",
                                                 "https://github.com/ROCm/legacy-rocm-build/issues/6367"))
    proc = rmcp("kb", "lint", "--format", "json", "--patch-dir", patches, "--healthy", FIXTURES / "rx7900xtx-healthy")
    assert proc.returncode == 1, proc.stderr
    problems = json.loads(proc.stdout)["problems"]
    assert [(p["entry"], p["check"]) for p in problems] == [("advise-rocm-packages", "reference-address")], problems
    assert problems[0]["file"].endswith("advise-rocm-packages.toml")
    assert "https://github.com/ROCm/ROCm/issues/6367" in problems[0]["message"]


def test_no_shipped_file_cites_the_legacy_rocm_address():
    """kb, patches, docs and the corpus reports cite github.com/ROCm/ROCm (lint covers kb and patches;
    this covers the prose and data around them)."""
    stale = [str(p.relative_to(REPO)) for d in ("kb", "patches", "docs", "tests/reports", "tests/golden",
                                                 "tests/transcripts", "tests/fixtures/healthy")
             for p in (REPO / d).rglob("*")
             if p.is_file() and b"github.com/rocm/legacy-rocm-build" in p.read_bytes().lower()]
    assert not stale, stale


def test_lint_accepts_info_on_healthy_machines_and_justified_costs(rmcp, tmp_path):
    write(tmp_path / "kb" / "t.toml", entry(severity="info", cost="none: information only"))
    proc = rmcp("--kb", tmp_path / "kb", "kb", "lint", "--healthy", FIXTURES / "rx7900xtx-healthy")
    assert proc.returncode == 0, proc.stdout


def test_lint_malformed_entry_is_exit_2(rmcp, tmp_path):
    write(tmp_path / "kb" / "t.toml", entry().replace('category = "config-risk"', 'category = "nope"'))
    proc = rmcp("--kb", tmp_path / "kb", "kb", "lint")
    assert proc.returncode == 2 and b"t.toml:3" in proc.stderr


def test_lint_text_names_entry_file_and_check(rmcp, tmp_path):
    write(tmp_path / "kb" / "t.toml", entry(cost="none"))
    out = rmcp("--kb", tmp_path / "kb", "kb", "lint", "--healthy", FIXTURES / "debian-rocm-cpu-torch").stdout.decode()
    assert f"t ({tmp_path / 'kb' / 't.toml'}) [cost]: fix advise-ignore" in out
    assert out.splitlines()[-1] == "1 entries checked, 1 problem; healthy machines: debian-rocm-cpu-torch"


def test_explain_text_shows_each_entrys_summary_line(rmcp):
    # wide enough for one line per label (at the terminal's width the prose wraps: test_frame.py)
    out = rmcp("explain", "--no-facts", REPO / "tests" / "logs" / "gpu-hang-mes.log", check=0,
               env={"COLUMNS": "1000"}).stdout.decode()
    line = next(l for l in out.splitlines() if l.startswith("   what: "))
    assert line == ("   what: On RDNA3 and newer the MES firmware schedules the GPU's queues; when it stops answering, "
                    "the kernel logs 'MES failed to respond to msg=REMOVE_QUEUE' (older kernels: 'MES failed to "
                    "response msg=...'), 'failed to remove hardware queue from MES' and 'MES might be in "
                    "unrecoverable state', then resets the GPU and the process dies.")
    assert out.count("   what: ") == out.count(" [gpu-hang] ")
    data = json.loads(rmcp("--format", "json", "explain", "--no-facts",
                           REPO / "tests" / "logs" / "gpu-hang-mes.log", check=0).stdout)
    assert all(p["summary_line"] for p in data["problems"])
