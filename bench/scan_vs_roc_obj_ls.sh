#!/usr/bin/env bash
# Whole-command timings: `rmcp scan FILE` against `roc-obj-ls FILE` for every ROCm library
# Debian installs here, plus max RSS for a small and a big file (docs/PERFORMANCE.md).
# Usage: bench/scan_vs_roc_obj_ls.sh [build-dir]   (needs hyperfine, roc-obj-ls)
set -euo pipefail
BUILD=${1:-build}
RMCP="$BUILD/rmcp"
# Every ROCm library Debian 12 packages (those installed here): real files, not the links.
LIBS=()
for f in /usr/lib/x86_64-linux-gnu/lib{rocrand,hiprand,rocsparse,hipsparse,hsa-runtime64,hsakmt,amdhip64,amd_comgr,hiprtc-builtins,rocm_smi64}.so.*; do
  [[ -f $f && ! -L $f ]] && LIBS+=("$f")
done
for f in "${LIBS[@]}"; do
  echo "== $f ($(stat -c %s "$f") bytes)"
  hyperfine -N -i --warmup 3 --runs 20 --export-json "/tmp/rmcp-scan-bench-$(basename "$f").json" \
    "$RMCP scan $f" "roc-obj-ls $f" 2>/dev/null | grep -E "Time|±|faster" || true
done
echo "== all files: one rmcp command vs roc-obj-ls on each file"
hyperfine -N -i --warmup 2 --runs 10 "$RMCP scan ${LIBS[*]}" \
  "sh -c 'for f in ${LIBS[*]}; do roc-obj-ls \$f; done >/dev/null 2>&1'" 2>/dev/null | grep -E "Time|±|faster" || true
echo "== max RSS (KiB)"
for f in "${LIBS[@]}"; do
  printf '%s rmcp %s roc-obj-ls %s\n' "$(basename "$f")" \
    "$(/usr/bin/time -f %M "$RMCP" scan "$f" 2>&1 >/dev/null | tail -1)" \
    "$(/usr/bin/time -f %M roc-obj-ls "$f" 2>&1 >/dev/null | tail -1)"
done

echo "== memory does not grow with file size: a sparse 4 GiB bundle (4 x 1 GiB entries)"
BIG=/tmp/rmcp-scan-bench-big.co
/usr/bin/python3 - "$BIG" <<'PY'
import struct, sys
ids = [b"hipv4-amdgcn-amd-amdhsa--gfx1030", b"hipv4-amdgcn-amd-amdhsa--gfx1031",
       b"hipv4-amdgcn-amd-amdhsa--gfx1100", b"hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-"]
gib = 1 << 30
hdr = b"__CLANG_OFFLOAD_BUNDLE__" + struct.pack("<Q", len(ids))
for i, e in enumerate(ids):
    hdr += struct.pack("<QQQ", 4096 + i * gib, gib, len(e)) + e
with open(sys.argv[1], "wb") as f:
    f.write(hdr)
    f.truncate(4096 + len(ids) * gib)   # sparse: nothing but the table is on disk
PY
printf 'small (%s bytes): %s KiB\n' "$(stat -c %s "${LIBS[0]}")" "$(/usr/bin/time -f %M "$RMCP" scan "${LIBS[0]}" 2>&1 >/dev/null | tail -1)"
printf 'big   (%s bytes): %s KiB\n' "$(stat -c %s "$BIG")" "$(/usr/bin/time -f %M "$RMCP" scan "$BIG" 2>&1 >/dev/null | tail -1)"
rm -f "$BIG"
