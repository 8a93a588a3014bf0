package kubernetes

import (
	"math/rand/v2"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
)

// TestQuantityMatchesAPIMachinery: the quantities the backend writes are
// the API server's canonical text (what apimachinery prints), so the
// dry-run YAML shows what the cluster will store.
func TestQuantityMatchesAPIMachinery(t *testing.T) {
	bytes := []int64{0, 1, 999, 1000, 1023, 1024, 1500, 2048, 1000000, 1 << 20, 3 << 20, 256 << 20, 2 << 30, 4 << 30, 5 << 40, 7 << 50, 1 << 60, 1536, 10 << 30, 1e9, 123456789}
	milli := []int64{0, 1, 100, 250, 999, 1000, 1500, 2000, 10500, 1000000, 64000, 2e9}
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		bytes = append(bytes, r.Int64N(1<<40), r.Int64N(1<<20)<<r.IntN(40))
		milli = append(milli, r.Int64N(1e6), r.Int64N(1000)*1000)
	}
	for _, n := range bytes {
		if got, want := bytesQuantity(n), resource.NewQuantity(n, resource.BinarySI).String(); got != want {
			t.Errorf("bytesQuantity(%d) = %q, apimachinery says %q", n, got, want)
		}
	}
	for _, m := range milli {
		if got, want := milliQuantity(m), resource.NewMilliQuantity(m, resource.DecimalSI).String(); got != want {
			t.Errorf("milliQuantity(%d) = %q, apimachinery says %q", m, got, want)
		}
	}
}
