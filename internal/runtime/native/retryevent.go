package native

import (
	"fmt"

	"github.com/fullsend-ai/fullsend/internal/model"
	"github.com/fullsend-ai/fullsend/internal/runtime"
)

// emitRetry reports a model API attempt that failed and will be retried
// as a runtime.EventRetry (the runner shows it with its wait). The error
// text of a Call is already redacted of the API key.
func emitRetry(in runtime.RunInput, c model.Call) {
	if !c.WillRetry {
		return
	}
	why := c.Error
	if why == "" && c.Status != 0 {
		why = fmt.Sprintf("HTTP %d", c.Status)
	}
	in.Emit(runtime.Event{Kind: runtime.EventRetry, Name: "model API " + c.URL, Text: runtime.Truncate(why), Attempt: c.Attempt + 1, WaitMS: c.RetryAfterMS})
}
