"""rmcp against the real daemons (issue 32, item 6): Debian's prometheus-node-exporter and
prometheus on 127.0.0.1 (free ports, temporary directories, all ended on the way out).

Three nodes, each a node_exporter with its own textfile directory, filled by the exact
ExecStart of packaging/systemd/rmcp-doctor.service (conftest.exec_start_for_test: the built
binary, --root, the output directory moved) on fixture roots: healthy, critical (a critical
finding), stale (its writes stop). Prometheus loads deploy/prometheus/rmcp-rules.yml with the
stale threshold rewritten to seconds (test_prometheus_rules.stale_variant) and is asked through
its HTTP API. Then atomicity: 1,000 rewrites by rmcp while node_exporter is scraped 1,000
times, node_textfile_scrape_error 0 and every rmcp sample present in every scrape, with a
negative control (a writer that is not atomic) showing the check sees a torn file."""
import json
import pathlib
import shutil
import subprocess
import threading
import time
import urllib.parse
import urllib.request

import pytest

from conftest import FIXTURES, REPO, exec_start_for_test, free_port, rmcp_binary, rmcp_env, tool
from test_prometheus_rules import stale_variant

pytestmark = pytest.mark.xdist_group("fleet-daemons")

NODES = {"healthy": "rx7900xtx-healthy", "critical": "rx6700xt-gfx1031", "stale": "laptop-780m-healthy"}
STALE_AFTER_S = 8  # the rewritten threshold; `for:` becomes 0 s
DEADLINE_S = 80    # the whole test, daemons included (CI budget: docs/fleet.md)


def http_get(url, timeout=5):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.read().decode()


def wait_for(what, predicate, deadline, interval=0.25):
    """predicate() until it returns something truthy, or fail naming `what` at `deadline`."""
    last = None
    while time.monotonic() < deadline:
        last = predicate()
        if last:
            return last
        time.sleep(interval)
    pytest.fail(f"timed out waiting for {what} (last: {last!r})")


class Prometheus:
    def __init__(self, port):
        self.base = f"http://127.0.0.1:{port}"

    def query(self, expr):
        url = f"{self.base}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
        doc = json.loads(http_get(url))
        assert doc["status"] == "success", doc
        return doc["data"]["result"]

    def firing(self, alertname):
        """{node label: alert} of the firing alerts with that name."""
        doc = json.loads(http_get(f"{self.base}/api/v1/alerts"))
        return {a["labels"].get("node"): a for a in doc["data"]["alerts"]
                if a["labels"]["alertname"] == alertname and a["state"] == "firing"}

    def ready(self):
        try:
            return http_get(f"{self.base}/-/ready", timeout=2).strip() != ""
        except OSError:
            return False


def node_root(tmp_path, name, fixture):
    """A copy of the fixture with what the unit also reads: a saved probe result (healthy: passed,
    on the kernel the fixture runs) and one incident report (critical: a GPU memory fault)."""
    root = tmp_path / "roots" / name
    shutil.copytree(FIXTURES / fixture, root, symlinks=True)
    state = root / "var" / "lib" / "rmcp"
    (state / "incidents").mkdir(parents=True)
    if name == "healthy":
        kernel = (root / "proc" / "sys" / "kernel" / "osrelease").read_text().strip()
        result = {"schema_version": 1, "device": "AMD Radeon RX 7900 XTX", "gfx_target": "gfx1100",
                  "torch_version": "", "passed": True, "scenarios": [{"id": "matmul"}, {"id": "conv2d"}],
                  "configurations": [{"name": "default", "switches": [], "env": {},
                                      "results": [{"scenario": "matmul", "outcome": "ok", "median_ms": 1.0},
                                                  {"scenario": "conv2d", "outcome": "ok", "median_ms": 2.0}]}],
                  "profile": {"configuration": "default"}, "machine": {"kernel": kernel}}
        (state / "probe-result.json").write_text(json.dumps(result))
    if name == "critical":
        report = {"schema_version": 1, "kind": "rmcp-run-incident", "classification": "gpu-failure",
                  "attempts": [{"matches": [{"id": "memory-access-fault", "category": "gpu-memory-fault"}]}]}
        (state / "incidents" / "20260101T000000Z-42.json").write_text(json.dumps(report))
    return root


class Writers:
    """Reruns the unit's command for every node in `active`, round after round, until stopped."""

    def __init__(self, commands, env):
        self.commands, self.env = commands, env
        self.active = set(commands)
        self.errors = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.loop, daemon=True)

    def run(self, name):
        proc = subprocess.run(self.commands[name], env=self.env, capture_output=True, timeout=30)
        if proc.returncode != 0:
            self.errors.append((name, proc.returncode, proc.stderr.decode()[-1000:]))

    def loop(self):
        while not self.stop.is_set():
            for name in sorted(self.active):
                self.run(name)
            self.stop.wait(0.3)


def scrape_metrics(port):
    """{sample name with labels: value} of one node_exporter scrape."""
    out = {}
    for line in http_get(f"http://127.0.0.1:{port}/metrics").splitlines():
        if line and not line.startswith("#"):
            key, _, value = line.rpartition(" ")
            out[key] = value
    return out


def start_exporter(daemons, tmp_path, name):
    exporter = tool("prometheus-node-exporter", "prometheus-node-exporter")
    textfiles = tmp_path / "textfile" / name
    textfiles.mkdir(parents=True)
    port = free_port()
    d = daemons([exporter, "--collector.disable-defaults", "--collector.textfile",
                 f"--collector.textfile.directory={textfiles}", "--web.disable-exporter-metrics",
                 f"--web.listen-address=127.0.0.1:{port}"], tmp_path / f"exporter-{name}.log")
    return port, textfiles, d


def test_node_exporter_and_prometheus_see_rmcp(daemons, tmp_path):
    deadline = time.monotonic() + DEADLINE_S
    prometheus_bin = tool("prometheus", "prometheus")
    env = rmcp_env(tmp_path)

    exporters, commands = {}, {}
    for name, fixture in NODES.items():
        port, textfiles, _ = start_exporter(daemons, tmp_path, name)
        exporters[name] = port
        commands[name], basename = exec_start_for_test("rmcp-doctor.service", node_root(tmp_path, name, fixture),
                                                       textfiles / "x")
        assert basename == "rmcp.prom"
    (tmp_path / "rules.yml").write_text(stale_variant(STALE_AFTER_S, 0))
    targets = "\n".join(f"      - targets: ['127.0.0.1:{port}']\n        labels: {{node: {name}}}"
                        for name, port in exporters.items())
    (tmp_path / "prometheus.yml").write_text(
        "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\n"
        f"rule_files: ['{tmp_path / 'rules.yml'}']\n"
        f"scrape_configs:\n  - job_name: node\n    static_configs:\n{targets}\n")
    prom_port = free_port()
    prom_daemon = daemons([prometheus_bin, f"--config.file={tmp_path / 'prometheus.yml'}",
                           f"--storage.tsdb.path={tmp_path / 'tsdb'}", f"--web.listen-address=127.0.0.1:{prom_port}"],
                          tmp_path / "prometheus.log")
    prom = Prometheus(prom_port)

    writers = Writers(commands, env)
    for name in NODES:
        writers.run(name)  # every file exists before the first scrape
    assert not writers.errors, writers.errors
    writers.thread.start()
    try:
        if not wait_for("prometheus ready", lambda: prom.ready() or prom_daemon.proc.poll() is not None, deadline) \
                or prom_daemon.proc.poll() is not None:
            pytest.fail("prometheus exited:\n" + prom_daemon.tail())

        # The series are there for all three nodes.
        wait_for("rmcp_amd_gpus from 3 nodes", lambda: len(prom.query("rmcp_amd_gpus")) == 3, deadline)
        assert {r["metric"]["node"] for r in prom.query('up == 1')} == set(NODES)
        errors = prom.query("node_textfile_scrape_error")
        assert len(errors) == 3 and all(r["value"][1] == "0" for r in errors), errors
        open_critical = prom.query('rmcp_finding{severity="critical",status="open"}')
        assert {r["metric"]["node"] for r in open_critical} == {"critical"}, open_critical
        assert {r["metric"]["id"] for r in open_critical} == {"rdna2-no-override"}
        gpu = prom.query('rmcp_gpu_info{node="healthy"}')
        assert [r["metric"]["effective_target"] for r in gpu] == ["gfx1100"], gpu
        assert prom.query('rmcp_probe_passed{node="healthy"}')[0]["value"][1] == "1"
        incidents = prom.query('rmcp_run_incidents_total{classification="gpu-failure"} > 0')
        assert [(r["metric"]["node"], r["value"][1]) for r in incidents] == [("critical", "1")], incidents
        assert len(prom.query("rmcp_build_info")) == 3

        # The critical alert fires for the critical node only.
        firing = wait_for("RmcpCriticalFindingOpen", lambda: prom.firing("RmcpCriticalFindingOpen"), deadline)
        assert set(firing) == {"critical"}, firing
        assert firing["critical"]["labels"]["id"] == "rdna2-no-override"
        assert not prom.firing("RmcpDataStale"), "stale before any write stopped"

        # Writes stop on one node: its stale alert fires, and no other node's.
        writers.active.discard("stale")
        stopped = time.monotonic()
        stale = wait_for("RmcpDataStale for node stale", lambda: prom.firing("RmcpDataStale"), deadline)
        assert set(stale) == {"stale"}, stale
        assert time.monotonic() - stopped >= STALE_AFTER_S - 1.5, "fired before the threshold"
        assert set(prom.firing("RmcpCriticalFindingOpen")) == {"critical"}
        assert not writers.errors, writers.errors
    finally:
        writers.stop.set()
        writers.thread.join(timeout=30)


def test_rewrites_during_scrapes_are_never_torn(daemons, tmp_path):
    """1,000 rewrites by rmcp (4 writers at once, through the one atomic writer) while
    node_exporter is scraped 1,000 times: no scrape error, every rmcp sample in every scrape.
    The writes use a one-entry kb and --no-scan so 1,000 runs fit the CI budget; the file
    is written by the same `-o` path as the unit's."""
    port, textfiles, _ = start_exporter(daemons, tmp_path, "atomic")
    kb = tmp_path / "kb"
    kb.mkdir()
    shutil.copy(REPO / "kb" / "memory-access-fault.toml", kb)
    target = textfiles / "rmcp.prom"
    argv = [str(rmcp_binary()), "--root", str(FIXTURES / "desktop-igpu-dgpu"), "--kb", str(kb), "doctor",
            "--no-scan", "--format", "prometheus", "-o", str(target)]
    env = rmcp_env(tmp_path)
    subprocess.run(argv, env=env, check=True, capture_output=True, timeout=30)
    wait_for("node_exporter up", lambda: _try_scrape(port), time.monotonic() + 10)
    expected = {k.split("{")[0] for k in scrape_metrics(port) if k.startswith("rmcp_")}
    expected_samples = sum(1 for k in scrape_metrics(port) if k.startswith("rmcp_"))
    assert "rmcp_last_run_timestamp_seconds" in expected and expected_samples > 20

    rewrites, failures, lock = [0], [], threading.Lock()

    def writer():
        while True:
            with lock:
                if rewrites[0] >= 1000:
                    return
                rewrites[0] += 1
            proc = subprocess.run(argv, env=env, capture_output=True, timeout=30)
            if proc.returncode != 0:
                failures.append(proc.stderr.decode()[-500:])

    threads = [threading.Thread(target=writer) for _ in range(4)]
    for t in threads:
        t.start()
    scrapes, torn = 0, []
    while scrapes < 1000 or any(t.is_alive() for t in threads):
        m = scrape_metrics(port)
        scrapes += 1
        samples = sum(1 for k in m if k.startswith("rmcp_"))
        if m.get("node_textfile_scrape_error") != "0" or samples != expected_samples:
            torn.append((scrapes, m.get("node_textfile_scrape_error"), samples))
    for t in threads:
        t.join()
    assert not failures, failures[:3]
    assert rewrites[0] == 1000 and scrapes >= 1000
    assert not torn, torn[:5]
    # No temporary file is left behind for the collector to stumble on.
    assert [p.name for p in textfiles.iterdir()] == ["rmcp.prom"]

    # Negative control: the same content written in place, in two halves, is seen torn within
    # a few seconds, so the check above can fail.
    content = target.read_bytes()
    seen_torn = False
    control_deadline = time.monotonic() + 5
    stop = threading.Event()

    def torn_writer():
        while not stop.is_set():
            with open(target, "wb") as f:
                f.write(content[: len(content) // 2])
                f.flush()
                time.sleep(0.002)
                f.write(content[len(content) // 2:])

    t = threading.Thread(target=torn_writer)
    t.start()
    try:
        while time.monotonic() < control_deadline and not seen_torn:
            m = scrape_metrics(port)
            samples = sum(1 for k in m if k.startswith("rmcp_"))
            seen_torn = m.get("node_textfile_scrape_error") != "0" or samples != expected_samples
    finally:
        stop.set()
        t.join()
    assert seen_torn, "a non-atomic writer was never caught: the atomicity check would prove nothing"


def _try_scrape(port):
    try:
        return "node_textfile_scrape_error" in scrape_metrics(port)
    except OSError:
        return False
