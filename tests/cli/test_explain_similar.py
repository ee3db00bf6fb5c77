"""Issue 31: every explain answer says how sure it is (`basis`), and explain shows the public
threads (threads/) a log resembles, looked up in the Xapian index of their error lines
(docs/explain.md, "Basis" and "Similar public reports")."""
import json
import os
import pathlib
import sys

import pytest

from conftest import FIXTURES, REPO

sys.path.insert(0, str(REPO / "bench"))
import threads_corpus  # noqa: E402  (the records, one source of truth)

LOGS = REPO / "tests" / "logs"
THREADS = threads_corpus.rows()
BASES = {"signature", "family", "similar", "none"}


def explain_json(rmcp, *args, check=None, **kw):
    proc = rmcp("--format", "json", "explain", "--no-facts", *args, check=check, **kw)
    return proc, json.loads(proc.stdout)


def thread(predicate):
    return next(t for t in THREADS if predicate(t))


def test_every_answer_and_problem_carries_its_basis(rmcp):
    proc, out = explain_json(rmcp, LOGS / "miopen-failure-gemm-bwd-fault.log", check=0)
    assert out["basis"] == "signature"
    assert all(p["basis"] in {"signature", "family"} for p in out["problems"])
    assert out["problems"][0]["basis"] == "signature"
    text = rmcp("explain", "--no-facts", LOGS / "miopen-failure-gemm-bwd-fault.log", check=0).stdout.decode()
    assert "   recognised: a signature of this specific entry matched" in text


def test_family_entries_say_likely(rmcp, tmp_path):
    log = tmp_path / "family.log"
    # A HIP error name no specific entry knows: only the family entry answers.
    log.write_text("RuntimeError: HIP error: hipErrorNotMappedRmcpTest\n")
    proc, out = explain_json(rmcp, log)
    if not out["problems"]:
        pytest.skip("no family entry for this message in the kb")
    assert out["problems"][0]["basis"] == "family" and out["basis"] == "family"
    text = rmcp("explain", "--no-facts", log).stdout.decode()
    assert "   likely: a family entry" in text


def test_a_message_of_several_causes_shows_what_its_threads_established(rmcp, tmp_path):
    """Under a first answer of basis `family` (memory-access-fault is cause_varies), the tally of
    threads/message-causes.toml for that entry, counted here from the file itself; off with
    --similar 0; absent under a `signature` answer."""
    import collections
    import tomllib
    log = tmp_path / "fault.log"
    log.write_text("Memory access fault by GPU node-1 (Agent handle: 0x55d0c8a0b2c0) on address 0x7f1c2a400000. "
                   "Reason: Page not present or supervisor privilege.\nAborted (core dumped)\n")
    proc, out = explain_json(rmcp, log)
    assert out["problems"][0]["id"] == "memory-access-fault" and out["basis"] == "family"
    shipped = tomllib.loads((REPO / "threads" / "message-causes.toml").read_text())["message"]
    want = collections.Counter(m["category"] for m in shipped if m["entry"] == "memory-access-fault")
    assert want, "no thread answered first by memory-access-fault in threads/message-causes.toml"
    causes = out["message_causes"]
    assert causes["entry"] == "memory-access-fault" and causes["threads"] == sum(want.values())
    assert {c["category"]: c["threads"] for c in causes["causes"]} == dict(want)
    counts = [c["threads"] for c in causes["causes"]]
    assert counts == sorted(counts, reverse=True)
    text = rmcp("explain", "--no-facts", log, env={"COLUMNS": "1000"}).stdout.decode()  # one line per label
    line = ", ".join(f'{c["threads"]} {c["category"]}' for c in causes["causes"])
    assert f"   public threads with this message: {line}\n" in text
    _, off = explain_json(rmcp, "--similar", "0", log)
    assert off["message_causes"] is None
    assert "public threads with this message" not in rmcp("explain", "--no-facts", "--similar", "0", log).stdout.decode()
    _, signature = explain_json(rmcp, LOGS / "miopen-failure-gemm-bwd-fault.log", check=0)
    assert signature["basis"] == "signature" and signature["message_causes"] is None


def test_clean_log_has_basis_none_and_no_similar_reports(rmcp, tmp_path):
    log = tmp_path / "clean.log"
    log.write_text("epoch 1 step 10 loss 0.693\nepoch 1 step 20 loss 0.412\n")
    proc, out = explain_json(rmcp, log, check=1)
    assert out["basis"] == "none" and out["similar"] == [] and "similar_vote" not in out


def test_a_thread_finds_itself_first_and_never_when_left_out(rmcp):
    # Retrieval on real data: a failing thread's own excerpt is nearest to itself.
    t = thread(lambda t: not t["clean"] and t["category"] == "gpu-memory-fault" and t["kb_entry"])
    excerpt = threads_corpus.EXCERPTS / t["file"]
    proc, out = explain_json(rmcp, excerpt)
    assert out["similar"], out
    first = out["similar"][0]
    assert first["url"] == t["url"] and first["similarity"] > 0.9
    assert set(first) >= {"url", "similarity", "gpu", "gfx_target", "rocm", "torch", "category", "kb_entry",
                          "cause", "fixed", "date", "framework", "overrides", "kernel"}
    # the machine facts the thread states (issue 31, item 5), as threads.toml records them
    assert first["overrides"] == t["overrides"] and first["kernel"] == t["kernel"]
    for t2 in (thread(lambda t: t["overrides"] and not t["clean"] and t["category"] == "gpu-memory-fault"),
               thread(lambda t: t["kernel"].count(".") >= 2 and not t["clean"] and t["category"] == "install-mismatch")):
        _, out2 = explain_json(rmcp, threads_corpus.EXCERPTS / t2["file"])
        mine = [s for s in out2["similar"] if s["url"] == t2["url"]]
        assert mine and mine[0]["overrides"] == t2["overrides"] and mine[0]["kernel"] == t2["kernel"], (t2, out2["similar"])
    assert len(out["similar"]) <= 3
    _, left_out = explain_json(rmcp, "--exclude-thread", t["url"], excerpt)
    assert left_out["inputs"][0]["source"] == str(excerpt)  # the option takes one URL, not the log
    assert all(s["url"] != t["url"] for s in left_out["similar"])
    text = rmcp("explain", "--no-facts", excerpt).stdout.decode()
    assert "Similar public reports" in text
    assert t["url"].replace("https://", "") in text


def test_similar_n_limits_and_zero_turns_the_lookup_off(rmcp):
    t = thread(lambda t: not t["clean"] and t["category"] == "gpu-hang" and t["kb_entry"])
    excerpt = threads_corpus.EXCERPTS / t["file"]
    _, one = explain_json(rmcp, "--similar", "1", excerpt)
    assert len(one["similar"]) <= 1
    _, off = explain_json(rmcp, "--similar", "0", excerpt)
    assert off["similar"] == []
    text = rmcp("explain", "--no-facts", "--similar", "0", excerpt).stdout.decode()
    assert "Similar public reports" not in text
    bad = rmcp("explain", "--similar", "-1", excerpt)
    assert bad.returncode == 2


def test_similar_reports_use_the_addresses_users_know(rmcp):
    # ROCm/ROCm's issues, never the search index's legacy-rocm-build address.
    assert not any("legacy-rocm-build" in t["url"] for t in THREADS)
    t = thread(lambda t: t["url"].startswith("https://github.com/ROCm/ROCm/issues/") and not t["clean"])
    _, out = explain_json(rmcp, threads_corpus.EXCERPTS / t["file"])
    assert all("legacy-rocm-build" not in s["url"] for s in out["similar"])


def test_index_is_rebuilt_into_the_cache_when_the_records_change(rmcp, tmp_path):
    # A data directory with one record: not the build's index, so explain builds one in the cache.
    data = tmp_path / "data"
    (data / "threads" / "excerpts").mkdir(parents=True)
    (data / "kb").symlink_to(REPO / "kb")
    t = thread(lambda t: not t["clean"] and t["category"] == "gpu-memory-fault")
    (data / "threads" / "excerpts" / t["file"]).write_bytes((threads_corpus.EXCERPTS / t["file"]).read_bytes())
    record = (f'[[thread]]\nurl = "{t["url"]}"\nsplit = "dev"\ncategory = "{t["category"]}"\n'
              f'cause = "a cause"\nfixed = "a fix"\nexcerpt = "{t["file"]}"\n')
    (data / "threads" / "threads.toml").write_text(record)
    cache = tmp_path / "cache"
    env = {"RMCP_DATA_DIR": str(data), "XDG_CACHE_HOME": str(cache)}
    _, out = explain_json(rmcp, threads_corpus.EXCERPTS / t["file"], env=env)
    built = sorted(cache.joinpath("rmcp").glob("threads-*"))
    assert len(built) == 1 and built[0].is_dir()
    assert out["similar"] and out["similar"][0]["fixed"] == "a fix"
    stamp = built[0].stat().st_mtime_ns
    explain_json(rmcp, threads_corpus.EXCERPTS / t["file"], env=env)
    assert built[0].stat().st_mtime_ns == stamp  # reused
    (data / "threads" / "threads.toml").write_text(record.replace("a fix", "another fix"))
    _, changed = explain_json(rmcp, threads_corpus.EXCERPTS / t["file"], env=env)
    assert changed["similar"][0]["fixed"] == "another fix"
    assert len(sorted(cache.joinpath("rmcp").glob("threads-*"))) == 2


def test_bad_records_are_a_note_and_the_answer_stands(rmcp, tmp_path):
    data = tmp_path / "data"
    (data / "threads").mkdir(parents=True)
    (data / "kb").symlink_to(REPO / "kb")
    (data / "threads" / "threads.toml").write_text('[[thread]]\nurl = "u"\ncolour = "red"\n')
    proc, out = explain_json(rmcp, LOGS / "miopen-failure-gemm-bwd-fault.log", env={"RMCP_DATA_DIR": str(data)},
                             check=0)
    assert out["problems"] and out["similar"] == []
    assert b"no similar public reports" in proc.stderr and b"threads.toml:" in proc.stderr


def test_facts_file_ranks_by_that_machine(rmcp, tmp_path):
    facts = tmp_path / "facts.json"
    facts.write_bytes(rmcp("--root", FIXTURES / "container-hidden-gpu", "--format", "json", "detect", check=0).stdout)
    proc = rmcp("--format", "json", "explain", "--facts", facts, LOGS / "miopen-failure-gemm-bwd-fault.log", check=0)
    out = json.loads(proc.stdout)
    assert out["facts_source"] == "file" and out["facts"] == f"--facts {facts}"
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2")
    proc = rmcp("explain", "--facts", bad, LOGS / "miopen-failure-gemm-bwd-fault.log")
    assert proc.returncode == 2
    assert f"reading facts {bad}: not a JSON object".encode() in proc.stderr


def test_detect_from_report_writes_the_reporters_facts(rmcp, tmp_path):
    report = tmp_path / "report.txt"
    report.write_text("Agent 2\n  Name:                    gfx1100\n  Marketing Name:          AMD Radeon RX 7900 XTX\n"
                      "ROCm version: 6.1.2\nPyTorch version: 2.3.0+rocm6.0\n")
    doc = rmcp.json("detect", "--from-report", report)
    assert doc["gpus"][0]["gfx_target"] == "gfx1100"
    assert doc["gpus"][0]["family"] == "RDNA3"
    assert doc["rocm"][0]["version"] == "6.1.2"
    # And explain reads it back as a facts file.
    facts = tmp_path / "facts.json"
    facts.write_text(json.dumps(doc))
    out = json.loads(rmcp("--format", "json", "explain", "--facts", facts, LOGS / "miopen-failure-gemm-bwd-fault.log",
                          check=0).stdout)
    assert out["facts_source"] == "file"
    assert rmcp("detect", "--from-report", report).returncode == 2  # JSON only
