"""deploy/grafana/rmcp-fleet.json (issue 32, item 5): every panel's PromQL parses (promtool
2.42 has no PromQL command, so each expression becomes a recording rule of a temporary rules
file that `promtool check rules` parses) and names only metrics rmcp exports, as read from
the unit's output, or node_exporter's textfile collector's own."""
import json
import re
import subprocess

from conftest import DEPLOY, exec_start_for_test, rmcp_env, tool
from test_daemons import node_root

DASHBOARD = DEPLOY / "grafana" / "rmcp-fleet.json"
NODE_EXPORTER_OWN = {"node_textfile_mtime_seconds", "node_textfile_scrape_error"}
# Grafana's variables, given the values Grafana would (a multi-value "All" is .*).
VARIABLES = {"$__rate_interval": "5m", "$__interval": "1m", "$__range": "1d", "$instance": ".*"}
KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "bool", "and", "or", "unless", "offset",
            "inf", "nan"}


def expressions():
    doc = json.loads(DASHBOARD.read_text())
    out = []
    for panel in doc["panels"]:
        for target in panel.get("targets", []):
            expr = target["expr"]
            for name, value in VARIABLES.items():
                expr = expr.replace(name, value)
            assert "$" not in expr, (panel["title"], expr)
            out.append((panel["title"], expr))
    return out


def metric_names(expr):
    """The metric names of a PromQL expression: identifiers left once strings, label
    matchers, ranges and grouping clauses are removed, that are neither functions nor keywords."""
    s = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)
    s = re.sub(r"\{[^}]*\}", "", s)
    s = re.sub(r"\[[^\]]*\]", "", s)
    s = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", "", s)
    names = set()
    for m in re.finditer(r"[A-Za-z_:][A-Za-z0-9_:]*", s):
        rest = s[m.end():].lstrip()
        if rest.startswith("(") or m.group() in KEYWORDS or re.fullmatch(r"[0-9.]+[smhdwy]?", m.group()):
            continue
        names.add(m.group())
    return names


def rmcp_families(tmp_path):
    """Every metric family the unit writes on a node with a probe result and an incident."""
    families = set()
    for name, fixture in (("healthy", "rx7900xtx-healthy"), ("critical", "rx6700xt-gfx1031")):
        argv, _ = exec_start_for_test("rmcp-doctor.service", node_root(tmp_path, name, fixture), None)
        out = subprocess.run(argv, env=rmcp_env(tmp_path), capture_output=True, text=True, timeout=60, check=True)
        families |= {line.split()[2] for line in out.stdout.splitlines() if line.startswith("# TYPE ")}
    return families


def test_every_panel_parses(tmp_path):
    promtool = tool("promtool", "prometheus")
    exprs = expressions()
    assert len(exprs) >= 10
    rules = {"groups": [{"name": "dashboard", "rules": [
        {"record": f"rmcp_dashboard:panel{i}", "expr": expr} for i, (_, expr) in enumerate(exprs)]}]}
    (tmp_path / "panels.yml").write_text(json.dumps(rules))  # JSON is YAML
    proc = subprocess.run([promtool, "check", "rules", str(tmp_path / "panels.yml")], capture_output=True, text=True,
                          timeout=30)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"SUCCESS: {len(exprs)} rules found" in proc.stdout


def test_panels_use_only_rmcp_and_textfile_metrics(tmp_path):
    allowed = rmcp_families(tmp_path) | NODE_EXPORTER_OWN
    used = set()
    for title, expr in expressions():
        names = metric_names(expr)
        assert names, (title, expr)
        assert names <= allowed, (title, names - allowed)
        used |= names
    # The dashboard shows what the issue asks: targets, findings, incidents, staleness.
    assert {"rmcp_gpu_info", "rmcp_finding", "rmcp_run_incidents_total", "node_textfile_mtime_seconds"} <= used


def test_metric_name_extraction():
    assert metric_names('sum by (id) (rmcp_finding{status="open",instance=~".*"})') == {"rmcp_finding"}
    assert metric_names('time() - node_textfile_mtime_seconds{file=~"(.*/)?rmcp\\\\.prom"} > 2700') == \
        {"node_textfile_mtime_seconds"}
    assert metric_names("increase(rmcp_run_incidents_total[5m]) or vector(0)") == {"rmcp_run_incidents_total"}
