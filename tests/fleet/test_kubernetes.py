"""deploy/kubernetes (issue 32, item 4), rendered by `kubectl kustomize` (kubectl's built-in
kustomize; skipped where no kubectl exists) and checked field by field: a DaemonSet on AMD GPU
nodes by NFD's PCI labels, the host read-only under /host, NFD's feature directory the only
writable host path, and the rmcp command that of packaging/systemd/rmcp-nfd.service.
`kubectl apply --dry-run=client` needs an API server for discovery even with --validate=false;
with none reachable that one test is skipped and says so. Not run against a live cluster."""
import shlex
import shutil
import subprocess

import pytest

from conftest import DEPLOY, FIXTURES, NFD_DIR, exec_start_for_test, rmcp_env, unit_exec_start

yaml = pytest.importorskip("yaml", reason="python3-yaml is not installed")
KUSTOMIZATION = DEPLOY / "kubernetes"


def kubectl():
    path = shutil.which("kubectl")
    if not path:
        pytest.skip("kubectl is not installed (not a Debian 12 package; its kustomize renders deploy/kubernetes)")
    return path


@pytest.fixture(scope="module")
def rendered():
    proc = subprocess.run([kubectl(), "kustomize", str(KUSTOMIZATION)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout, list(yaml.safe_load_all(proc.stdout))


def daemonset(docs):
    (ds,) = [d for d in docs if d["kind"] == "DaemonSet"]
    return ds


def test_renders_a_namespace_and_a_daemonset(rendered):
    _, docs = rendered
    assert sorted(d["kind"] for d in docs) == ["DaemonSet", "Namespace"]
    ds = daemonset(docs)
    assert ds["apiVersion"] == "apps/v1" and ds["metadata"]["namespace"] == "rmcp"
    selector = ds["spec"]["selector"]["matchLabels"]
    labels = ds["spec"]["template"]["metadata"]["labels"]
    assert selector.items() <= labels.items(), (selector, labels)


def test_runs_only_on_amd_gpu_nodes(rendered):
    spec = daemonset(rendered[1])["spec"]["template"]["spec"]
    terms = spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    keys = {e["key"]: e for t in terms for e in t["matchExpressions"]}
    # NFD's pci source: class 0300 (VGA, Radeon) and 0380 (display, Instinct), vendor 1002 (AMD).
    assert set(keys) == {"feature.node.kubernetes.io/pci-0300_1002.present",
                         "feature.node.kubernetes.io/pci-0380_1002.present"}
    assert all(e["operator"] == "In" and e["values"] == ["true"] for e in keys.values())


def test_host_is_read_only_and_only_the_feature_directory_is_written(rendered):
    spec = daemonset(rendered[1])["spec"]["template"]["spec"]
    (container,) = spec["containers"]
    volumes = {v["name"]: v for v in spec["volumes"]}
    mounts = {m["name"]: m for m in container["volumeMounts"]}
    assert set(mounts) == set(volumes), "every volume mounted, every mount a volume"
    writable = {name for name, m in mounts.items() if not m.get("readOnly")}
    assert writable == {"nfd-features", "tmp"}, writable
    assert volumes["nfd-features"]["hostPath"]["path"] == NFD_DIR
    assert mounts["nfd-features"]["mountPath"] == NFD_DIR
    assert "emptyDir" in volumes["tmp"]
    for name, m in mounts.items():
        if "hostPath" in volumes[name] and name != "nfd-features":
            # Mounted at the same path under /host, so --root /host sees the host's layout.
            assert m["mountPath"] == "/host" + volumes[name]["hostPath"]["path"], m
    sc = container["securityContext"]
    assert sc["readOnlyRootFilesystem"] is True and sc["allowPrivilegeEscalation"] is False
    assert sc["privileged"] is False and sc["capabilities"]["drop"] == ["ALL"]
    assert sc["capabilities"]["add"] == ["DAC_READ_SEARCH"]
    assert spec["automountServiceAccountToken"] is False


def test_command_is_the_nfd_units(rendered):
    (container,) = daemonset(rendered[1])["spec"]["template"]["spec"]["containers"]
    script = " ".join(container["args"])
    words = shlex.split(script)
    start = words.index("/usr/bin/rmcp")
    end = words.index("||")
    unit = unit_exec_start("rmcp-nfd.service")
    assert words[start:end] == [unit[0], "--root", "/host", *unit[1:]], (words[start:end], unit)
    assert "sleep 900" in script  # the timer's interval


def test_labels_the_example_job_selects_are_the_ones_rmcp_writes(tmp_path):
    job = yaml.safe_load((KUSTOMIZATION / "example-job.yaml").read_text())
    selected = job["spec"]["template"]["spec"]["nodeSelector"]
    argv, _ = exec_start_for_test("rmcp-nfd.service", FIXTURES / "rx7900xtx-healthy", None)
    proc = subprocess.run(argv, env=rmcp_env(tmp_path), capture_output=True, text=True, timeout=60, check=True)
    written = dict(line.split("=", 1) for line in proc.stdout.splitlines())
    # NFD prefixes a feature-file label without a namespace with feature.node.kubernetes.io/.
    for key in selected:
        assert key.removeprefix("feature.node.kubernetes.io/") in written, (key, written)


def test_client_dry_run(rendered, tmp_path):
    text, _ = rendered
    manifest = tmp_path / "rendered.yaml"
    manifest.write_text(text)
    proc = subprocess.run([kubectl(), "apply", "--dry-run=client", "--validate=false", "-o", "yaml", "-f",
                           str(manifest)], capture_output=True, text=True, timeout=60,
                          env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "KUBECONFIG": str(tmp_path / "none")})
    if proc.returncode != 0 and ("unable to recognize" in proc.stderr or "connection refused" in proc.stderr):
        pytest.skip("kubectl apply --dry-run=client needs an API server for discovery; none here "
                    "(the structural tests above check the fields instead)")
    assert proc.returncode == 0, proc.stderr
    applied = [d for d in yaml.safe_load_all(proc.stdout) if d]
    kinds = sorted(d["kind"] for d in applied if d["kind"] != "List") or sorted(
        i["kind"] for d in applied for i in d.get("items", []))
    assert kinds == ["DaemonSet", "Namespace"], kinds
