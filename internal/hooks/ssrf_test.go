package hooks

import "testing"

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
		v, bad := classifyHost(tt.c, nil)
		if got := map[bool]string{true: v.Rule}[bad]; got != tt.rule {
			t.Errorf("classifyHost(%+v) = %q (%s), want %q", tt.c, got, v.Reason, tt.rule)
		}
	}
}
