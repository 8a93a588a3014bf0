package hooks

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/fullsend-ai/fullsend/internal/config"
)

// AllowRule is one entry of a tool allowlist: a tool name (or a prefix
// ending in '*', e.g. "mcp__github__*") and, for Bash, optionally the
// commands allowed: "Bash(gh,jq)" allows command lines whose every simple
// command starts with gh or jq. "Bash(gh:*)" and "Bash(gh *)" (Claude Code
// permission syntax) mean the same as "Bash(gh)".
type AllowRule struct {
	Tool     string
	Commands []string // nil: any use of the tool
}

// ParseAllowlist parses a comma list of rules; commas inside parentheses
// separate commands. An empty string is an empty list (no restriction).
func ParseAllowlist(s string) ([]AllowRule, error) {
	var rules []AllowRule
	depth, start := 0, 0
	var entries []string
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
			if depth > 1 {
				return nil, fmt.Errorf("tool allowlist %q: nested parentheses", s)
			}
		case ')':
			depth--
			if depth < 0 {
				return nil, fmt.Errorf("tool allowlist %q: unbalanced ')'", s)
			}
		case ',':
			if depth == 0 {
				entries = append(entries, s[start:i])
				start = i + 1
			}
		}
	}
	if depth != 0 {
		return nil, fmt.Errorf("tool allowlist %q: unbalanced '('", s)
	}
	entries = append(entries, s[start:])
	for _, e := range entries {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		r, err := parseAllowRule(e)
		if err != nil {
			return nil, fmt.Errorf("tool allowlist entry %q: %w", e, err)
		}
		rules = append(rules, r)
	}
	return rules, nil
}

func parseAllowRule(e string) (AllowRule, error) {
	name, args, hasArgs := strings.Cut(e, "(")
	name = strings.TrimSpace(name)
	if !validToolPattern(name) {
		return AllowRule{}, fmt.Errorf("tool name must be letters, digits, '_' or '-' (optionally ending in '*')")
	}
	r := AllowRule{Tool: name}
	if !hasArgs {
		return r, nil
	}
	if !strings.HasSuffix(args, ")") {
		return AllowRule{}, fmt.Errorf("text after ')'")
	}
	if name != "Bash" {
		return AllowRule{}, fmt.Errorf("only Bash takes a command list")
	}
	for _, c := range strings.Split(strings.TrimSuffix(args, ")"), ",") {
		c = strings.TrimSpace(c)
		c = strings.TrimSuffix(c, ":*")
		c = strings.TrimSuffix(c, " *")
		if !validCommand(c) {
			return AllowRule{}, fmt.Errorf("command %q must be a single program name (letters, digits, . _ + -)", c)
		}
		r.Commands = append(r.Commands, c)
	}
	if len(r.Commands) == 0 {
		return AllowRule{}, fmt.Errorf("empty command list")
	}
	return r, nil
}

func validToolPattern(n string) bool {
	if n == "" {
		return false
	}
	for i := 0; i < len(n); i++ {
		c := n[i]
		if c == '*' && i == len(n)-1 && i > 0 {
			continue
		}
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// renamedTools maps a Claude Code tool's current name to the name it had
// before: agent definitions written for the old name (tools: Task) keep
// working with a CLI that calls the tool "Agent".
var renamedTools = map[string]string{"Agent": "Task"}

func (r AllowRule) matchesTool(tool string) bool {
	if p, ok := strings.CutSuffix(r.Tool, "*"); ok {
		return strings.HasPrefix(tool, p)
	}
	return r.Tool == tool || (renamedTools[tool] != "" && r.Tool == renamedTools[tool])
}

// validCommand reports whether c can name a program in a Bash(...) rule:
// letters, digits and . _ + -, not starting with '-' or '.'. The set is
// closed so a canonical allowlist can be quoted into a hook command line.
func validCommand(c string) bool {
	if c == "" || c[0] == '-' || c[0] == '.' {
		return false
	}
	for i := 0; i < len(c); i++ {
		ch := c[i]
		if !(ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || ch == '.' || ch == '_' || ch == '+' || ch == '-') {
			return false
		}
	}
	return true
}

// FormatAllowlist renders rules in canonical form ("Bash(gh,jq),Read"):
// rules in the given order, no spaces. ParseAllowlist reads it back to the
// same rules, and it holds only letters, digits and _ - . + * ( ) , so it
// can be single-quoted into a shell command line as it is.
func FormatAllowlist(rules []AllowRule) string {
	var b strings.Builder
	for i, r := range rules {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(r.Tool)
		if r.Commands != nil {
			b.WriteString("(" + strings.Join(r.Commands, ",") + ")")
		}
	}
	return b.String()
}

// toolAllowlists returns the allowlists in force: Env.ToolAllowlists when
// set (an empty entry is an error: it would read as "no restriction"),
// else the FULLSEND_TOOL_ALLOWLIST variable ("" = no restriction).
func (e *Env) toolAllowlists() ([]string, error) {
	if e != nil && e.ToolAllowlists != nil {
		for _, s := range e.ToolAllowlists {
			if strings.TrimSpace(s) == "" {
				return nil, fmt.Errorf("empty tool allowlist given; refusing to read it as \"no restriction\"")
			}
		}
		return e.ToolAllowlists, nil
	}
	if s := e.getenv(EnvToolAllowlist); s != "" {
		return []string{s}, nil
	}
	return nil, nil
}

func checkAllowlist(_ context.Context, in *Input, env *Env) (Verdict, error) {
	specs, err := env.toolAllowlists()
	if err != nil {
		return Verdict{}, err
	}
	for _, spec := range specs {
		rules, err := ParseAllowlist(spec)
		if err != nil {
			return Verdict{}, err // fail closed on a broken allowlist
		}
		if v := permits(rules, spec, in); v.Block {
			return v, nil
		}
	}
	return Verdict{}, nil
}

// permits applies one allowlist to a tool call. The call's tool name, or
// one of its aliases (Input.ToolAliases), must match a rule; a Bash call
// matched only by Bash(...) rules must consist of simple commands whose
// programs are all in the union of those rules' command lists.
func permits(rules []AllowRule, spec string, in *Input) Verdict {
	if len(rules) == 0 {
		return Verdict{}
	}
	names := append([]string{in.ToolName}, in.ToolAliases...)
	var bashCmds []string
	bashAny := false
	for _, r := range rules {
		if !slices.ContainsFunc(names, r.matchesTool) {
			continue
		}
		if r.Commands == nil {
			return Verdict{}
		}
		if in.ToolName == "Bash" {
			bashCmds = append(bashCmds, r.Commands...)
			bashAny = true
		}
	}
	if !bashAny {
		return Verdict{Block: true, Rule: "allowlist.tool", Reason: fmt.Sprintf(
			"tool %q is not in this agent's tool allowlist (%s)", in.ToolName, spec)}
	}
	cmd := in.inputString("command")
	progs, err := commandNames(cmd)
	if err != nil {
		return Verdict{Block: true, Rule: "allowlist.bash", Reason: fmt.Sprintf(
			"Bash is limited to %s and %v; write one plain command per call", strings.Join(bashCmds, ", "), err)}
	}
	for _, p := range progs {
		if !contains(bashCmds, p) {
			return Verdict{Block: true, Rule: "allowlist.bash", Reason: fmt.Sprintf(
				"Bash command %q is not allowed: this agent may run only %s", p, strings.Join(bashCmds, ", "))}
		}
	}
	return Verdict{}
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

// commandNames lexes a shell command line and returns the program name of
// every simple command (basename, after leading VAR=value assignments). It
// refuses command and process substitution, whose inner commands would
// escape the check.
func commandNames(cmd string) ([]string, error) {
	var names []string
	word := strings.Builder{}
	inWord, first, redirect := false, true, false
	var quote byte
	endWord := func() {
		if !inWord {
			return
		}
		w := word.String()
		word.Reset()
		inWord = false
		if redirect {
			redirect = false
			return
		}
		if first {
			if isAssignment(w) {
				return
			}
			names = append(names, path.Base(w))
			first = false
		}
	}
	for i := 0; i < len(cmd); i++ {
		c := cmd[i]
		if quote == '\'' {
			if c == '\'' {
				quote = 0
			} else {
				word.WriteByte(c)
			}
			continue
		}
		if c == '`' || (c == '$' && i+1 < len(cmd) && cmd[i+1] == '(') {
			return nil, fmt.Errorf("command substitution is not allowed")
		}
		if quote == '"' {
			switch {
			case c == '"':
				quote = 0
			case c == '\\' && i+1 < len(cmd):
				i++
				word.WriteByte(cmd[i])
			default:
				word.WriteByte(c)
			}
			continue
		}
		switch c {
		case '\'', '"':
			quote = c
			inWord = true
		case '\\':
			if i+1 < len(cmd) {
				i++
				if cmd[i] != '\n' {
					word.WriteByte(cmd[i])
					inWord = true
				}
			}
		case ' ', '\t':
			endWord()
		case ';', '&', '|', '\n', '(', ')', '{', '}', '!':
			endWord()
			first = true
		case '<', '>':
			if i+1 < len(cmd) && cmd[i+1] == '(' {
				return nil, fmt.Errorf("process substitution is not allowed")
			}
			// the next word is a redirection target, not a command name; it
			// is lexed normally so substitutions in it are still refused.
			endWord()
			for i+1 < len(cmd) && (cmd[i+1] == '>' || cmd[i+1] == '&' || cmd[i+1] == '<') {
				i++
			}
			redirect = true
		default:
			word.WriteByte(c)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unterminated quote")
	}
	endWord()
	if len(names) == 0 {
		return nil, fmt.Errorf("no command")
	}
	return names, nil
}

// isAssignment reports whether w is NAME=value, a variable assignment
// before the command.
func isAssignment(w string) bool {
	name, _, ok := strings.Cut(w, "=")
	return ok && config.ValidEnvName(name)
}
