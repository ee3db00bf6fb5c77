#!/bin/sh
# Test double: prints each named variable, or that it is unset.
for name in "$@"; do
  eval "if [ \"\${$name+set}\" = set ]; then printf '%s=%s\n' $name \"\${$name}\"; else echo $name unset; fi"
done
