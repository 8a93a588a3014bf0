package ci

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode"
)

func TestDetectAndDecide(t *testing.T) {
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	cases := []struct {
		name              string
		getenv            func(string) string
		forge, output     string
		wantOut           Platform
		wantForge, wantBy string
	}{
		{name: "no CI", getenv: env(), wantOut: None},
		{name: "github", getenv: env("GITHUB_ACTIONS", "true"), wantOut: GitHub, wantForge: "github", wantBy: "GITHUB_ACTIONS=true"},
		{name: "gitlab", getenv: env("GITLAB_CI", "true"), wantOut: GitLab, wantForge: "gitlab", wantBy: "GITLAB_CI=true"},
		{name: "not exactly true", getenv: env("GITHUB_ACTIONS", "1"), wantOut: None},
		{name: "--forge wins", getenv: env("GITHUB_ACTIONS", "true"), forge: "gitlab", wantOut: GitHub, wantForge: "gitlab", wantBy: "--forge"},
		{name: "--ci-output wins", getenv: env("GITHUB_ACTIONS", "true"), output: "none", wantOut: None, wantForge: "github", wantBy: "GITHUB_ACTIONS=true"},
		{name: "--ci-output outside CI", getenv: env(), output: "GitLab", wantOut: GitLab},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ch, err := Decide(Detect(c.getenv), c.forge, c.output)
			if err != nil {
				t.Fatal(err)
			}
			if ch.Output != c.wantOut || ch.Forge != c.wantForge || ch.ForgeFrom != c.wantBy {
				t.Fatalf("%+v", ch)
			}
		})
	}
	if _, err := Decide(Detect(env()), "", "jenkins"); err == nil || !strings.Contains(err.Error(), "want github, gitlab or none") {
		t.Fatalf("bad --ci-output: %v", err)
	}
	ch, _ := Decide(Detect(env("GITHUB_ACTIONS", "true")), "", "")
	if got := ch.Line(); got != "ci: GitHub Actions detected (GITHUB_ACTIONS=true); forge overlay github, when the harness has one (--forge overrides); CI output github" {
		t.Errorf("line %q", got)
	}
	if got := (Choice{Detected: Detection{Platform: None}, Output: None}).Line(); got != "" {
		t.Errorf("no CI, no flag: line %q", got)
	}
}

// unescape is the runner's unescaping of command data and properties,
// written from GitHub's documented rules, to check escaping round trips.
func unescape(s string, property bool) string {
	pairs := []string{"%0D", "\r", "%0A", "\n"}
	if property {
		pairs = append(pairs, "%3A", ":", "%2C", ",")
	}
	pairs = append(pairs, "%25", "%")
	return strings.NewReplacer(pairs...).Replace(s)
}

// parseCommand splits one workflow command line the way the runner does:
// "::NAME PROPS::DATA", PROPS split on "," and each at its first "=".
func parseCommand(t *testing.T, line string) (name string, props map[string]string, data string) {
	t.Helper()
	rest, ok := strings.CutPrefix(line, "::")
	if !ok {
		t.Fatalf("not a command: %q", line)
	}
	head, data, ok := strings.Cut(rest, "::")
	if !ok {
		t.Fatalf("no data separator: %q", line)
	}
	name, propText, _ := strings.Cut(head, " ")
	props = map[string]string{}
	if propText != "" {
		for _, kv := range strings.Split(propText, ",") {
			k, v, _ := strings.Cut(kv, "=")
			props[k] = unescape(v, true)
		}
	}
	return name, props, unescape(data, false)
}

func TestEscape(t *testing.T) {
	cases := []struct{ in, data, prop string }{
		{"plain", "plain", "plain"},
		{"100%", "100%25", "100%25"},
		{"a\nb\r\nc", "a%0Ab%0D%0Ac", "a%0Ab%0D%0Ac"},
		{"x:y,z", "x:y,z", "x%3Ay%2Cz"},
		{"%0A", "%250A", "%250A"},
		{"::set-output name=x::1", "::set-output name=x::1", "%3A%3Aset-output name=x%3A%3A1"},
	}
	for _, c := range cases {
		if got := EscapeData(c.in); got != c.data {
			t.Errorf("EscapeData(%q) = %q, want %q", c.in, got, c.data)
		}
		if got := EscapeProperty(c.in); got != c.prop {
			t.Errorf("EscapeProperty(%q) = %q, want %q", c.in, got, c.prop)
		}
	}
}

// TestAnnotationInjection: hostile text in every field of an annotation
// stays in its field, on one line.
func TestAnnotationInjection(t *testing.T) {
	hostile := []string{
		"evil.go,line=1::\n::add-mask::secret",
		"msg\r::set-output name=status::succeeded",
		"%0A::stop-commands::tok",
		"a::b,c=d",
		"\x00\u2028\u0085::x",
	}
	for _, h := range hostile {
		a := Annotation{Level: LevelError, File: "dir/" + h, Line: 3, Col: 2, Title: "rule " + h, Message: "found " + h}
		line := a.String()
		if strings.ContainsAny(line, "\r\n") {
			t.Fatalf("annotation spans lines: %q", line)
		}
		name, props, data := parseCommand(t, line)
		if name != "error" || len(props) != 4 || props["file"] != "dir/"+h || props["line"] != "3" || props["col"] != "2" || props["title"] != "rule "+h {
			t.Errorf("%q parsed as %s %v", line, name, props)
		}
		if data != "found "+strings.ToValidUTF8(h, "\uFFFD") {
			t.Errorf("data %q", data)
		}
	}
	if got := (Annotation{Level: "bogus", Message: "m"}).String(); got != "::error::m" {
		t.Errorf("unknown level: %q", got)
	}
	if got := (Annotation{Level: LevelNotice, Line: 4, Message: "m"}).String(); got != "::notice::m" {
		t.Errorf("line without file: %q", got)
	}
}

// commandLines are the lines of out the runner would read as commands.
func commandLines(out string) []string {
	var cmds []string
	for _, l := range strings.FieldsFunc(out, func(r rune) bool { return r == '\n' || r == '\r' }) {
		t := strings.TrimLeftFunc(l, unicode.IsSpace)
		if strings.HasPrefix(t, "::") || strings.HasPrefix(t, "##[") {
			cmds = append(cmds, l)
		}
	}
	return cmds
}

func TestGuard(t *testing.T) {
	cases := []struct{ in, want string }{
		{"hello\n", "hello\n"},
		{"::set-output name=status::succeeded\n", `\::set-output name=status::succeeded` + "\n"},
		{"ok\n  ::add-mask::x\n", "ok\n" + `\  ::add-mask::x` + "\n"},
		{"a\r::stop-commands::t\n", "a\r" + `\::stop-commands::t` + "\n"},
		{"##[set-output name=x;]y\n", `\##[set-output name=x;]y` + "\n"},
		{"\u00a0\u2003::warning::x\n", `\` + "\u00a0\u2003::warning::x\n"},
		{"not :: a command\n:single colon\n#[x\n", "not :: a command\n:single colon\n#[x\n"},
		{"\n\n::x\n", "\n\n" + `\::x` + "\n"},
		{"fullsend: error: file ::x\n", "fullsend: error: file ::x\n"},
	}
	for _, c := range cases {
		var buf bytes.Buffer
		g := NewGuard(&buf)
		if _, err := g.Write([]byte(c.in)); err != nil {
			t.Fatal(err)
		}
		if err := g.Flush(); err != nil {
			t.Fatal(err)
		}
		if buf.String() != c.want {
			t.Errorf("Guard(%q) = %q, want %q", c.in, buf.String(), c.want)
		}
	}
}

// TestGuardChunked: however the text is split into writes, no command
// line gets through and nothing else changes.
func TestGuardChunked(t *testing.T) {
	text := "start\n::set-output name=a::1\r  ::add-mask::p\n\t##[error]x\nplain ::x\n\u3000::notice::y\nend :" +
		"\n:" + ":split\n" + "é::z\n"
	var whole bytes.Buffer
	g := NewGuard(&whole)
	g.Write([]byte(text))
	g.Flush()
	want := whole.String()
	if cmds := commandLines(want); len(cmds) != 0 {
		t.Fatalf("commands got through: %q", cmds)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 300; i++ {
		var buf bytes.Buffer
		g := NewGuard(&buf)
		b := []byte(text)
		for len(b) > 0 {
			n := 1 + rng.IntN(4)
			if n > len(b) {
				n = len(b)
			}
			g.Write(b[:n])
			b = b[n:]
		}
		g.Flush()
		if buf.String() != want {
			t.Fatalf("chunked output differs:\n%q\n%q", buf.String(), want)
		}
	}
}

func TestGuardCommand(t *testing.T) {
	var buf bytes.Buffer
	g := NewGuard(&buf)
	g.Write([]byte("partial"))
	if err := g.Command("::error::x"); err != nil {
		t.Fatal(err)
	}
	g.Write([]byte(" :"))
	g.Write([]byte(":notice::forged\n"))
	g.Write([]byte(":"))
	g.Command("::warning::y")
	g.Write([]byte(":z\n"))
	g.Flush()
	want := "partial\n::error::x\n" + `\ ::notice::forged` + "\n:\n::warning::y\n:z\n"
	if buf.String() != want {
		t.Fatalf("got %q\nwant %q", buf.String(), want)
	}
	if cmds := commandLines(buf.String()); len(cmds) != 2 {
		t.Fatalf("commands %q", cmds)
	}
}

// parseOutputs reads $GITHUB_OUTPUT text as the runner does.
func parseOutputs(t *testing.T, s string) map[string]string {
	t.Helper()
	out := map[string]string{}
	lines := strings.Split(s, "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if l == "" {
			continue
		}
		if name, delim, ok := strings.Cut(l, "<<"); ok {
			var val []string
			i++
			for ; i < len(lines) && lines[i] != delim; i++ {
				val = append(val, lines[i])
			}
			if i == len(lines) {
				t.Fatalf("unterminated %s", name)
			}
			out[name] = strings.Join(val, "\n")
			continue
		}
		k, v, _ := strings.Cut(l, "=")
		out[k] = v
	}
	return out
}

func TestFormatOutputs(t *testing.T) {
	hostile := "line1\nstatus=succeeded\nskipped<<EOF\ntrue\nEOF\nghadelimiter_00\n"
	text, err := FormatOutputs([]Output{{"status", "failed"}, {"skip-reason", hostile}, {"empty", ""}})
	if err != nil {
		t.Fatal(err)
	}
	got := parseOutputs(t, text)
	if len(got) != 3 || got["status"] != "failed" || got["skip-reason"] != hostile || got["empty"] != "" {
		t.Fatalf("round trip: %q -> %#v", text, got)
	}
	d1 := strings.SplitN(strings.SplitN(text, "\n", 2)[0], "<<", 2)[1]
	if !strings.HasPrefix(d1, "ghadelimiter_") || len(d1) != len("ghadelimiter_")+32 || strings.Count(text, d1) != 2 {
		t.Errorf("delimiter %q", d1)
	}
	if _, err := FormatOutputs([]Output{{"a\nb", "x"}}); err == nil {
		t.Error("a name with a newline was accepted")
	}
	if _, err := FormatOutputs([]Output{{"a<<b", "x"}}); err == nil {
		t.Error("a name with << was accepted")
	}
}

func TestCell(t *testing.T) {
	cases := []struct{ in, want string }{
		{"plain text", "plain text"},
		{"a|b", `a\|b`},
		{"<img src=x onerror=y>", "&lt;img src\\=x onerror\\=y&gt;"},
		{"[click](https://evil.test)", `\[click\]\(https\://evil\.test\)`},
		{"line\nbreak\r|", `line break \|`},
		{"@org/team", "&#64;org/team"},
		{"`code`", "\\`code\\`"},
	}
	for _, c := range cases {
		if got := Cell(c.in); got != c.want {
			t.Errorf("Cell(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if got := Cell(strings.Repeat("x", 2*MaxCell)); len([]rune(got)) != MaxCell+1 || !strings.HasSuffix(got, "…") {
		t.Errorf("long cell of %d runes", len([]rune(got)))
	}
}
