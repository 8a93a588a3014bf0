package script

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"

	"github.com/fullsend-ai/fullsend/internal/yamlx"
)

// The YAML decoder words its errors after Go types ("field run not found
// in type script.Step", "cannot construct !!int `3` into []script.Step").
// tidyYAMLError says the same in the file's own terms: the unknown key with
// the closest known one, the value with what was wanted there.

var (
	reUnknown   = regexp.MustCompile(`field (\S+) not found in type script\.(\w+)`)
	reConstruct = regexp.MustCompile("cannot construct (!!\\w+) (`[^`]*`) into (\\S+)")
	reGoType    = regexp.MustCompile(`\bscript\.(\w+)`)
)

// yamlNames are the keys of each decoded type, by Go type name.
var yamlNames = map[string][]string{}

func init() {
	for _, v := range []any{Script{}, Step{}, When{}, ReadOp{}, WriteOp{}, ExecOp{}, ExpectOp{}, FetchSkillOp{}, WriteResultOp{}, FailOp{}} {
		t := reflect.TypeOf(v)
		var names []string
		for i := 0; i < t.NumField(); i++ {
			if n, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ","); n != "" && n != "-" {
				names = append(names, n)
			}
		}
		yamlNames[t.Name()] = names
	}
}

// what describes a Go type of this package as the file sees it.
func what(goType string) string {
	list := strings.HasPrefix(goType, "[]")
	goType = strings.TrimPrefix(strings.TrimPrefix(goType, "[]"), "*")
	name := strings.TrimPrefix(goType, "script.")
	noun, detail := goType, ""
	switch {
	case name == "Step":
		noun, detail = "step", "a mapping with one operation: "+strings.Join(yamlNames["Step"][2:], ", ")
	case strings.HasPrefix(goType, "script."):
		noun, detail = "mapping", "keys: "+strings.Join(yamlNames[name], ", ")
	case strings.HasPrefix(goType, "map["):
		noun = "mapping"
	}
	switch {
	case list && detail != "":
		return "a list of " + noun + "s (each " + detail + ")"
	case list:
		return "a list of " + noun + "s"
	case detail != "":
		return "a " + noun + " (" + detail + ")"
	}
	return "a " + noun
}

func tidyYAMLError(err error) error {
	msg := err.Error()
	msg = reUnknown.ReplaceAllStringFunc(msg, func(m string) string {
		sub := reUnknown.FindStringSubmatch(m)
		out := fmt.Sprintf("unknown key %q", sub[1])
		if s := yamlx.Suggest(sub[1], yamlNames[sub[2]]); s != "" {
			out += fmt.Sprintf(" (did you mean %s?)", s)
		} else if names := yamlNames[sub[2]]; len(names) > 0 {
			out += " (known: " + strings.Join(names, ", ") + ")"
		}
		return out
	})
	msg = reConstruct.ReplaceAllStringFunc(msg, func(m string) string {
		sub := reConstruct.FindStringSubmatch(m)
		return fmt.Sprintf("%s is not %s", sub[2], what(sub[3]))
	})
	msg = reGoType.ReplaceAllString(msg, "$1")
	msg = strings.ReplaceAll(msg, "yaml: construct errors: ", "")
	return errors.New(msg)
}
