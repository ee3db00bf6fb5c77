#!/bin/sh
# Test double: an ordinary Python error (not a GPU failure), exit 1.
cat >&2 <<'TB'
Traceback (most recent call last):
  File "train.py", line 3, in <module>
    model = Net(
NameError: name 'Net' is not defined
TB
exit 1
