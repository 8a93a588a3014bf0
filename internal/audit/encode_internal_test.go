package audit

import (
	"encoding/json"
	"testing"
	"time"
)

// TestAppendEntryMatchesJSON: the direct encoder writes exactly
// json.Marshal's line, and leaves every entry it cannot write so to
// encoding/json.
func TestAppendEntryMatchesJSON(t *testing.T) {
	at := time.Date(2026, 11, 21, 21, 0, 0, 120000000, time.UTC)
	plain := Entry{TraceID: "0123abcd", FetchTime: at, URL: "https://github.com/o/r/tree/main/x", SHA256: "ab", FetchType: FetchRuntime, AllowedBy: "allowed_remote_resources[0]", CacheHit: true}
	zoned := plain
	zoned.FetchTime, zoned.CacheHit = at.In(time.FixedZone("x", -5*3600)), false
	sourced := plain
	sourced.Source = SourceRegistry
	for _, e := range []Entry{plain, zoned, sourced, {}} {
		want, _ := json.Marshal(e)
		got, ok := appendEntry(nil, &e)
		if !ok || string(got) != string(want)+"\n" {
			t.Errorf("appendEntry(%+v) = %q, %v; want %q", e, got, ok, want)
		}
	}
	for _, mod := range []func(*Entry){
		func(e *Entry) { e.URL = "https://x/<script>" },
		func(e *Entry) { e.URL = "https://x/é" },
		func(e *Entry) { e.TraceID = "a\"b" },
		func(e *Entry) { e.AllowedBy = "a\nb" },
		func(e *Entry) { e.Source = "a\"b" },
		func(e *Entry) { e.FetchTime = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) },
	} {
		e := plain
		mod(&e)
		if got, ok := appendEntry(nil, &e); ok {
			t.Errorf("appendEntry(%+v) = %q: want it left to encoding/json", e, got)
		}
	}
}
