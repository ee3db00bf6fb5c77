#!/bin/sh
# Test double: reports whether stdout and stderr are terminals.
if [ -t 1 ]; then echo "stdout-tty"; else echo "stdout-notty"; fi
if [ -t 2 ]; then echo "stderr-tty" >&2; else echo "stderr-notty" >&2; fi
