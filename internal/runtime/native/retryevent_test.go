package native

import (
	"context"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/model/modeltest"
	"github.com/fullsend-ai/fullsend/internal/runtime"
)

// TestRetryEvent: a model call that is retried shows up as a retry event
// carrying the next attempt and its wait, before the turn it leads to (the
// runner prints it: a dead model server is no longer silent).
func TestRetryEvent(t *testing.T) {
	for _, api := range dialects {
		t.Run(string(api), func(t *testing.T) {
			h := newHarnessEnv(t, api,
				modeltest.Status(503, map[string]string{"Retry-After": "7"}),
				modeltest.Say("done"),
			)
			if out, err := h.run(context.Background(), h.input(nil)); err != nil || out.StopReason != runtime.StopCompleted {
				t.Fatalf("outcome %+v err %v", out, err)
			}
			retry, turn := -1, -1
			for i, e := range h.events {
				switch {
				case e.Kind == runtime.EventRetry && retry < 0:
					retry = i
					if e.Attempt != 2 || e.WaitMS != 7000 || !strings.HasPrefix(e.Name, "model API http") || !strings.Contains(e.Text, "503") {
						t.Errorf("retry event %+v", e)
					}
				case e.Kind == runtime.EventTurn && turn < 0:
					turn = i
				}
			}
			if retry < 0 || turn < 0 || retry > turn {
				t.Errorf("retry event at %d, first turn at %d: %+v", retry, turn, h.events)
			}
		})
	}
}
