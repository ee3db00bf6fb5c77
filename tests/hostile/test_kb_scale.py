"""A knowledge base of 10,000 signatures (docs/PERFORMANCE.md, "Large knowledge bases"): the
Hyperscan database is compiled once and then read from the cache. Timings are recorded
(JUnit properties), never asserted. What a damaged or foreign cache file does is checked
in tests/unit/explain_db_cache_test.cpp, without the cost of compiling a large set."""
import json
import time

from conftest import write

WORDS = ["device", "kernel", "queue", "buffer", "stream", "fence", "ring", "page", "fault", "timeout"]


def make_kb(top, entries=1000, per_entry=10):
    """entries x per_entry signatures; two per entry are regular expressions, the rest
    literal phrases, as in the shipped kb. Returns log lines that match three entries."""
    lines = []
    for e in range(entries):
        body = [f'id = "synthetic-{e:04d}"', f'title = "synthetic entry {e}"', 'category = "config-risk"',
                'severity = "info"', 'confidence = "hypothesis"', 'summary = "s"',
                'references = ["https://example.org/"]']
        for s in range(per_entry):
            w1, w2 = WORDS[(e + s) % len(WORDS)], WORDS[(e * 7 + s) % len(WORDS)]
            tail = " at 0x[0-9a-f]+" if s in (0, 5) else ""
            body += ["", "[[signatures]]", f"pattern = '{w1} {w2} error E{e:04d}{s} failed{tail}'",
                     f'context = ["{w2}", "retry"]', "window = 5"]
            if e in (1, 500, 999) and s == 1:
                lines.append(f"{w1} {w2} error E{e:04d}{s} failed")
        write(top / f"synthetic-{e:04d}.toml", "\n".join(body) + "\n")
    return lines


def test_ten_thousand_signatures_compile_once_then_come_from_the_cache(rmcp, tmp_path, record_property):
    kb = tmp_path / "kb"
    log = write(tmp_path / "train.log", "\n".join(make_kb(kb)) + "\n")
    cache = tmp_path / "cache"
    env = {"XDG_CACHE_HOME": str(cache), "HOME": str(tmp_path)}

    def explain():
        started = time.monotonic()
        proc = rmcp("--kb", kb, "explain", "--no-facts", "--format", "json", log, env=env, timeout=300)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout, time.monotonic() - started

    cold, cold_s = explain()
    assert [p["id"] for p in json.loads(cold)["problems"]] == ["synthetic-0001", "synthetic-0500", "synthetic-0999"]
    (cached,) = (cache / "rmcp").glob("signatures-*.hsdb")
    assert cached.stat().st_mode & 0o077 == 0
    warm, warm_s = explain()
    assert warm == cold
    record_property("kb_10k_cold_s", round(cold_s, 3))
    record_property("kb_10k_warm_s", round(warm_s, 3))
    print(f"10,000 signatures: explain {cold_s:.2f} s compiling, {warm_s:.2f} s from the cache")
