#!/bin/sh
# Test double: exits with the status given.
exit "$1"
