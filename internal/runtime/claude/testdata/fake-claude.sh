#!/bin/sh
# A stand-in for the Claude Code CLI: records how it was called (arguments,
# environment, working directory, prompt on stdin) into $FAKE_CLAUDE_DIR,
# writes the --debug-file and a session file like the real CLI, optionally
# writes $FAKE_CLAUDE_RESULT to $FAKE_CLAUDE_RESULT_PATH, then replays the
# recorded stream-json of $FAKE_CLAUDE_RECORDING, prints $FAKE_CLAUDE_STDERR
# on stderr and exits with $FAKE_CLAUDE_EXIT.
mkdir -p "$FAKE_CLAUDE_DIR"
printf '%s\n' "$@" > "$FAKE_CLAUDE_DIR/args"
cat > "$FAKE_CLAUDE_DIR/stdin"
env > "$FAKE_CLAUDE_DIR/env"
pwd > "$FAKE_CLAUDE_DIR/cwd"
while [ $# -gt 0 ]; do
	case "$1" in
	--debug-file) echo "[DEBUG] fake claude started" > "$2"; shift ;;
	esac
	shift
done
mkdir -p "$CLAUDE_CONFIG_DIR/projects/-sandbox-workspace-demo"
cp "$FAKE_CLAUDE_RECORDING" "$CLAUDE_CONFIG_DIR/projects/-sandbox-workspace-demo/session.jsonl"
[ -n "$FAKE_CLAUDE_RESULT" ] && printf '%s' "$FAKE_CLAUDE_RESULT" > "$FAKE_CLAUDE_RESULT_PATH"
cat "$FAKE_CLAUDE_RECORDING"
[ -n "$FAKE_CLAUDE_STDERR" ] && echo "$FAKE_CLAUDE_STDERR" >&2
exit "${FAKE_CLAUDE_EXIT:-0}"
