package builtin

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/fullsend-ai/fullsend/internal/runtime"
)

// Flags are the command-line flags of every runtime (runtime.FlagOwner),
// bound to one command.
type Flags struct {
	names []string
	flags []runtime.Flags
}

// AddFlags registers every runtime's flags on fl.
func AddFlags(fl *pflag.FlagSet) *Flags {
	f := &Flags{}
	for _, e := range entries {
		fo, ok := e.new().(runtime.FlagOwner)
		if !ok {
			continue
		}
		rf := fo.NewFlags()
		rf.Add(fl)
		f.names = append(f.names, e.name)
		f.flags = append(f.flags, rf)
	}
	return f
}

// Selected is the runtime a flag set on the command line chooses when
// --runtime is not given (runtime.Selector), or "".
func (f *Flags) Selected(fl *pflag.FlagSet) string {
	for i, rf := range f.flags {
		if s, ok := rf.(runtime.Selector); ok && s.Selects(fl) {
			return f.names[i]
		}
	}
	return ""
}

// Parsed are the runtimes' settings from the command line.
type Parsed struct {
	// Settings are each runtime's settings (its Flags.Parse), by name.
	Settings map[string]runtime.Config
	given    map[string][]string
	order    []string
}

// Parse checks every runtime's flags set on fl; the first bad value is
// the error (bad usage).
func (f *Flags) Parse(fl *pflag.FlagSet) (*Parsed, error) {
	p := &Parsed{Settings: map[string]runtime.Config{}, given: map[string][]string{}, order: f.names}
	for i, rf := range f.flags {
		c, given, err := rf.Parse(fl)
		if err != nil {
			return nil, err
		}
		if c != nil {
			p.Settings[f.names[i]] = c
		}
		p.given[f.names[i]] = given
	}
	return p, nil
}

// Check refuses flags set on the command line that runtime rt does not
// take: "--model-api: only for the native runtime (runtime is "claude")".
func (p *Parsed) Check(rt string) error {
	own := p.given[rt]
	for _, n := range p.order {
		if n == rt {
			continue
		}
		var only []string
		for _, g := range p.given[n] {
			if !slices.Contains(own, g) {
				only = append(only, g)
			}
		}
		if len(only) > 0 {
			return fmt.Errorf("%s: only for the %s runtime (runtime is %q)", strings.Join(only, ", "), n, rt)
		}
	}
	return nil
}
