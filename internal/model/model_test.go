package model_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/fullsend-ai/fullsend/internal/model"
	"github.com/fullsend-ai/fullsend/internal/model/modeltest"
)

var dialects = []model.API{model.APIOpenAI, model.APIAnthropic}

const testKey = "sk-test-SECRET-0123456789"

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestConfigPrecedence(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		o       model.Overrides
		want    model.Config
		wantErr string
	}{
		{
			name: "harness model and defaults",
			env:  map[string]string{model.EnvAPIKey: testKey},
			o:    model.Overrides{HarnessModel: "opus"},
			want: model.Config{API: "openai", BaseURL: model.DefaultOpenAIBaseURL, Model: "opus", Auth: "bearer", KeyEnv: model.EnvAPIKey, Key: testKey},
		},
		{
			name: "env beats harness",
			env:  map[string]string{model.EnvModel: "gpt-oss-120b", model.EnvBaseURL: "http://localhost:8080/v1", model.EnvAuth: "none"},
			o:    model.Overrides{HarnessModel: "opus"},
			want: model.Config{API: "openai", BaseURL: "http://localhost:8080/v1", Model: "gpt-oss-120b", Auth: "none"},
		},
		{
			name: "flags beat env",
			env:  map[string]string{model.EnvModel: "env-model", model.EnvAPI: "openai", model.EnvAuth: "none", "MY_KEY": testKey},
			o:    model.Overrides{Model: "flag-model", API: "anthropic", Auth: "bearer", KeyEnv: "MY_KEY"},
			want: model.Config{API: "anthropic", BaseURL: model.DefaultAnthropicBaseURL, Model: "flag-model", Auth: "bearer", KeyEnv: "MY_KEY", Key: testKey},
		},
		{
			name:    "no model",
			env:     map[string]string{model.EnvAuth: "none"},
			wantErr: "no model named",
		},
		{
			name:    "bearer without key",
			o:       model.Overrides{Model: "m"},
			wantErr: "bearer auth needs a key in FULLSEND_API_KEY",
		},
		{
			name:    "key over plain http to a remote host",
			env:     map[string]string{model.EnvAPIKey: testKey},
			o:       model.Overrides{Model: "m", BaseURL: "http://gpu-box.example:8000/v1"},
			wantErr: "refusing to send a key over plain http",
		},
		{
			name: "key over plain http to loopback",
			env:  map[string]string{model.EnvAPIKey: testKey},
			o:    model.Overrides{Model: "m", BaseURL: "http://127.0.0.1:8000/v1"},
			want: model.Config{API: "openai", BaseURL: "http://127.0.0.1:8000/v1", Model: "m", Auth: "bearer", KeyEnv: model.EnvAPIKey, Key: testKey},
		},
		{
			name:    "userinfo in base URL",
			env:     map[string]string{model.EnvAuth: "none"},
			o:       model.Overrides{Model: "m", BaseURL: "https://u:p@host/v1"},
			wantErr: "must not carry userinfo",
		},
		{
			name:    "unknown dialect",
			env:     map[string]string{model.EnvAuth: "none", model.EnvAPI: "gemini"},
			o:       model.Overrides{Model: "m"},
			wantErr: `"gemini" is not openai or anthropic`,
		},
		{
			name:    "unknown auth",
			o:       model.Overrides{Model: "m", Auth: "basic"},
			wantErr: `"basic" is not bearer or none`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := model.ConfigFromEnv(env(tt.env), tt.o)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want containing %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), testKey) {
					t.Fatalf("error leaks the key: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got.Origin = nil
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestConfigOrigin(t *testing.T) {
	c, err := model.ConfigFromEnv(env(map[string]string{model.EnvAuth: "none", model.EnvBaseURL: "http://localhost:1/v1"}), model.Overrides{HarnessModel: "opus", API: "openai"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"api": "flag", "base_url": "env", "model": "harness", "auth": "env"}
	if !reflect.DeepEqual(c.Origin, want) {
		t.Fatalf("origin = %v, want %v", c.Origin, want)
	}
}

func TestSecretNeverFormats(t *testing.T) {
	c := model.Config{Key: testKey, Model: "m"}
	for _, s := range []string{
		fmt.Sprint(c.Key), fmt.Sprintf("%v %s %q %x %#v %+v", c.Key, c.Key, c.Key, c.Key, c, c),
		mustJSON(t, c), mustJSON(t, map[string]any{"k": c.Key}),
	} {
		if strings.Contains(s, testKey) || strings.Contains(s, fmt.Sprintf("%x", testKey)) {
			t.Fatalf("secret formatted: %s", s)
		}
	}
	if c.Key.Reveal() != testKey {
		t.Fatal("Reveal lost the key")
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

type sleeps struct{ got []time.Duration }

func (s *sleeps) sleep(_ context.Context, d time.Duration) error {
	s.got = append(s.got, d)
	return nil
}

func newClient(t *testing.T, srv *modeltest.Server, cfg model.Config, calls *[]model.Call, sl *sleeps) *model.Client {
	t.Helper()
	o := model.Options{Sleep: sl.sleep}
	if calls != nil {
		o.Record = func(c model.Call) { *calls = append(*calls, c) }
	}
	c, err := model.New(cfg, o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func withKey(cfg model.Config) model.Config {
	cfg.Auth, cfg.Key, cfg.KeyEnv = model.AuthBearer, testKey, model.EnvAPIKey
	return cfg
}

func TestRetryAfterThenSuccess(t *testing.T) {
	for _, api := range dialects {
		t.Run(string(api), func(t *testing.T) {
			srv := modeltest.New(t, api,
				modeltest.Status(429, map[string]string{"Retry-After": "7", "request-id": "rl-1"}),
				modeltest.Status(503, map[string]string{"retry-after-ms": "250"}),
				modeltest.Say("hello"),
			)
			var calls []model.Call
			sl := &sleeps{}
			c := newClient(t, srv, srv.Config(), &calls, sl)
			resp, err := c.Complete(context.Background(), &model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: []model.Block{model.TextBlock("hi")}}}, MaxTokens: 100})
			if err != nil {
				t.Fatal(err)
			}
			if resp.Message.Text() != "hello" || resp.Attempts != 3 || resp.StopReason != model.StopEnd {
				t.Fatalf("resp = %+v", resp)
			}
			if want := []time.Duration{7 * time.Second, 250 * time.Millisecond}; !reflect.DeepEqual(sl.got, want) {
				t.Fatalf("sleeps = %v, want %v", sl.got, want)
			}
			if len(calls) != 3 {
				t.Fatalf("%d call records, want 3", len(calls))
			}
			if calls[0].Status != 429 || calls[0].RequestID != "rl-1" || !calls[0].WillRetry || calls[0].RetryAfterMS != 7000 || calls[0].BodyExcerpt == "" {
				t.Fatalf("call[0] = %+v", calls[0])
			}
			if calls[2].Status != 200 || calls[2].RequestID != "req_3" || calls[2].WillRetry || calls[2].RequestBytes == 0 || calls[2].ResponseBytes == 0 || calls[2].Attempt != 3 || calls[2].OutputTokens != 5 {
				t.Fatalf("call[2] = %+v", calls[2])
			}
		})
	}
}

func TestRetriesBounded(t *testing.T) {
	for _, api := range dialects {
		t.Run(string(api), func(t *testing.T) {
			var steps []modeltest.Step
			for range 3 {
				steps = append(steps, modeltest.Status(500, nil))
			}
			srv := modeltest.New(t, api, steps...)
			sl := &sleeps{}
			c, err := model.New(srv.Config(), model.Options{MaxRetries: 2, Sleep: sl.sleep})
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Complete(context.Background(), &model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: []model.Block{model.TextBlock("hi")}}}, MaxTokens: 10})
			var ae *model.APIError
			if !errors.As(err, &ae) || ae.Status != 500 || ae.Attempts != 3 {
				t.Fatalf("err = %v", err)
			}
			if len(srv.Requests()) != 3 || len(sl.got) != 2 {
				t.Fatalf("requests %d sleeps %d, want 3 and 2", len(srv.Requests()), len(sl.got))
			}
		})
	}
}

func TestNoRetryOnClientErrorAndLongRetryAfter(t *testing.T) {
	srv := modeltest.New(t, model.APIOpenAI,
		modeltest.Status(400, nil),
		modeltest.Status(429, map[string]string{"Retry-After": "3600"}),
	)
	sl := &sleeps{}
	c := newClient(t, srv, srv.Config(), nil, sl)
	req := &model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: []model.Block{model.TextBlock("x")}}}, MaxTokens: 1}
	_, err := c.Complete(context.Background(), req)
	var ae *model.APIError
	if !errors.As(err, &ae) || ae.Status != 400 || ae.Attempts != 1 {
		t.Fatalf("400: err = %v", err)
	}
	_, err = c.Complete(context.Background(), req)
	if !errors.As(err, &ae) || ae.Status != 429 || !strings.Contains(err.Error(), "giving up") {
		t.Fatalf("long Retry-After: err = %v", err)
	}
	if len(sl.got) != 0 {
		t.Fatalf("slept %v", sl.got)
	}
}

func TestKeyHeadersAndRedaction(t *testing.T) {
	for _, api := range dialects {
		t.Run(string(api), func(t *testing.T) {
			// The server echoes the key in its error body: it must not come back.
			srv := modeltest.New(t, api,
				modeltest.Say("ok"),
				modeltest.Step{Status: 401, Body: `{"error":{"message":"invalid key ` + testKey + `"}}`},
			)
			var calls []model.Call
			c := newClient(t, srv, withKey(srv.Config()), &calls, &sleeps{})
			req := &model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: []model.Block{model.TextBlock("x")}}}, MaxTokens: 1}
			if _, err := c.Complete(context.Background(), req); err != nil {
				t.Fatal(err)
			}
			h := srv.Requests()[0].Header
			switch api {
			case model.APIOpenAI:
				if h.Get("Authorization") != "Bearer "+testKey || h.Get("x-api-key") != "" {
					t.Fatalf("headers %v", h)
				}
			case model.APIAnthropic:
				if h.Get("x-api-key") != testKey || h.Get("Authorization") != "" || h.Get("anthropic-version") == "" {
					t.Fatalf("headers %v", h)
				}
			}
			_, err := c.Complete(context.Background(), req)
			if err == nil || strings.Contains(err.Error(), testKey) || !strings.Contains(err.Error(), "[redacted]") {
				t.Fatalf("err = %v", err)
			}
			if s := mustJSON(t, calls); strings.Contains(s, testKey) {
				t.Fatalf("call records leak the key: %s", s)
			}
		})
	}
}

func TestAuthNoneSendsNoCredential(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "ambient-openai-key")
	t.Setenv("ANTHROPIC_API_KEY", "ambient-anthropic-key")
	for _, api := range dialects {
		srv := modeltest.New(t, api, modeltest.Say("ok"))
		c := newClient(t, srv, srv.Config(), nil, &sleeps{})
		if _, err := c.Complete(context.Background(), &model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: []model.Block{model.TextBlock("x")}}}, MaxTokens: 1}); err != nil {
			t.Fatal(err)
		}
		h := srv.Requests()[0].Header
		if h.Get("Authorization") != "" || h.Get("x-api-key") != "" {
			t.Fatalf("%s: credential sent with auth none: %v", api, h)
		}
	}
}

func TestRedirectRefused(t *testing.T) {
	srv := modeltest.New(t, model.APIOpenAI, modeltest.Step{Status: 307, Header: map[string]string{"Location": "http://127.0.0.1:1/steal"}})
	c := newClient(t, srv, withKey(srv.Config()), nil, &sleeps{})
	_, err := c.Complete(context.Background(), &model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: []model.Block{model.TextBlock("x")}}}, MaxTokens: 1})
	if err == nil || !strings.Contains(err.Error(), "redirect refused") {
		t.Fatalf("err = %v", err)
	}
}

// TestRoundTrip encodes a conversation with tool calls, tool results (one
// with an image) and checks that the server decodes the same conversation.
func TestRoundTrip(t *testing.T) {
	img := model.Block{Type: model.BlockImage, MediaType: "image/png", Data: "iVBORw0KGgo="}
	conv := []model.Message{
		{Role: model.RoleUser, Content: []model.Block{model.TextBlock("fix it")}},
		{Role: model.RoleAssistant, Content: []model.Block{model.TextBlock("looking")}, ToolCalls: []model.ToolCall{
			{ID: "c1", Name: "read_file", Arguments: `{"path":"a.go"}`},
			{ID: "c2", Name: "view_image", Arguments: `{"path":"x.png"}`},
		}},
		{Role: model.RoleTool, ToolCallID: "c1", Content: []model.Block{model.TextBlock("package a")}},
		{Role: model.RoleTool, ToolCallID: "c2", Content: []model.Block{model.TextBlock("image x.png"), img}, IsError: false},
		{Role: model.RoleAssistant, Content: []model.Block{model.TextBlock("done")}},
		{Role: model.RoleUser, Content: []model.Block{model.TextBlock("thanks")}},
	}
	tools := []model.ToolSpec{{Name: "read_file", Description: "read", Parameters: json.RawMessage(`{"type":"object"}`)}}
	for _, api := range dialects {
		t.Run(string(api), func(t *testing.T) {
			srv := modeltest.New(t, api, modeltest.Say("ok"))
			c := newClient(t, srv, srv.Config(), nil, &sleeps{})
			if _, err := c.Complete(context.Background(), &model.Request{System: "sys", Messages: conv, Tools: tools, MaxTokens: 321}); err != nil {
				t.Fatal(err)
			}
			got := srv.Requests()[0].Decoded
			if got.System != "sys" || got.MaxTokens != 321 || got.Model != "fake-model" || len(got.Tools) != 1 || got.Tools[0].Name != "read_file" {
				t.Fatalf("request header fields: %+v", got)
			}
			want := conv
			if api == model.APIOpenAI {
				// openai carries tool images in a user message after the tool messages.
				want = append([]model.Message(nil), conv[:3]...)
				want = append(want,
					model.Message{Role: model.RoleTool, ToolCallID: "c2", Content: []model.Block{model.TextBlock("image x.png")}},
					model.Message{Role: model.RoleUser, Content: []model.Block{model.TextBlock("Images returned by the tool calls above:"), img}},
				)
				want = append(want, conv[4:]...)
			}
			if !reflect.DeepEqual(got.Messages, want) {
				g, _ := json.MarshalIndent(got.Messages, "", " ")
				w, _ := json.MarshalIndent(want, "", " ")
				t.Fatalf("decoded conversation differs:\n got %s\nwant %s", g, w)
			}
		})
	}
}

func TestResponseDecoding(t *testing.T) {
	for _, api := range dialects {
		t.Run(string(api), func(t *testing.T) {
			srv := modeltest.New(t, api,
				modeltest.Step{Reply: &modeltest.Reply{Text: "calling", ToolCalls: []model.ToolCall{{ID: "t1", Name: "bash", Arguments: `{"command":"ls"}`}}, InputTokens: 11, OutputTokens: 7}},
				modeltest.Step{Reply: &modeltest.Reply{Text: "cut", Stop: model.StopMaxTokens}},
				modeltest.Step{Status: 200, Body: `{not json`},
			)
			c := newClient(t, srv, srv.Config(), nil, &sleeps{})
			req := &model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: []model.Block{model.TextBlock("x")}}}, MaxTokens: 5}
			r, err := c.Complete(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if r.StopReason != model.StopToolUse || r.Message.Text() != "calling" || len(r.Message.ToolCalls) != 1 ||
				r.Message.ToolCalls[0] != (model.ToolCall{ID: "t1", Name: "bash", Arguments: `{"command":"ls"}`}) || r.Usage != (model.Usage{InputTokens: 11, OutputTokens: 7}) {
				t.Fatalf("resp = %+v", r)
			}
			r, err = c.Complete(context.Background(), req)
			if err != nil || r.StopReason != model.StopMaxTokens {
				t.Fatalf("max tokens: %+v %v", r, err)
			}
			_, err = c.Complete(context.Background(), req)
			var pe *model.ProtocolError
			if !errors.As(err, &pe) {
				t.Fatalf("bad body: err = %v", err)
			}
		})
	}
}

func TestContextCancelStopsRetries(t *testing.T) {
	srv := modeltest.New(t, model.APIOpenAI, modeltest.Status(503, nil), modeltest.Status(503, nil))
	ctx, cancel := context.WithCancel(context.Background())
	c, err := model.New(srv.Config(), model.Options{Sleep: func(ctx context.Context, d time.Duration) error { cancel(); return ctx.Err() }})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Complete(ctx, &model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: []model.Block{model.TextBlock("x")}}}, MaxTokens: 1})
	if !errors.Is(err, context.Canceled) || len(srv.Requests()) != 1 {
		t.Fatalf("err = %v, requests = %d", err, len(srv.Requests()))
	}
}

func TestOpenAIArgumentsAsObject(t *testing.T) {
	// Some servers send function.arguments as an object instead of a string.
	srv := modeltest.New(t, model.APIOpenAI, modeltest.Step{Status: 200, Body: `{"id":"x","choices":[{"message":{"role":"assistant","content":null,"tool_calls":[{"id":"a","type":"function","function":{"name":"bash","arguments":{"command":"ls"}}}]},"finish_reason":"stop"}]}`})
	c := newClient(t, srv, srv.Config(), nil, &sleeps{})
	r, err := c.Complete(context.Background(), &model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: []model.Block{model.TextBlock("x")}}}, MaxTokens: 1})
	if err != nil {
		t.Fatal(err)
	}
	if r.Message.ToolCalls[0].Arguments != `{"command":"ls"}` || r.StopReason != model.StopToolUse {
		t.Fatalf("got %+v", r)
	}
}
