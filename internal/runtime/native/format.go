package native

import (
	"net/netip"
	"regexp"
	"time"
)

// checkedFormats are the JSON Schema formats whose values opaqueView lets
// through to the parent, each with its checker. Every one has a small,
// fixed alphabet: a value that passes cannot carry a sentence. A format
// not listed here (email, uri, hostname, regex, …) is never checked by the
// return validator and pins nothing down.
var checkedFormats = map[string]func(string) bool{
	"date-time": func(s string) bool { return parseAny(s, time.RFC3339Nano) },
	"date":      func(s string) bool { return parseAny(s, time.DateOnly) },
	"time":      func(s string) bool { return parseAny(s, "15:04:05Z07:00", "15:04:05.999999999Z07:00") },
	"uuid":      uuidRE.MatchString,
	"ipv4": func(s string) bool {
		a, err := netip.ParseAddr(s)
		return err == nil && a.Is4()
	},
	"ipv6": func(s string) bool {
		a, err := netip.ParseAddr(s)
		return err == nil && a.Is6() && a.Zone() == "" // a zone is free text
	},
}

var uuidRE = regexp.MustCompile(`\A[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\z`)

// formatHolds reports whether v is a value of format, a format of
// checkedFormats; false for any other format.
func formatHolds(format, v string) bool {
	check, ok := checkedFormats[format]
	return ok && check(v)
}

func parseAny(s string, layouts ...string) bool {
	for _, l := range layouts {
		if _, err := time.Parse(l, s); err == nil {
			return true
		}
	}
	return false
}
