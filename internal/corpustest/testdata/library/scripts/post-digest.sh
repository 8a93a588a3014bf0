#!/bin/sh
# Fixture post_script of the digest harness. The library's real one acts on
# the validated result with tokens that never enter the sandbox.
set -eu
exit 0
