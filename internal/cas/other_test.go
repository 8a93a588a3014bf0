//go:build !unix

package cas

import (
	"testing"
	"time"
)

func mkfifo(t *testing.T, _ string) { t.Skip("no FIFOs here") }

func cpuTime() time.Duration { return 0 }

func emfileChild(*Store) error { return nil }
