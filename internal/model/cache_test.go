package model_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/model"
	"github.com/fullsend-ai/fullsend/internal/model/modeltest"
)

// TestAnthropicCacheBreakpoints: the breakpoints a request carries, as the
// fake server records them, for requests with and without a system
// prompt and tools: never more than the API allows, on the last block of
// the newest user message and of the one before it (tool results of one
// turn merge into one user message, images included).
func TestAnthropicCacheBreakpoints(t *testing.T) {
	tool := model.ToolSpec{Name: "bash", Parameters: []byte(`{"type":"object"}`)}
	calls := model.Message{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: "a", Name: "bash", Arguments: "{}"}, {ID: "b", Name: "bash", Arguments: "{}"}}}
	img := model.Block{Type: model.BlockImage, MediaType: "image/png", Data: "iVBORw0KGgo="}
	cases := []struct {
		name string
		req  model.Request
		want []string
	}{
		{"bare", model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: []model.Block{model.TextBlock("hi")}}}},
			[]string{"messages[0].content[0]"}},
		{"system only", model.Request{System: "sys", Messages: []model.Message{{Role: model.RoleUser, Content: []model.Block{model.TextBlock("hi")}}}},
			[]string{"system[0]", "messages[0].content[0]"}},
		{"two turns", model.Request{System: "sys", Tools: []model.ToolSpec{tool, tool}, Messages: []model.Message{
			{Role: model.RoleUser, Content: []model.Block{model.TextBlock("hi"), img}},
			calls,
			{Role: model.RoleTool, ToolCallID: "a", Content: []model.Block{model.TextBlock("1")}},
			{Role: model.RoleTool, ToolCallID: "b", Content: []model.Block{model.TextBlock("2")}},
		}}, []string{"tools[1]", "system[0]", "messages[0].content[1]", "messages[2].content[1]"}},
		{"long", model.Request{System: "sys", Tools: []model.ToolSpec{tool}, Messages: []model.Message{
			{Role: model.RoleUser, Content: []model.Block{model.TextBlock("hi")}},
			calls,
			{Role: model.RoleTool, ToolCallID: "a", Content: []model.Block{model.TextBlock("1")}},
			{Role: model.RoleTool, ToolCallID: "b", Content: []model.Block{model.TextBlock("2")}},
			{Role: model.RoleAssistant, Content: []model.Block{model.TextBlock("more?")}},
			{Role: model.RoleUser, Content: []model.Block{model.TextBlock("yes"), img}},
		}}, []string{"tools[0]", "system[0]", "messages[2].content[1]", "messages[4].content[1]"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := modeltest.New(t, model.APIAnthropic, modeltest.Say("ok"))
			cl, err := model.New(srv.Config(), model.Options{})
			if err != nil {
				t.Fatal(err)
			}
			req := c.req
			req.MaxTokens = 10
			if _, err := cl.Complete(context.Background(), &req); err != nil {
				t.Fatal(err)
			}
			got := srv.Requests()[0]
			if !reflect.DeepEqual(got.CacheBreakpoints, c.want) {
				t.Fatalf("breakpoints %q, want %q\n%s", got.CacheBreakpoints, c.want, got.Body)
			}
			if got.Decoded.System != c.req.System {
				t.Fatalf("system %q", got.Decoded.System)
			}
		})
	}
}

// TestOpenAIRequestStable: the same request encodes to the same bytes
// every time, and carries no cache field (automatic caching needs
// nothing but a stable prefix).
func TestOpenAIRequestStable(t *testing.T) {
	srv := modeltest.New(t, model.APIOpenAI, modeltest.Say("a"), modeltest.Say("b"))
	cl, err := model.New(srv.Config(), model.Options{})
	if err != nil {
		t.Fatal(err)
	}
	mk := func() *model.Request {
		return &model.Request{System: "sys", MaxTokens: 5,
			Tools:    []model.ToolSpec{{Name: "z", Parameters: []byte(`{"type":"object","properties":{"b":{},"a":{}}}`)}, {Name: "a", Parameters: []byte(`{"type":"object"}`)}},
			Messages: []model.Message{{Role: model.RoleUser, Content: []model.Block{model.TextBlock("hi")}}}}
	}
	for range 2 {
		if _, err := cl.Complete(context.Background(), mk()); err != nil {
			t.Fatal(err)
		}
	}
	r := srv.Requests()
	if string(r[0].Body) != string(r[1].Body) || len(r[0].CacheBreakpoints) != 0 {
		t.Fatalf("bodies differ or carry cache_control:\n%s\n%s", r[0].Body, r[1].Body)
	}
}
