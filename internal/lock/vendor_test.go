package lock

import (
	"strings"
	"testing"
)

// TestVendorRoundTrip: vendor: records survive Marshal and Parse, sorted
// by path; bad records are refused with their field named.
func TestVendorRoundTrip(t *testing.T) {
	h := strings.Repeat("ab", 32)
	f := &File{Version: Version, Harnesses: map[string]*Harness{}}
	f.PutVendored(Vendored{Path: "vendor/h/o/r/z.sh", URL: "https://h/o/r/blob/c/z.sh", SHA256: h})
	f.PutVendored(Vendored{Path: "vendor/h/o/r/a.sh", URL: "https://h/o/r/blob/c/a.sh", Ref: "main", SHA256: h})
	f.PutVendored(Vendored{Path: "vendor/h/o/r/a.sh", URL: "https://h/o/r/blob/d/a.sh", Ref: "main", SHA256: h})
	b, err := f.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	g, err := Parse("lock.yaml", b)
	if err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	if len(g.Vendor) != 2 || g.Vendor[0].Path != "vendor/h/o/r/a.sh" || g.Vendor[0].URL != "https://h/o/r/blob/d/a.sh" || g.Vendor[0].Ref != "main" || g.Vendor[1].Ref != "" {
		t.Fatalf("round trip: %+v\n%s", g.Vendor, b)
	}
	for _, bad := range []string{
		"vendor:\n  - {path: ../x.sh, url: https://h/x, sha256: " + h + "}\n",
		"vendor:\n  - {path: a.sh, sha256: " + h + "}\n",
		"vendor:\n  - {path: a.sh, url: https://h/x, sha256: nothex}\n",
		"vendor:\n  - {path: a.sh, url: https://h/x, sha256: " + h + ", extra: 1}\n",
		"vendor:\n  - {path: a.sh, url: https://h/x, sha256: " + h + "}\n  - {path: a.sh, url: https://h/y, sha256: " + h + "}\n",
	} {
		if _, err := Parse("lock.yaml", []byte("version: 1\nharnesses: {}\n"+bad)); err == nil || !strings.Contains(err.Error(), "vendor") {
			t.Errorf("accepted %q: %v", bad, err)
		}
	}
}
