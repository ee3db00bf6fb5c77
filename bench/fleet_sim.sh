#!/bin/sh
# A simulated fleet (issue 32, docs/fleet.md "Scale"): N node_exporters on loopback ports, each
# with a textfile directory that rmcp-doctor.service's command (read from the unit, as
# tests/fleet does) filled from a fixture root, all scraped by one Prometheus; then the cost per
# node per interval and what Prometheus holds.
#
#   bench/fleet_sim.sh [N] [SECONDS]      (default 50 nodes, 60 s)
#
# Scrape interval SCRAPE (default 15s, Prometheus' default) and the run's length SECONDS
# (default 60) can be set; the figures are printed as a Markdown table for docs/PERFORMANCE.md.
# Everything lives under WORK (default /tmp/rmcp-fleet-sim) and every daemon is ended on exit.
set -eu
cd "$(dirname "$0")/.."
N=${1:-50}
SECONDS_RUN=${2:-60}
SCRAPE=${SCRAPE:-15s}
RMCP=${RMCP:-build/rmcp}
[ -x "$RMCP" ] || { echo "build $RMCP first" >&2; exit 2; }
for t in prometheus prometheus-node-exporter promtool; do
  command -v "$t" >/dev/null || { echo "$t is missing (apt install prometheus prometheus-node-exporter)" >&2; exit 2; }
done
WORK=${WORK:-/tmp/rmcp-fleet-sim}
rm -rf "$WORK" && mkdir -p "$WORK"
exec /usr/bin/python3 - "$WORK" "$N" "$SECONDS_RUN" "$SCRAPE" "$RMCP" <<'PYEOF'
import json, os, pathlib, resource, shlex, signal, socket, subprocess, sys, time, urllib.parse, urllib.request

work, n, run_s, scrape, rmcp = pathlib.Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
repo = pathlib.Path.cwd()
fixtures = sorted(p for p in (repo / "tests/fixtures").iterdir() if p.is_dir() and p.name not in ("healthy",)
                  and not p.name.startswith("__"))
fixtures += sorted(p for p in (repo / "tests/fixtures/healthy").iterdir() if p.is_dir())
unit = (repo / "packaging/systemd/rmcp-doctor.service").read_text()
argv = shlex.split(next(l for l in unit.splitlines() if l.startswith("ExecStart=")).removeprefix("ExecStart="))
env = {"PATH": os.environ["PATH"], "HOME": str(work), "RMCP_DATA_DIR": str(repo)}
procs = []

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]

def get(url):
    with urllib.request.urlopen(url, timeout=10) as r:
        return r.read().decode()

def query(port, expr):
    doc = json.loads(get(f"http://127.0.0.1:{port}/api/v1/query?" + urllib.parse.urlencode({"query": expr})))
    return doc["data"]["result"]

try:
    # Cost per node per interval: one run of the unit's command per fixture, CPU from rusage.
    cpu_ms, bytes_written, samples, ports = [], [], [], []
    for i in range(n):
        root = fixtures[i % len(fixtures)]
        textfiles = work / f"node{i:03d}"
        textfiles.mkdir()
        cmd = [rmcp, "--root", str(root), *argv[1:]]
        cmd[cmd.index("-o") + 1] = str(textfiles / "rmcp.prom")
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(cmd, env=env, check=True, capture_output=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu_ms.append(1000 * (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime))
        text = (textfiles / "rmcp.prom").read_text()
        bytes_written.append(len(text.encode()))
        samples.append(sum(1 for l in text.splitlines() if l and not l.startswith("#")))
        port = free_port()
        ports.append(port)
        procs.append(subprocess.Popen(["prometheus-node-exporter", "--collector.disable-defaults",
                                       "--collector.textfile", f"--collector.textfile.directory={textfiles}",
                                       "--web.disable-exporter-metrics", f"--web.listen-address=127.0.0.1:{port}"],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True))
    prom_port = free_port()
    targets = ", ".join(f"'127.0.0.1:{p}'" for p in ports)
    (work / "prometheus.yml").write_text(
        f"global: {{scrape_interval: {scrape}, evaluation_interval: {scrape}}}\n"
        f"rule_files: ['{repo / 'deploy/prometheus/rmcp-rules.yml'}']\n"
        f"scrape_configs:\n  - job_name: node\n    static_configs: [{{targets: [{targets}]}}]\n"
        f"  - job_name: prometheus\n    static_configs: [{{targets: ['127.0.0.1:{prom_port}']}}]\n")
    procs.append(subprocess.Popen(["prometheus", f"--config.file={work / 'prometheus.yml'}",
                                   f"--storage.tsdb.path={work / 'tsdb'}", f"--web.listen-address=127.0.0.1:{prom_port}"],
                                  stdout=subprocess.DEVNULL, stderr=open(work / "prometheus.log", "w"),
                                  start_new_session=True))
    time.sleep(run_s)
    up = int(float(query(prom_port, 'count(up{job="node"} == 1)')[0]["value"][1]))
    head_series = int(float(query(prom_port, "prometheus_tsdb_head_series")[0]["value"][1]))
    node_series = int(float(query(prom_port, 'sum(scrape_samples_scraped{job="node"})')[0]["value"][1]))
    rmcp_series = int(float(query(prom_port, 'count({__name__=~"rmcp_.*"})')[0]["value"][1]))
    scrape_ms = 1000 * float(query(prom_port, 'max(scrape_duration_seconds{job="node"})')[0]["value"][1])
    rss = float(query(prom_port, 'process_resident_memory_bytes{job="prometheus"}')[0]["value"][1])
    interval_s = float(scrape.rstrip("s"))
    mean = lambda xs: sum(xs) / len(xs)
    print(f"| nodes (node_exporters up) | {n} ({up}) |")
    print(f"| fixture roots cycled | {min(n, len(fixtures))} |")
    print(f"| rmcp doctor CPU per node per run, mean / max | {mean(cpu_ms):.0f} ms / {max(cpu_ms):.0f} ms |")
    print(f"| bytes written per node per run, mean / max | {mean(bytes_written):.0f} / {max(bytes_written)} |")
    print(f"| samples per node (rmcp.prom), mean / max | {mean(samples):.1f} / {max(samples)} |")
    print(f"| series from the node jobs (rmcp_* of them) | {node_series} ({rmcp_series}) |")
    print(f"| Prometheus head series (its own included) | {head_series} |")
    print(f"| slowest node scrape | {scrape_ms:.1f} ms |")
    print(f"| Prometheus resident memory after {run_s} s | {rss / 2**20:.0f} MiB |")
    per_node = node_series / max(up, 1)
    print(f"| 10,000 nodes: series / samples per second at {scrape} scrapes | "
          f"{per_node * 10000:,.0f} / {per_node * 10000 / interval_s:,.0f} |")
finally:
    for p in procs:
        p.send_signal(signal.SIGTERM)
    for p in procs:
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
PYEOF
