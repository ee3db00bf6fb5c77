#!/bin/sh
# Test double: a training step that dies of a GPU memory fault (ROCr's message format,
# docs/domain.md "Crash signatures users see"), then SIGABRT like the ROCm runtime's abort().
echo "epoch 1 step 10 loss 0.693"
printf 'epoch 1 step 20 loss 0.412'   # a partial line: must reach the user as is
echo "Memory access fault by GPU node-1 (Agent handle: 0x55d0c8a0b2c0) on address 0x7f1c2a400000. Reason: Page not present or supervisor privilege." >&2
echo "Failed to fetch queues snapshot" >&2
kill -s ABRT $$
