#!/bin/sh
# Test double: a GPU hang as the user sees it, output stops. With "ignore-term" it
# ignores SIGTERM (inherited by sleep), so only SIGKILL ends it.
[ "$1" = ignore-term ] && trap '' TERM
echo "MIOpen: searching solutions for conv 3x3"
exec sleep 1000
