#!/bin/sh
# Test double: writes the same file to stdout and stderr concurrently.
cat "$1" &
cat "$1" >&2
wait
