#!/bin/sh
# Fixture validation_loop.script: the schema check is fullsend's own; this
# extra hook accepts whatever passed it.
set -eu
exit 0
