package hooks

import (
	"context"
	"net/netip"
	"testing"
)

// TestClassifyHostContext pins the context rules the hook adds on top of
// netguard's host parsing: loose numeric forms and bare names count only in
// URLs (or, for names, with a port).
func TestClassifyHostContext(t *testing.T) {
	tests := []struct {
		c    candidate
		rule string // "" = allowed
	}{
		{candidate{"2130706433", true}, "ssrf.internal"},
		{candidate{"2130706433", false}, ""}, // sleep 2130706433
		{candidate{"0.5", false}, ""},        // sleep 0.5
		{candidate{"127.1", false}, ""},
		{candidate{"127.1", true}, "ssrf.internal"},
		{candidate{"0177.0.0.1", false}, "ssrf.internal"},
		{candidate{"10.0.0.1", false}, "ssrf.internal"},
		{candidate{"::1", false}, "ssrf.internal"},
		{candidate{"%31%32%37.0.0.1", true}, "ssrf.internal"},
		{candidate{"localhost", false}, ""},
		{candidate{"localhost:80", false}, "ssrf.internal-name"},
		{candidate{"localhost", true}, "ssrf.internal-name"},
		{candidate{"redis", true}, "ssrf.internal-name"},
		{candidate{"$HOST", true}, ""},
		{candidate{"redis:6379", false}, ""},
		{candidate{"10-0-0-1.sslip.io", true}, "ssrf.internal-name"},
		{candidate{"api.github.com", true}, ""},
		{candidate{"[fd00:ec2::254]", true}, "ssrf.metadata"},
	}
	for _, tt := range tests {
		v, bad := classifyHost(tt.c, nil, nil)
		if got := map[bool]string{true: v.Rule}[bad]; got != tt.rule {
			t.Errorf("classifyHost(%+v) = %q (%s), want %q", tt.c, got, v.Reason, tt.rule)
		}
	}
}

// TestWebFetchPrivateNetworks: the ranges the native web_fetch client admits
// exempt WebFetch URLs only, and never a metadata address.
func TestWebFetchPrivateNetworks(t *testing.T) {
	env := &Env{WebFetchPrivateNetworks: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("169.254.0.0/16")}}
	tests := []struct {
		tool, input string
		env         *Env
		rule        string // "" = allowed
	}{
		{"WebFetch", `{"url":"http://10.1.2.3/docs"}`, nil, "ssrf.internal"},
		{"WebFetch", `{"url":"http://10.1.2.3/docs"}`, env, ""},
		{"WebFetch", `{"url":"http://0x0a010203/docs"}`, env, ""},
		{"WebFetch", `{"url":"http://192.168.1.1/"}`, env, "ssrf.internal"},
		{"WebFetch", `{"url":"http://169.254.169.254/latest/"}`, env, "ssrf.metadata"},
		{"Bash", `{"command":"curl http://10.1.2.3/docs"}`, env, "ssrf.internal"},
	}
	for _, tt := range tests {
		v, err := checkSSRF(context.Background(), &Input{HookEventName: PreToolUse, ToolName: tt.tool, ToolInput: []byte(tt.input)}, tt.env)
		if err != nil {
			t.Fatal(err)
		}
		if got := map[bool]string{true: v.Rule}[v.Block]; got != tt.rule {
			t.Errorf("%s %s (exempt %v): rule %q (%s), want %q", tt.tool, tt.input, tt.env != nil, got, v.Reason, tt.rule)
		}
	}
}
