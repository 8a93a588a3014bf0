#!/bin/sh
# Fixture pre_script of the build harness. The library's real one checks its
# inputs on the runner before the sandbox exists; here it only proves the
# runner calls it.
set -eu
exit 0
