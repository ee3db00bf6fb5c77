#!/usr/bin/env bash
# One idempotent set-up: install the Debian 12 packages rmcp needs (only when missing),
# then configure and build. Works as root or through sudo. The binary ends up at build/rmcp.
set -euo pipefail
cd "$(dirname "$0")/.."

# Build and test dependencies, all from Debian 12 (bookworm).
PACKAGES=(
  cmake ninja-build g++ pkg-config
  libcli11-dev libfmt-dev nlohmann-json3-dev libtomlplusplus-dev
  libhyperscan-dev libzstd-dev libarchive-dev zlib1g-dev
  # the index of public threads (src/xapian/, src/core/similar/): opened only by explain and run
  libxapian-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  hipcc libamdhip64-dev rocminfo
  python3-torch libtorch-dev pybind11-dev python3-pybind11 python3-pytest python3-pytest-xdist
  clang-14 libclang-rt-14-dev
  # scripts/format.sh (the formatting check in scripts/test.sh)
  clang-format
  librocrand1 libhsa-runtime64-1
  # the installed-product tests (tests/install): a venv with Debian's setuptools and wheel
  # (pip install --no-build-isolation ./python), dpkg-shlibdeps for the .deb's Depends, man -l
  python3-venv python3-pip python3-setuptools python3-wheel dpkg-dev man-db
  # tests/cli/test_probe_report.py loads `rmcp probe --html` pages in a real browser
  # (headless). About 80 MB; installed in under 10 s on the build VM.
  chromium
  # tests/cli/test_terminal.py runs doctor in a real terminal of a known size
  tmux
  # tests/fleet (docs/fleet.md): rmcp's metrics checked by the real node_exporter and Prometheus
  # (promtool too), on loopback. Their own services are not used.
  prometheus prometheus-node-exporter
  # tests/fleet/test_kubernetes.py reads the rendered manifests
  python3-yaml
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "rmcp setup: installing ${#missing[@]} Debian packages: ${missing[*]}" >&2
  SUDO=()
  [[ $(id -u) -eq 0 ]] || SUDO=(sudo)
  "${SUDO[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

cmake --preset default >/dev/null
cmake --build build -j"$(nproc)"

# rmcp.torch from the checkout: nothing is written into the system's site-packages (the newcomer
# review, finding 25: a .pth there shadowed the installed package for every user and outlived
# `apt remove`). The tests put the checkout's python/ on sys.path or PYTHONPATH themselves
# (tests/python/torch_support.py, the probe's workers); to use it by hand, run
# `PYTHONPATH=$PWD/python python3 ...` or install it into a venv (docs/install.md).
# Earlier versions of this script wrote <purelib>/rmcp.pth: removed when it is exactly that file
# (scripts/old-pth.sh).
source scripts/old-pth.sh
rmcp_remove_old_pth "$(/usr/bin/python3 -c 'import sysconfig; print(sysconfig.get_path("purelib"))')" "$(pwd)"
