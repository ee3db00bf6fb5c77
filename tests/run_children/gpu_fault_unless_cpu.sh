#!/bin/sh
# Test double for the retry ladder: records the environment each attempt got, then faults
# like gpu_fault.sh unless the GPU is hidden (HIP_VISIBLE_DEVICES set and empty).
log=$1
printf 'attempt HSA_OVERRIDE_GFX_VERSION=%s MIOPEN_DEBUG_CONV_GEMM=%s MIOPEN_DEBUG_CONV_DIRECT_OCL_WRW53=%s HIP_VISIBLE_DEVICES=%s\n' \
  "${HSA_OVERRIDE_GFX_VERSION-unset}" "${MIOPEN_DEBUG_CONV_GEMM-unset}" "${MIOPEN_DEBUG_CONV_DIRECT_OCL_WRW53-unset}" \
  "${HIP_VISIBLE_DEVICES-unset}" >> "$log"
if [ "${HIP_VISIBLE_DEVICES+set}" = set ] && [ -z "$HIP_VISIBLE_DEVICES" ]; then
  echo "training on cpu: done"
  exit 0
fi
echo "Memory access fault by GPU node-1 (Agent handle: 0x55d0c8a0b2c0) on address 0x7f1c2a400000. Reason: Page not present or supervisor privilege." >&2
kill -s ABRT $$
