"""deploy/prometheus/rmcp-rules.yml: valid (`promtool check rules`) and its unit tests
(`promtool test rules rmcp-rules.test.yml`: each alert fires on the node with the problem and
not on the near miss); the test-only variant the daemon test uses is derived from it."""
import subprocess

from conftest import DEPLOY, tool

RULES = DEPLOY / "prometheus" / "rmcp-rules.yml"


def stale_variant(threshold_s, for_s):
    """rmcp-rules.yml with the two values marked `fleet-test` rewritten (the stale threshold
    and its `for:`), everything else as shipped. Used by test_daemons.py."""
    text = RULES.read_text()
    out, done = [], set()
    for line in text.splitlines():
        if line.rstrip().endswith("# fleet-test: threshold"):
            head, _, _ = line.rpartition(" > ")
            line = f"{head} > {threshold_s}"
            done.add("threshold")
        elif line.rstrip().endswith("# fleet-test: for"):
            line = line[: line.index("for:")] + f"for: {for_s}s"
            done.add("for")
        out.append(line)
    assert done == {"threshold", "for"}, "rmcp-rules.yml lost its fleet-test markers"
    return "\n".join(out) + "\n"


def test_rules_are_valid():
    promtool = tool("promtool", "prometheus")
    proc = subprocess.run([promtool, "check", "rules", str(RULES)], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "SUCCESS: 6 rules found" in proc.stdout


def test_rules_unit_tests_pass():
    promtool = tool("promtool", "prometheus")
    proc = subprocess.run([promtool, "test", "rules", "rmcp-rules.test.yml"], cwd=RULES.parent, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0 and "SUCCESS" in proc.stdout, proc.stdout + proc.stderr


def test_stale_variant_differs_only_in_the_marked_values(tmp_path):
    promtool = tool("promtool", "prometheus")
    variant = stale_variant(4, 0)
    shipped = RULES.read_text().splitlines()
    changed = [(a, b) for a, b in zip(shipped, variant.splitlines()) if a != b]
    assert len(changed) == 2 and len(shipped) == len(variant.splitlines()), changed
    (tmp_path / "rules.yml").write_text(variant)
    proc = subprocess.run([promtool, "check", "rules", str(tmp_path / "rules.yml")], capture_output=True, text=True,
                          timeout=30)
    assert proc.returncode == 0, proc.stdout + proc.stderr
