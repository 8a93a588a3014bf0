package hooks

import (
	"bytes"
	"context"
	"io"
	"testing"
)

// BenchmarkHandle measures one hook decision in-process (payload decode,
// check, response) with the production detectors of NewEnv.
func BenchmarkHandle(b *testing.B) {
	env := NewEnv(func(string) string { return "" })
	for _, c := range []struct{ hook, payload string }{
		{"bash-risk-pretool", "pre_bash_git_ok"},
		{"ssrf-pretool", "pre_bash_public_ok"},
		{"secret-redact-posttool", "post_read_source_ok"},
		{"context-suppress-posttool", "post_bash_issue_ok"},
		{"unicode-posttool", "post_read_source_ok"},
	} {
		data := payload(b, c.payload)
		b.Run(c.hook, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := Handle(context.Background(), c.hook, bytes.NewReader(data), io.Discard, env); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
