package event

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const prEvent = `{"repo":"o/r","entity":{"kind":"change_proposal","id":7,"url":"https://github.com/o/r/pull/7"},
"transition":{"kind":"label_changed","label":{"name":"fullsend","action":"added"}},
"actor":{"id":"alice","kind":"human","role":"write","is_entity_author":true},
"state":{"labels":["fullsend","bug"],"change_proposal":{"id":7,"head_repo":"o/r","base_repo":"o/r","is_fork":false}},
"source":{"system":"github","raw_type":"pull_request","raw_action":"labeled"}}`

func TestCompileAndMatch(t *testing.T) {
	ev, err := Parse([]byte(prEvent))
	if err != nil {
		t.Fatal(err)
	}
	for expr, want := range map[string]bool{
		`event.transition.kind == "label_changed" && event.transition.label.name == "fullsend"`: true,
		`"bug" in event.state.labels && !event.state.change_proposal.is_fork`:                   true,
		`event.actor.role in ["admin", "maintain"]`:                                             false,
		`event.entity.id == 7 && event.source.system == "github"`:                               true,
		`event.transition.comment.body.startsWith("/fullsend")`:                                 false,
		`has(event.transition.label) && !has(event.transition.comment)`:                         true,
	} {
		p, err := Compile(expr)
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		got, err := p.Match(ev)
		if err != nil || got != want {
			t.Errorf("%s = %v, %v; want %v", expr, got, err, want)
		}
	}
}

func TestCompileErrors(t *testing.T) {
	for expr, want := range map[string]string{
		`event.transiton.kind == "opened"`: "undefined field 'transiton'",
		`event.repo`:                       "must be a bool expression, not string",
		`event.repo ==`:                    "1:14: Syntax error",
		`evnt.repo == "x"`:                 "undeclared reference to 'evnt'",
		`event.entity.id == "7"`:           "no matching overload",
		"":                                 "empty expression",
		strings.Repeat("x", MaxExprLen+1):  "longer than 4096 bytes",
	} {
		_, err := Compile(expr)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Compile(%.30q) = %v, want %q", expr, err, want)
		}
	}
}

// TestCostLimit: an expression whose cost grows with the event stops at
// the limit instead of running on.
func TestCostLimit(t *testing.T) {
	ev, _ := Parse([]byte(prEvent))
	ev.State.Labels = make([]string, 600) // 360 000 comparisons, over CostLimit
	p, err := Compile(`event.state.labels.all(a, event.state.labels.all(b, a == b))`)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Match(ev); !errors.Is(err, ErrCost) {
		t.Fatalf("err = %v, want ErrCost", err)
	}
}

func TestReadFile(t *testing.T) {
	d := t.TempDir()
	big := filepath.Join(d, "big.json")
	if err := os.WriteFile(big, []byte(strings.Repeat(" ", MaxFileSize+1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(big); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("big: %v", err)
	}
	for body, want := range map[string]string{
		`{"repo":"o/r","bogus":1}`: `unknown field "bogus"`,
		`{"repo":"o/r"}`:           "entity.kind is required",
		`[]`:                       "cannot unmarshal array",
	} {
		f := filepath.Join(d, "e.json")
		if err := os.WriteFile(f, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadFile(f); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), f) {
			t.Errorf("%s: %v, want %q", body, err, want)
		}
	}
	if _, err := ReadFile(filepath.Join(d, "none.json")); err == nil || !strings.Contains(err.Error(), "none.json: no such file") {
		t.Errorf("missing: %v", err)
	}
}
