package netguard

// AllowEntry is one parsed egress allowlist entry ("host[:port]", parsed
// by sandbox.ParseAllow).
type AllowEntry struct {
	Host string // lower-case MatchHost pattern, "*.x" for subdomains
	Port int    // 0 = 80 and 443
}

// Admits reports whether the entry admits a connection to host:port: the
// host matches the entry's pattern (MatchHost: the same name or IP
// literal, "*.x" for names strictly below x) and the port is the entry's,
// or 80 or 443 when the entry names none. A port outside 1-65535 is never
// admitted.
//
// This is the one allow-entry rule: the sandbox's egress proxy and the
// native runtime's web_fetch both call it (through Admits).
func (e AllowEntry) Admits(host string, port int) bool {
	if port < 1 || port > 65535 {
		return false
	}
	if e.Port == 0 {
		if port != 80 && port != 443 {
			return false
		}
	} else if port != e.Port {
		return false
	}
	_, ok := MatchHost(host, []string{e.Host})
	return ok
}

// Admits reports whether any entry of allow admits host:port.
func Admits(allow []AllowEntry, host string, port int) bool {
	for _, e := range allow {
		if e.Admits(host, port) {
			return true
		}
	}
	return false
}
