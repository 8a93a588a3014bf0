package runtime

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"
)

// Flags several runtimes share (native and claude): one flag each, whose
// help names every runtime that honours it. AddSharedFlags registers them
// once; each runtime reads them with SharedModel and SharedMaxTurns.
const (
	FlagModel    = "model"
	FlagMaxTurns = "max-turns"
)

// AddSharedFlags registers --model and --max-turns on fl unless already
// there.
func AddSharedFlags(fl *pflag.FlagSet) {
	if fl.Lookup(FlagModel) == nil {
		fl.String(FlagModel, "", "native and claude runtimes: model `NAME` (native default: $FULLSEND_MODEL, the harness model:; claude: passed as --model, default the harness model:)")
	}
	if fl.Lookup(FlagMaxTurns) == nil {
		fl.Int(FlagMaxTurns, 0, "native and claude runtimes: at most `N` model turns (native default 50; claude default: config runtimes.claude.max_turns, none)")
	}
}

// SharedModel is --model when set on the command line (set), trimmed; an
// empty value is an error.
func SharedModel(fl *pflag.FlagSet) (v string, set bool, err error) {
	if !fl.Changed(FlagModel) {
		return "", false, nil
	}
	s, _ := fl.GetString(FlagModel)
	if v = strings.TrimSpace(s); v == "" {
		return "", true, fmt.Errorf("--%s: empty value", FlagModel)
	}
	return v, true, nil
}

// SharedMaxTurns is --max-turns when set on the command line (set); it
// must be positive.
func SharedMaxTurns(fl *pflag.FlagSet) (n int, set bool, err error) {
	if !fl.Changed(FlagMaxTurns) {
		return 0, false, nil
	}
	n, _ = fl.GetInt(FlagMaxTurns)
	if n <= 0 {
		return 0, true, fmt.Errorf("--%s %d: want a positive number", FlagMaxTurns, n)
	}
	return n, true, nil
}
