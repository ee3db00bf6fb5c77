#!/bin/sh
# Test double: dies of SIGSEGV without any recognisable message.
echo "about to crash"
kill -s SEGV $$
