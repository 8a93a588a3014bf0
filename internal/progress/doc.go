// Package progress shows what a long command is doing while it does it:
// resolution of a harness (resources done of the total known so far, bytes
// fetched, the slowest fetch still in flight) and a run (phase, elapsed
// time, agent turn, last tool call, model retries with their wait).
//
// Producers (packages resolve and run, through the runtimes' events) send
// Events to a Sink; a nil Sink is silent. The CLI owns the one Reporter of
// a command, which renders the events on stderr in one of three modes:
//
//   - Live (stderr is a terminal): one status line redrawn in place (the
//     spinner and line handling come from github.com/schollz/progressbar/v3
//     in its ANSI mode: the line is erased with "ESC[2K", redrawn after a
//     carriage return and cleared to its end with "ESC[0K"), and permanent
//     lines above it for what is worth keeping: each phase's end, each
//     network fetch, each retry; with Verbose also every turn, tool call
//     and cache hit. Close erases the status line and prints one summary.
//   - Plain (not a terminal): one line per event worth a line, each with a
//     UTC timestamp ("2006-01-02T15:04:05.000Z fullsend: …") and never an
//     escape sequence: phase start and end, each network fetch, each agent
//     turn and tool call (summarised), each retry with its wait.
//     Verbose adds fetch starts, cache hits and runtime notices.
//   - Quiet: nothing but warnings (and the command's error line).
//
// Notes and warnings go through Reporter.Writer, which erases the status
// line before writing so that lines never interleave with it; in quiet
// mode it drops "fullsend: note:" lines and keeps warnings.
//
// Colour (live mode only, never when the caller says NO_COLOR is set) is
// limited to static words of our own (the "fullsend" of the status line,
// "warning:", "failed", "ok") through github.com/mitchellh/colorstring;
// text that comes from elsewhere (URLs, tool calls an agent made, error
// messages) is never interpreted as markup.
//
// Text from elsewhere is untrusted: an agent chooses its tool-call
// arguments and a server its error messages. Every such string is
// sanitised before it reaches the terminal or a CI log (Sanitize, that is
// package termsafe, the one rule, which every printer of the CLI uses;
// notes and warnings included): control
// characters (escape sequences, carriage returns, newlines) and Unicode
// format characters (bidi overrides, zero-width and tag characters) are
// replaced, so it can neither move the cursor, recolour the terminal, nor
// start a line of its own (CI systems read commands from line starts).
package progress
