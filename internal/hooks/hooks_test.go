package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Secret-looking values are assembled at test time so the repository holds
// no string a secret scanner would flag.
var placeholders = strings.NewReplacer(
	"{{GITHUB_TOKEN}}", "ghp_"+strings.Repeat("R4nd0mT0k", 4),
	"{{PRIVATE_KEY_BEGIN}}", "-----BEGIN OPENSSH "+"PRIVATE KEY-----",
)

func payload(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	return []byte(placeholders.Replace(string(b)))
}

func canaryToken(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("testdata/canary.txt")
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

type hookCase struct {
	payload  string
	env      map[string]string
	wantRule string // "" = allowed
}

// hookTable: every hook, with real Claude Code payloads from testdata.
var hookTable = map[string][]hookCase{
	"ssrf-pretool": {
		{payload: "pre_bash_metadata", wantRule: "ssrf.metadata"},
		{payload: "pre_bash_metadata_decimal", wantRule: "ssrf.metadata"},
		{payload: "pre_bash_metadata_v6", wantRule: "ssrf.metadata"},
		{payload: "pre_bash_gcp_metadata_name", wantRule: "ssrf.metadata"},
		{payload: "pre_bash_loopback_hex", wantRule: "ssrf.internal"},
		{payload: "pre_bash_private_bare", wantRule: "ssrf.internal"},
		{payload: "pre_bash_localhost_port", wantRule: "ssrf.internal-name"},
		{payload: "pre_bash_mapped_v6", wantRule: "ssrf.internal"},
		{payload: "pre_bash_nipio", wantRule: "ssrf.internal-name"},
		{payload: "pre_bash_single_label", wantRule: "ssrf.internal-name"},
		{payload: "pre_bash_devtcp_internal", wantRule: "ssrf.internal"},
		{payload: "pre_bash_userinfo_trick", wantRule: "ssrf.internal"},
		{payload: "pre_webfetch_metadata", wantRule: "ssrf.metadata"},
		{payload: "pre_webfetch_octal", wantRule: "ssrf.internal"},
		{payload: "pre_mcp_internal", wantRule: "ssrf.internal"},
		{payload: "pre_bash_localhost_port", env: map[string]string{EnvAllowedServices: "localhost:2375"}},
		{payload: "pre_bash_public_ok"},
		{payload: "pre_bash_go_test_ok"},
		{payload: "pre_bash_version_ok"},
		{payload: "pre_bash_grep_ip_ok"},
		{payload: "pre_bash_ssh_internal", wantRule: "ssrf.internal"},
		{payload: "pre_webfetch_public_ok"},
	},
	"tool-allowlist-pretool": {
		{payload: "pre_read", env: map[string]string{EnvToolAllowlist: "Read,Grep,Bash(gh,jq)"}},
		{payload: "pre_write_file", env: map[string]string{EnvToolAllowlist: "Read,Grep,Bash(gh,jq)"}, wantRule: "allowlist.tool"},
		{payload: "pre_write_file", env: map[string]string{EnvToolAllowlist: ""}},
		{payload: "pre_bash_gh", env: map[string]string{EnvToolAllowlist: "Read,Bash(gh,jq)"}},
		{payload: "pre_bash_gh", env: map[string]string{EnvToolAllowlist: "Read,Bash(gh)"}, wantRule: "allowlist.bash"},
		{payload: "pre_bash_gh", env: map[string]string{EnvToolAllowlist: "Bash(gh:*),Bash(jq *)"}},
		{payload: "pre_bash_gh_env", env: map[string]string{EnvToolAllowlist: "Bash(gh)"}},
		{payload: "pre_bash_gh_then_curl", env: map[string]string{EnvToolAllowlist: "Bash(gh)"}, wantRule: "allowlist.bash"},
		{payload: "pre_bash_gh_subst", env: map[string]string{EnvToolAllowlist: "Bash(gh,cat)"}, wantRule: "allowlist.bash"},
		{payload: "pre_bash_quoted_pipe", env: map[string]string{EnvToolAllowlist: "Bash(jq)"}},
		{payload: "pre_bash_gh", env: map[string]string{EnvToolAllowlist: "Bash,Read"}},
		{payload: "pre_mcp_internal", env: map[string]string{EnvToolAllowlist: "mcp__fetch__*"}},
		{payload: "pre_mcp_internal", env: map[string]string{EnvToolAllowlist: "mcp__github__*"}, wantRule: "allowlist.tool"},
	},
	"canary-pretool": {
		{payload: "pre_bash_canary_exfil", env: map[string]string{EnvCanaryToken: "@canary"}, wantRule: "canary.exfiltration"},
		{payload: "pre_bash_canary_b64", env: map[string]string{EnvCanaryToken: "@canary"}, wantRule: "canary.exfiltration"},
		{payload: "pre_write_canary", env: map[string]string{EnvCanaryToken: "@canary"}, wantRule: "canary.exfiltration"},
		{payload: "pre_bash_public_ok", env: map[string]string{EnvCanaryToken: "@canary"}},
		{payload: "pre_bash_canary_exfil"}, // no canary configured
	},
	"canary-posttool": {
		{payload: "post_bash_env_canary", env: map[string]string{EnvCanaryToken: "@canary"}, wantRule: "canary.read"},
		{payload: "post_bash_ls", env: map[string]string{EnvCanaryToken: "@canary"}},
	},
	"secret-redact-posttool": {
		{payload: "post_bash_cat_env_secret", wantRule: "secret.github-token"},
		// the output's own gitleaks:allow vouches for nothing
		{payload: "post_bash_cat_env_secret_marked", wantRule: "secret.github-token"},
		{payload: "post_read_private_key", wantRule: "secret.private-key"},
		{payload: "post_read_source_ok"},
		{payload: "post_write_secret_echo"}, // the agent's own write echoed back
		{payload: "post_bash_ls"},
	},
	"unicode-posttool": {
		{payload: "post_read_bidi", wantRule: "unicode.invisible"},
		{payload: "post_webfetch_tags", wantRule: "unicode.invisible"},
		{payload: "post_read_zwsp", wantRule: "unicode.invisible"},
		{payload: "post_read_bom_ok"},
		{payload: "post_read_source_ok"},
	},
	"context-suppress-posttool": {
		{payload: "post_webfetch_injection", wantRule: "injection.ignore-instructions"},
		{payload: "post_bash_issue_injection", wantRule: "injection."},
		{payload: "post_bash_issue_ok"},
		{payload: "post_read_source_ok"},
	},
	"bash-risk-pretool": {
		{payload: "pre_bash_curl_sh", wantRule: "bash.pipe-to-shell"},
		{payload: "pre_bash_wget_bash_sudo", wantRule: "bash.pipe-to-shell"},
		{payload: "pre_bash_obfuscated_curl", wantRule: "bash.pipe-to-shell"},
		{payload: "pre_bash_bash_subst", wantRule: "bash.shell-from-download"},
		{payload: "pre_bash_b64_sh", wantRule: "bash.decode-and-exec"},
		{payload: "pre_bash_rm_root", wantRule: "bash.rm-root"},
		{payload: "pre_bash_rm_home", wantRule: "bash.rm-root"},
		{payload: "pre_bash_chmod_suid", wantRule: "bash.setuid"},
		{payload: "pre_bash_chmod_4755", wantRule: "bash.setuid"},
		{payload: "pre_bash_ssh_keys", wantRule: "bash.ssh-keys"},
		{payload: "pre_bash_nc_e", wantRule: "bash.reverse-shell"},
		{payload: "pre_bash_devtcp_shell", wantRule: "bash.reverse-shell"},
		{payload: "pre_bash_py_revshell", wantRule: "bash.reverse-shell"},
		{payload: "pre_bash_environ_exfil", wantRule: "bash.credential-exfiltration"},
		{payload: "pre_bash_env_pipe", wantRule: "bash.credential-exfiltration"},
		{payload: "pre_bash_ld_preload", wantRule: "bash.loader-hijack"},
		{payload: "pre_bash_settings_edit", wantRule: "bash.hook-config-tampering"},
		{payload: "pre_bash_settings_echo", wantRule: "bash.hook-config-tampering"},
		{payload: "pre_bash_unset_allowlist", wantRule: "bash.hook-env-tampering"},
		{payload: "pre_edit_settings", wantRule: "bash.hook-config-tampering"},
		{payload: "pre_write_ssh", wantRule: "bash.hook-config-tampering"},
		{payload: "pre_bash_settings_cat_ok"},
		{payload: "pre_bash_rm_build_ok"},
		{payload: "pre_bash_chmod_ok"},
		{payload: "pre_bash_git_ok"},
		{payload: "pre_bash_gh"},
		{payload: "pre_write_file"},
	},
}

// TestHooksTable runs every case twice: with the built-in detectors (rule
// names checked) and with the production environment of NewEnv, whose
// secret, injection and unicode detectors come from internal/scan (the
// block/allow decision checked).
func TestHooksTable(t *testing.T) {
	for _, name := range Names() {
		if len(hookTable[name]) == 0 {
			t.Errorf("hook %s has no table cases", name)
		}
	}
	prod := NewEnv(nil)
	for _, mode := range []string{"builtin", "scan"} {
		for name, cases := range hookTable {
			h, ok := Lookup(name)
			if !ok {
				t.Fatalf("table names unknown hook %s", name)
			}
			for _, c := range cases {
				t.Run(mode+"/"+name+"/"+c.payload, func(t *testing.T) {
					env := &Env{}
					if mode == "scan" {
						e := *prod
						env = &e
					}
					env.Getenv = func(k string) string {
						v := c.env[k]
						if v == "@canary" {
							v = canaryToken(t)
						}
						return v
					}
					var out bytes.Buffer
					v, err := Handle(context.Background(), name, bytes.NewReader(payload(t, c.payload)), &out, env)
					if err != nil {
						t.Fatalf("Handle: %v", err)
					}
					if c.wantRule == "" {
						if v.Block || out.Len() != 0 {
							t.Fatalf("blocked (%s: %s), want allow; output %s", v.Rule, v.Reason, out.String())
						}
						return
					}
					if !v.Block {
						t.Fatalf("allowed, want block by %s", c.wantRule)
					}
					if mode == "builtin" && !strings.HasPrefix(v.Rule, c.wantRule) {
						t.Fatalf("verdict %+v, want block by %s", v, c.wantRule)
					}
					checkResponse(t, h.Event, out.Bytes(), v.Reason)
					if tok := canaryToken(t); strings.Contains(v.Reason, tok) {
						t.Fatalf("reason echoes the canary token")
					}
				})
			}
		}
	}
}

// checkResponse asserts the protocol shape Claude Code expects.
func checkResponse(t *testing.T, event string, out []byte, reason string) {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatalf("response is not JSON: %v: %s", err, out)
	}
	hso, _ := m["hookSpecificOutput"].(map[string]any)
	if hso == nil || hso["hookEventName"] != event {
		t.Fatalf("hookSpecificOutput.hookEventName missing or wrong: %s", out)
	}
	switch event {
	case PreToolUse:
		if hso["permissionDecision"] != "deny" || hso["permissionDecisionReason"] != reason || reason == "" {
			t.Fatalf("PreToolUse deny response wrong: %s", out)
		}
	case PostToolUse:
		if m["decision"] != "block" || m["reason"] != reason || reason == "" {
			t.Fatalf("PostToolUse block response wrong: %s", out)
		}
	}
}

func TestSecretReasonDoesNotEchoSecret(t *testing.T) {
	var out bytes.Buffer
	v, err := Handle(context.Background(), "secret-redact-posttool", bytes.NewReader(payload(t, "post_bash_cat_env_secret")), &out, &Env{})
	if err != nil || !v.Block {
		t.Fatalf("want block, got %+v %v", v, err)
	}
	if strings.Contains(out.String(), "R4nd0mT0k") {
		t.Fatalf("response echoes the secret: %s", out.String())
	}
}

func TestHandleFailsClosed(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name, hook, input, want string
		env                     map[string]string
	}{
		{"garbage", "ssrf-pretool", "not json", "decoding payload", nil},
		{"no tool", "ssrf-pretool", `{"hook_event_name":"PreToolUse"}`, "lacks", nil},
		{"wrong event", "ssrf-pretool", string(payload(t, "post_bash_ls")), "payload is for event \"PostToolUse\"", nil},
		{"unknown hook", "nope", string(payload(t, "pre_read")), "unknown hook", nil},
		{"broken allowlist", "tool-allowlist-pretool", string(payload(t, "pre_read")), "unbalanced", map[string]string{EnvToolAllowlist: "Bash(gh"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			_, err := Handle(ctx, c.hook, strings.NewReader(c.input), &out, &Env{Getenv: func(k string) string { return c.env[k] }})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want %q", err, c.want)
			}
			if c.hook == "nope" && !errors.Is(err, ErrUnknownHook) {
				t.Fatalf("want ErrUnknownHook, got %v", err)
			}
			if out.Len() != 0 {
				t.Fatalf("wrote a response on failure: %s", out.String())
			}
		})
	}
}

func TestHandleRejectsOversizedPayload(t *testing.T) {
	big := bytes.Repeat([]byte("a"), MaxInput+1)
	_, err := Handle(context.Background(), "unicode-posttool", bytes.NewReader(big), &bytes.Buffer{}, &Env{})
	if err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("err = %v", err)
	}
}

type fakeScanner struct {
	rule string
	err  error
}

func (f fakeScanner) ScanText(_ context.Context, text string) ([]Finding, error) {
	if f.err != nil {
		return nil, f.err
	}
	if strings.Contains(text, "Typo") {
		return []Finding{{Rule: f.rule, Message: "x"}}, nil
	}
	return nil, nil
}

func TestPluggedScanners(t *testing.T) {
	ctx := context.Background()
	env := &Env{Secrets: fakeScanner{rule: "gitleaks-x"}, Injection: fakeScanner{rule: "deberta"}, Unicode: fakeScanner{rule: "confusables"}}
	for hook, rule := range map[string]string{"secret-redact-posttool": "secret.gitleaks-x", "context-suppress-posttool": "injection.deberta",
		"unicode-posttool": "unicode.confusables"} {
		v, err := Handle(ctx, hook, bytes.NewReader(payload(t, "post_bash_issue_ok")), &bytes.Buffer{}, env)
		if err != nil || v.Rule != rule {
			t.Fatalf("%s: verdict %+v err %v, want rule %s from the plugged scanner", hook, v, err, rule)
		}
	}
	env = &Env{Secrets: fakeScanner{err: errors.New("scanner down")}}
	if _, err := Handle(ctx, "secret-redact-posttool", bytes.NewReader(payload(t, "post_bash_issue_ok")), &bytes.Buffer{}, env); err == nil || !strings.Contains(err.Error(), "scanner down") {
		t.Fatalf("scanner error not propagated (fail closed): %v", err)
	}
}

func TestHarnessDisabledAndSettings(t *testing.T) {
	got, err := HarnessDisabled(map[string]bool{"canary": false, "tirith": false, "ssrf": true})
	if err != nil || strings.Join(got, ",") != "bash-risk-pretool,canary-posttool,canary-pretool" {
		t.Fatalf("HarnessDisabled = %v, %v", got, err)
	}
	if _, err := HarnessDisabled(map[string]bool{"nope": false}); err == nil || !strings.Contains(err.Error(), `sandbox hook "nope": unknown`) {
		t.Fatalf("unknown key: %v", err)
	}
	for _, k := range []string{"canary", "context_suppress", "secret_redact", "ssrf", "tirith", "tool_allowlist", "unicode"} {
		for _, h := range harnessGroups[k] {
			if _, ok := Lookup(h); !ok {
				t.Errorf("harness key %s maps to unknown hook %s", k, h)
			}
		}
	}
	hs, err := Select(got, nil)
	if err != nil || len(hs) != len(all)-4 { // 3 disabled + the opt-in allowlist hook
		t.Fatalf("Select: %d hooks, %v", len(hs), err)
	}
	b, err := Settings("/usr/local/bin/fullsend", hs)
	if err != nil || strings.Contains(string(b), "bash-risk-pretool") || !strings.Contains(string(b), `"command": "/usr/local/bin/fullsend hook each ssrf-pretool"`) ||
		!strings.Contains(string(b), `"command": "/usr/local/bin/fullsend hook each secret-redact-posttool unicode-posttool context-suppress-posttool"`) {
		t.Fatalf("Settings: %s %v", b, err)
	}
	if _, err := Settings("fullsend", hs); err == nil {
		t.Fatal("relative hook binary accepted")
	}
	if _, err := Settings("/x/full send", hs); err == nil {
		t.Fatal("hook binary with a space accepted")
	}
}

func TestCommandNames(t *testing.T) {
	for _, c := range []struct{ cmd, want, err string }{
		{"gh issue view 1 | jq -r .title", "gh jq", ""},
		{"FOO=1 BAR=x /usr/bin/gh pr list && jq . f.json", "gh jq", ""},
		{"_A1= gh x; 1X=a gh; =x jq; A-B=1 jq", "gh 1X=a =x A-B=1", ""},
		{"gh x 2>&1 >out.txt; jq . < in.json", "gh jq", ""},
		{`jq '.a | .b' "f g.json"`, "jq", ""},
		{"gh x > `curl evil`", "", "command substitution"},
		{"gh x >$(curl evil)", "", "command substitution"},
		{`gh "$(id)"`, "", "command substitution"},
		{"diff <(gh a) <(gh b)", "", "process substitution"},
		{"gh 'unterminated", "", "unterminated quote"},
		{"  ", "", "no command"},
	} {
		names, err := commandNames(c.cmd)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: err %v, want %q", c.cmd, err, c.err)
			}
			continue
		}
		if err != nil || strings.Join(names, " ") != c.want {
			t.Errorf("%q: %q %v, want %q", c.cmd, names, err, c.want)
		}
	}
}
