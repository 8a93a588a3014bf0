package script

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"

	"go.yaml.in/yaml/v4"

	"github.com/fullsend-ai/fullsend/internal/limit"
)

// MaxScriptSize bounds a script file.
const MaxScriptSize = 1 << 20

// Script is a parsed script file.
type Script struct {
	Path  string `yaml:"-"`
	Steps []Step `yaml:"steps"`
}

// Step is one operation. Exactly one op field is set.
type Step struct {
	Name string `yaml:"name"` // optional label used in events and errors
	When *When  `yaml:"when"`

	Read        *ReadOp        `yaml:"read"`
	Write       *WriteOp       `yaml:"write"`
	Exec        *ExecOp        `yaml:"exec"`
	Expect      *ExpectOp      `yaml:"expect"`
	FetchSkill  *FetchSkillOp  `yaml:"fetch_skill"`
	WriteResult *WriteResultOp `yaml:"write_result"`
	Say         *string        `yaml:"say"`
	Fail        *FailOp        `yaml:"fail"`

	line int
}

// When restricts a step to some iterations of the validation loop.
type When struct {
	Iteration     int `yaml:"iteration"`      // only this iteration
	FromIteration int `yaml:"from_iteration"` // this iteration and later
	// Feedback: true = only when the previous iteration failed validation,
	// false = only on a first attempt (no feedback).
	Feedback *bool `yaml:"feedback"`
}

// ReadOp reads a sandbox file (cat), optionally checking its content.
type ReadOp struct {
	Path           string `yaml:"path"`
	ExpectContains string `yaml:"expect_contains"`
	Save           string `yaml:"save"` // variable receiving the content
}

// WriteOp writes content to a sandbox file (parents created).
type WriteOp struct {
	Path    string `yaml:"path"`
	Content string `yaml:"content"`
}

// ExecOp runs a command in the sandbox: Args verbatim, or Cmd via sh -c.
type ExecOp struct {
	Args                 []string          `yaml:"args"`
	Cmd                  string            `yaml:"cmd"`
	Cwd                  string            `yaml:"cwd"`
	Env                  map[string]string `yaml:"env"`
	Stdin                string            `yaml:"stdin"`
	Timeout              time.Duration     `yaml:"timeout"`
	ExpectExit           *int              `yaml:"expect_exit"` // default 0
	AnyExit              bool              `yaml:"any_exit"`    // accept every exit status
	ExpectStdoutContains string            `yaml:"expect_stdout_contains"`
	ExpectOutput         string            `yaml:"expect_output"` // regexp over stdout+stderr
	Save                 string            `yaml:"save"`          // variable receiving trimmed stdout

	outputRe *regexp.Regexp
}

// ExpectOp checks a sandbox file.
type ExpectOp struct {
	Path        string `yaml:"path"`
	Exists      *bool  `yaml:"exists"` // default true
	Contains    string `yaml:"contains"`
	NotContains string `yaml:"not_contains"`
	Matches     string `yaml:"matches"` // regexp

	matchRe *regexp.Regexp
}

// FetchSkillOp runs `fullsend fetch-skill URL` in the sandbox and stores
// the printed skill directory in Save (default SKILL_DIR).
type FetchSkillOp struct {
	URL  string `yaml:"url"`
	Save string `yaml:"save"`
}

// WriteResultOp writes the agent result to RunInput.ResultPath: Value
// (any YAML value, written as JSON), JSON (raw text, written verbatim, so
// tests can write invalid results), or File (a sandbox file copied).
type WriteResultOp struct {
	Value any    `yaml:"value"`
	JSON  string `yaml:"json"`
	File  string `yaml:"file"`
}

// FailOp ends the run as a failed agent.
type FailOp struct {
	Message  string `yaml:"message"`
	ExitCode int    `yaml:"exit_code"` // default 1
}

// Op names the step's operation.
func (s *Step) Op() string {
	ops := s.ops()
	if len(ops) == 1 {
		return ops[0]
	}
	return "?"
}

func (s *Step) ops() []string {
	var ops []string
	add := func(set bool, name string) {
		if set {
			ops = append(ops, name)
		}
	}
	add(s.Read != nil, "read")
	add(s.Write != nil, "write")
	add(s.Exec != nil, "exec")
	add(s.Expect != nil, "expect")
	add(s.FetchSkill != nil, "fetch_skill")
	add(s.WriteResult != nil, "write_result")
	add(s.Say != nil, "say")
	add(s.Fail != nil, "fail")
	return ops
}

// Load reads and parses a script file.
func Load(path string) (*Script, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("script %s: %w", path, err)
	}
	defer f.Close()
	data, err := limit.ReadAll(f, MaxScriptSize)
	if err != nil {
		return nil, fmt.Errorf("script %s: %w", path, err)
	}
	return Parse(path, data)
}

// Parse parses script YAML strictly: unknown fields, steps with no or
// several operations, missing required fields and bad regexps are errors
// naming the line.
func Parse(name string, data []byte) (*Script, error) {
	var root yaml.Node
	if err := yaml.Load(data, &root); err != nil {
		return nil, fmt.Errorf("script %s: %w", name, err)
	}
	var sc Script
	if err := yaml.Load(data, &sc, yaml.WithKnownFields()); err != nil {
		return nil, fmt.Errorf("script %s: %w", name, tidyYAMLError(err))
	}
	sc.Path = name
	lines := stepLines(&root)
	if len(sc.Steps) == 0 {
		return nil, fmt.Errorf("script %s: no steps", name)
	}
	for i := range sc.Steps {
		st := &sc.Steps[i]
		if i < len(lines) {
			st.line = lines[i]
		}
		if err := st.check(); err != nil {
			return nil, fmt.Errorf("script %s: line %d: step %d: %w", name, st.line, i+1, err)
		}
	}
	return &sc, nil
}

// stepLines finds the line of each item of the top-level "steps" sequence.
func stepLines(root *yaml.Node) []int {
	n := root
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	if n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == "steps" && n.Content[i+1].Kind == yaml.SequenceNode {
			var out []int
			for _, it := range n.Content[i+1].Content {
				out = append(out, it.Line)
			}
			return out
		}
	}
	return nil
}

var varNameRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func checkSave(name string) error {
	if name != "" && !varNameRe.MatchString(name) {
		return fmt.Errorf("save: %q is not a variable name", name)
	}
	return nil
}

func (s *Step) check() error {
	ops := s.ops()
	switch len(ops) {
	case 0:
		return errors.New("no operation (one of read, write, exec, expect, fetch_skill, write_result, say, fail)")
	case 1:
	default:
		return fmt.Errorf("several operations in one step (%s)", strings.Join(ops, ", "))
	}
	if s.When != nil && s.When.Iteration < 0 || s.When != nil && s.When.FromIteration < 0 {
		return errors.New("when: iterations count from 1")
	}
	var err error
	switch {
	case s.Read != nil:
		if s.Read.Path == "" {
			return errors.New("read: path is required")
		}
		return checkSave(s.Read.Save)
	case s.Write != nil:
		if s.Write.Path == "" {
			return errors.New("write: path is required")
		}
	case s.Exec != nil:
		e := s.Exec
		if (len(e.Args) == 0) == (e.Cmd == "") {
			return errors.New("exec: exactly one of args or cmd is required")
		}
		if e.AnyExit && e.ExpectExit != nil {
			return errors.New("exec: any_exit and expect_exit are exclusive")
		}
		if e.ExpectOutput != "" {
			if e.outputRe, err = regexp.Compile(e.ExpectOutput); err != nil {
				return fmt.Errorf("exec: expect_output: %w", err)
			}
		}
		return checkSave(e.Save)
	case s.Expect != nil:
		if s.Expect.Path == "" {
			return errors.New("expect: path is required")
		}
		if s.Expect.Matches != "" {
			if s.Expect.matchRe, err = regexp.Compile(s.Expect.Matches); err != nil {
				return fmt.Errorf("expect: matches: %w", err)
			}
		}
		if s.Expect.Exists != nil && !*s.Expect.Exists && (s.Expect.Contains != "" || s.Expect.NotContains != "" || s.Expect.Matches != "") {
			return errors.New("expect: content checks need exists: true")
		}
	case s.FetchSkill != nil:
		if s.FetchSkill.URL == "" {
			return errors.New("fetch_skill: url is required")
		}
		return checkSave(s.FetchSkill.Save)
	case s.WriteResult != nil:
		w := s.WriteResult
		n := 0
		if w.Value != nil {
			n++
		}
		if w.JSON != "" {
			n++
		}
		if w.File != "" {
			n++
		}
		if n != 1 {
			return errors.New("write_result: exactly one of value, json or file is required")
		}
	case s.Fail != nil:
		if s.Fail.ExitCode < 0 || s.Fail.ExitCode > 255 {
			return errors.New("fail: exit_code must be 0-255")
		}
	}
	return nil
}
