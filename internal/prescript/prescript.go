// Package prescript reads the pre-script output protocol (v1 of upstream
// fullsend's contract): `fullsend run` creates an empty file in the run
// directory and names it in FULLSEND_PRESCRIPT_OUTPUT; the harness's
// pre_script appends key=value lines to it; "skipped=true" (with an
// optional "reason=…") ends the run as skipped, exit 0, before any sandbox
// exists. A pre_script exiting with status 78 (the CI "neutral" code)
// asks for the same skip.
//
// The grammar is strict and every doubt is an error, because a typo read
// as "proceed" would start the very agent run the script meant to
// prevent:
//
//   - one "key=value" per line; the first "=" splits; white space around
//     key and value is dropped; blank lines and lines whose first non-blank
//     character is "#" are ignored;
//   - keys match [A-Za-z_][A-Za-z0-9_-]*; a key equal to a reserved key
//     ("skipped", "reason") except for case is an error;
//   - values hold no control characters (U+0000–U+001F, U+007F);
//   - "skipped" is "true" or "false", nothing else (not empty, not quoted);
//   - no "key<<DELIMITER" heredocs; the last assignment of a key wins;
//   - the file is at most MaxSize bytes and must still exist after the
//     script ran.
package prescript

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/fullsend-ai/fullsend/internal/limit"
	"github.com/fullsend-ai/fullsend/internal/openflag"
)

// Env is the variable naming the output file in the pre_script's
// environment.
const Env = "FULLSEND_PRESCRIPT_OUTPUT"

// FileName is the output file's name inside the run directory.
const FileName = "prescript.out"

// ExitSkip is the exit status by which a pre_script asks for a skip.
const ExitSkip = 78

// MaxSize bounds the output file.
const MaxSize = 1 << 20

// MaxReason bounds a skip reason kept in the report and the CI outputs.
const MaxReason = 1024

// Result is what a pre_script reported.
type Result struct {
	Skipped bool
	Reason  string
	// Outputs are the other keys, relayed as they are (report.json
	// prescript_outputs).
	Outputs map[string]string
}

// Create makes the empty output file (0600, not following a symlink, not
// replacing an existing file) and returns its path.
func Create(dir string) (string, error) {
	path := dir + string(os.PathSeparator) + FileName
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY|openflag.NoFollow, 0o600)
	if err != nil {
		return "", fmt.Errorf("pre_script output file: %w", err)
	}
	return path, f.Close()
}

// Read reads and parses the output file after the script ran.
func Read(path string) (Result, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|openflag.NoFollow, 0)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return Result{}, fmt.Errorf("%s %s: the file is gone (the pre_script removed it)", Env, path)
		}
		return Result{}, fmt.Errorf("%s %s: %w", Env, path, err)
	}
	defer f.Close()
	data, err := limit.ReadAll(f, MaxSize)
	if err != nil {
		return Result{}, fmt.Errorf("%s %s: %w", Env, path, err)
	}
	r, err := Parse(string(data))
	if err != nil {
		return Result{}, fmt.Errorf("%s %s: %w", Env, path, err)
	}
	return r, nil
}

var reserved = []string{"skipped", "reason"}

// Parse reads the protocol's text.
func Parse(text string) (Result, error) {
	r := Result{Outputs: map[string]string{}}
	skipped := ""
	haveSkipped := false
	for n, line := range strings.Split(text, "\n") {
		ln := n + 1
		line = strings.TrimSuffix(line, "\r")
		t := strings.TrimSpace(line)
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		key, value, ok := strings.Cut(t, "=")
		if !ok {
			if k, _, heredoc := strings.Cut(t, "<<"); heredoc && validKey(strings.TrimSpace(k)) {
				return Result{}, fmt.Errorf("line %d: %q: multi-line values (KEY<<DELIMITER) are not part of the protocol; write one key=value line", ln, t)
			}
			return Result{}, fmt.Errorf("line %d: %q: want key=value", ln, t)
		}
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		if !validKey(key) {
			return Result{}, fmt.Errorf("line %d: key %q: want [A-Za-z_][A-Za-z0-9_-]*", ln, key)
		}
		if strings.ContainsFunc(value, isControl) {
			return Result{}, fmt.Errorf("line %d: the value of %s holds a control character", ln, key)
		}
		switch key {
		case "skipped":
			skipped, haveSkipped = value, true
		case "reason":
			r.Reason = value
		default:
			for _, rk := range reserved {
				if strings.EqualFold(key, rk) {
					return Result{}, fmt.Errorf("line %d: key %q: reserved keys are lower-case (%s)", ln, key, rk)
				}
			}
			r.Outputs[key] = value
		}
	}
	if haveSkipped {
		switch skipped {
		case "true":
			r.Skipped = true
		case "false":
		default:
			return Result{}, fmt.Errorf("skipped=%q: want true or false", skipped)
		}
	}
	if len(r.Reason) > MaxReason {
		r.Reason = truncate(r.Reason, MaxReason)
	}
	return r, nil
}

func validKey(k string) bool {
	if k == "" {
		return false
	}
	for i, c := range k {
		switch {
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		case i > 0 && (c == '-' || c >= '0' && c <= '9'):
		default:
			return false
		}
	}
	return true
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

// truncate cuts s to at most n bytes, dropping a rune cut in two.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "")
}
