#!/bin/sh
# Test double: records the signals it receives in $1. SIGINT is noted and ignored (a
# stubborn job, so the second Ctrl-C has to kill it); SIGTERM and SIGHUP end it with 42.
out=$1
trap 'echo INT >> "$out"' INT
trap 'echo TERM >> "$out"; exit 42' TERM
trap 'echo HUP >> "$out"; exit 42' HUP
echo ready
while :; do sleep 0.05; done
