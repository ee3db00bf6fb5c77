#!/usr/bin/env bash
# Whole-command timings: `rmcp scan FILE` against `roc-obj-ls FILE` for every ROCm library
# Debian installs here, plus max RSS for a small and a big file (docs/PERFORMANCE.md).
# Usage: bench/scan_vs_roc_obj_ls.sh [build-dir]   (needs hyperfine, roc-obj-ls)
set -euo pipefail
BUILD=${1:-build}
RMCP="$BUILD/rmcp"
LIBS=()
for f in /usr/lib/x86_64-linux-gnu/librocrand.so.1.1 \
         /usr/lib/x86_64-linux-gnu/libhsa-runtime64.so.1.5.0 \
         /usr/lib/x86_64-linux-gnu/libamdhip64.so.5.2.21153 \
         /usr/lib/x86_64-linux-gnu/libamd_comgr.so.2.4.0 \
         /usr/lib/x86_64-linux-gnu/libhiprtc-builtins.so.5.2.21153 \
         /usr/lib/x86_64-linux-gnu/librocsparse.so.0.1; do
  [[ -f $f ]] && LIBS+=("$f")
done
for f in "${LIBS[@]}"; do
  echo "== $f ($(stat -c %s "$f") bytes)"
  hyperfine -N -i --warmup 3 --runs 20 --export-json "/tmp/rmcp-scan-bench-$(basename "$f").json" \
    "$RMCP scan $f" "roc-obj-ls $f" 2>/dev/null | grep -E "Time|±|faster" || true
done
echo "== all files in one command"
hyperfine -N --warmup 2 --runs 10 "$RMCP scan ${LIBS[*]}" 2>/dev/null | grep -E "Time" || true
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
