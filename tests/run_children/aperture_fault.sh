#!/bin/sh
# Test double: the ROCr line that three kb entries recognise (memory-access-fault, and the HIP
# and HSA family entries), then SIGABRT. What the summary says about it: the specific entry
# only, the line once (newcomer review, finding 10).
echo "epoch 1 step 10 loss 0.693"
echo ":0:rocdevice.cpp            :2614: 1234567890 us: [pid:1234 tid:0x7f] Callback: Queue 0x7f00 aborting with error : HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION: The agent attempted to access memory beyond the largest legal address. code: 0x29" >&2
kill -s ABRT $$
