package native

import (
	"context"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/fullsend-ai/fullsend/internal/model/modeltest"
	"github.com/fullsend-ai/fullsend/internal/sandbox"
)

// timedSession measures the time spent in sandbox Exec calls.
type timedSession struct {
	sandbox.Session
	mu   sync.Mutex
	busy time.Duration
}

func (s *timedSession) Exec(ctx context.Context, r sandbox.ExecRequest) (sandbox.ExecResult, error) {
	start := time.Now()
	res, err := s.Session.Exec(ctx, r)
	s.mu.Lock()
	s.busy += time.Since(start)
	s.mu.Unlock()
	return res, err
}

// BenchmarkTurnOverhead runs conversations of benchTurns turns (each turn a
// read_file tool call, the last a final answer) against the fake model
// server and reports, per turn:
//
//	overhead-ms/turn  wall time minus the time spent inside the fake model
//	                  server's handler (the loop, the HTTP client, JSON,
//	                  transcript and artifacts, and the sandbox exec)
//	loop-ms/turn      the same minus the time spent in sandbox Exec (the
//	                  fake session spawns a host process per exec)
func BenchmarkTurnOverhead(b *testing.B) {
	const benchTurns = 20
	for _, api := range dialects {
		b.Run(string(api), func(b *testing.B) {
			h := newHarnessEnv(b, api)
			srv := modeltest.NewFunc(b, api, func(i int, _ modeltest.Received) modeltest.Step {
				if (i+1)%benchTurns == 0 {
					return modeltest.Say("done")
				}
				return modeltest.Call("r"+strconv.Itoa(i), "read_file", map[string]any{"path": "README.md"})
			})
			h.setServer(srv)
			ts := &timedSession{Session: h.sess}
			base := b.TempDir()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				in := h.input(nil)
				in.RunDir = filepath.Join(base, strconv.Itoa(i))
				in.Events = nil
				out, err := h.rt.Run(context.Background(), ts, in)
				if err != nil || out.Turns != benchTurns {
					b.Fatalf("outcome %+v err %v", out, err)
				}
			}
			b.StopTimer()
			turns := float64(b.N * benchTurns)
			overhead := b.Elapsed() - srv.HandlerTime()
			b.ReportMetric(float64(overhead.Microseconds())/1000/turns, "overhead-ms/turn")
			b.ReportMetric(float64((overhead-ts.busy).Microseconds())/1000/turns, "loop-ms/turn")
		})
	}
}
