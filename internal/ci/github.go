package ci

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// EscapeData escapes the message of a workflow command (the text after
// the second "::") as GitHub's runner unescapes it: "%" is "%25", CR is
// "%0D", LF is "%0A". After escaping, the value is one line and cannot end
// the command early or start another one.
func EscapeData(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	r := strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A")
	return r.Replace(s)
}

// EscapeProperty escapes a property value of a workflow command
// (file=…,title=…): as EscapeData, and also ":" as "%3A" and "," as "%2C",
// so a value cannot close the property list ("::") or add a property.
func EscapeProperty(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	r := strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C")
	return r.Replace(s)
}

// Levels of an annotation.
const (
	LevelError   = "error"
	LevelWarning = "warning"
	LevelNotice  = "notice"
)

// Annotation is a GitHub workflow annotation: an error, warning or notice
// attached to a file and line in the checks UI.
type Annotation struct {
	Level   string // LevelError, LevelWarning or LevelNotice
	File    string // path relative to the repository root; "" = none
	Line    int    // 1-based; 0 = none
	Col     int
	Title   string
	Message string
}

// String is the workflow command, one line without its newline:
// "::error file=F,line=L,col=C,title=T::MESSAGE", every value escaped.
func (a Annotation) String() string {
	level := a.Level
	switch level {
	case LevelError, LevelWarning, LevelNotice:
	default:
		level = LevelError
	}
	var props []string
	if a.File != "" {
		props = append(props, "file="+EscapeProperty(a.File))
		if a.Line > 0 {
			props = append(props, "line="+strconv.Itoa(a.Line))
			if a.Col > 0 {
				props = append(props, "col="+strconv.Itoa(a.Col))
			}
		}
	}
	if a.Title != "" {
		props = append(props, "title="+EscapeProperty(a.Title))
	}
	cmd := "::" + level
	if len(props) > 0 {
		cmd += " " + strings.Join(props, ",")
	}
	return cmd + "::" + EscapeData(a.Message)
}

// Output is one step output (name and value) for $GITHUB_OUTPUT.
type Output struct{ Name, Value string }

// FormatOutputs renders outputs in $GITHUB_OUTPUT's multi-line form,
// "NAME<<DELIM\nVALUE\nDELIM\n", each with a fresh random delimiter that
// does not occur in the value (so a value cannot end its own entry and
// add another). Names must be letters, digits, "-" and "_".
func FormatOutputs(outs []Output) (string, error) {
	var b strings.Builder
	for _, o := range outs {
		if !validOutputName(o.Name) {
			return "", fmt.Errorf("step output name %q: want letters, digits, - and _", o.Name)
		}
		delim, err := delimiter(o.Value)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "%s<<%s\n%s\n%s\n", o.Name, delim, o.Value, delim)
	}
	return b.String(), nil
}

func validOutputName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r == '-' || r == '_' || r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r))) {
			return false
		}
	}
	return true
}

// delimiter returns "ghadelimiter_<32 random hex digits>", drawn again in
// the (practically impossible) case the value contains it.
func delimiter(value string) (string, error) {
	for range 8 {
		var b [16]byte
		if _, err := rand.Read(b[:]); err != nil {
			return "", err
		}
		d := "ghadelimiter_" + hex.EncodeToString(b[:])
		if !strings.Contains(value, d) {
			return d, nil
		}
	}
	return "", errors.New("step outputs: no delimiter absent from the value")
}

// AppendFile appends text to the file a CI variable names
// ($GITHUB_OUTPUT, $GITHUB_STEP_SUMMARY): one write, to a file the runner
// created (never created here; a missing file is an error naming the
// variable).
func AppendFile(variable, path, text string) error {
	if path == "" {
		return fmt.Errorf("%s is not set", variable)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return fmt.Errorf("%s: %w", variable, err)
	}
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", variable, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("%s: %w", variable, err)
	}
	return nil
}
