package chat

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/fullsend-ai/fullsend/internal/runtime"
	"github.com/fullsend-ai/fullsend/internal/runtime/native"
	"github.com/fullsend-ai/fullsend/internal/schemacheck"
)

// Schema is the JSON Schema (draft 2020-12) of the protocol: $defs
// request and envelope.
//
//go:embed protocol.schema.json
var Schema []byte

// Request types.
const (
	ReqUserMessage = "user_message"
	ReqHistory     = "history"
	ReqCancel      = "cancel"
)

// Envelope types.
const (
	EnvTurnStart  = "turn_start"
	EnvEvent      = "event"
	EnvTurnEnd    = "turn_end"
	EnvHistoryEnd = "history_end"
	EnvError      = "error"
)

// MaxLine bounds one request line; MaxText the text of a message.
const (
	MaxLine = 1 << 20
	MaxText = 256 << 10
)

// Request is one line of standard input.
type Request struct {
	Type    string   `json:"type"`
	Session string   `json:"session"`
	Text    string   `json:"text,omitempty"`
	Images  []string `json:"images,omitempty"`
}

// Usage is what one turn (one user message) cost.
type Usage struct {
	ModelTurns   int   `json:"model_turns"`
	ToolCalls    int   `json:"tool_calls"`
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
}

// Event is the payload of an event envelope: a runtime.Event (kind, name,
// id, text, ...) or a streamed piece of the model's answer (kind "delta",
// delta text|reasoning|tool_call).
type Event struct {
	Time         time.Time `json:"time"`
	Kind         string    `json:"kind"`
	Delta        string    `json:"delta,omitempty"`
	Name         string    `json:"name,omitempty"`
	ID           string    `json:"id,omitempty"`
	Text         string    `json:"text,omitempty"`
	IsError      bool      `json:"is_error,omitempty"`
	ModelTurn    int       `json:"model_turn,omitempty"`
	InputTokens  int64     `json:"input_tokens,omitempty"`
	OutputTokens int64     `json:"output_tokens,omitempty"`
	Rule         string    `json:"rule,omitempty"`
}

// Envelope is one line of standard output.
type Envelope struct {
	Type    string `json:"type"`
	Session string `json:"session,omitempty"`
	Turn    int    `json:"turn,omitempty"`
	// Replay marks envelopes sent in answer to a history request.
	Replay bool   `json:"replay,omitempty"`
	Event  *Event `json:"event,omitempty"`
	// turn_start: the user message.
	Text   string   `json:"text,omitempty"`
	Images []string `json:"images,omitempty"`
	// turn_end.
	StopReason string `json:"stop_reason,omitempty"`
	Usage      *Usage `json:"usage,omitempty"`
	// error; on turn_end, why the turn failed.
	Error string `json:"error,omitempty"`
	// history_end: what was replayed and how many events of the session
	// the in-memory store dropped.
	Turns   *int `json:"turns,omitempty"`
	Events  *int `json:"events,omitempty"`
	Dropped *int `json:"dropped,omitempty"`
}

var sessionID = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// CheckSessionID refuses a session id that is not 1-64 letters, digits,
// dots, dashes or underscores starting with a letter or digit (it names a
// directory).
func CheckSessionID(id string) error {
	if !sessionID.MatchString(id) {
		return fmt.Errorf("session %q: want 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit", id)
	}
	return nil
}

// ParseRequest decodes and checks one request line.
func ParseRequest(line []byte) (Request, error) {
	var r Request
	dec := json.NewDecoder(strings.NewReader(string(line)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return r, fmt.Errorf("malformed request: %v", err)
	}
	if dec.More() {
		return r, errors.New("malformed request: more than one JSON value on the line")
	}
	switch r.Type {
	case ReqUserMessage:
		if strings.TrimSpace(r.Text) == "" {
			return r, errors.New("user_message: empty text")
		}
		if len(r.Text) > MaxText {
			return r, fmt.Errorf("user_message: text of %d bytes, at most %d", len(r.Text), MaxText)
		}
		if len(r.Images) > native.MaxPromptImages {
			return r, fmt.Errorf("user_message: %d images, at most %d", len(r.Images), native.MaxPromptImages)
		}
	case ReqHistory, ReqCancel:
		if r.Text != "" || len(r.Images) > 0 {
			return r, fmt.Errorf("%s: takes only a session", r.Type)
		}
	case "":
		return r, errors.New("malformed request: no type")
	default:
		return r, fmt.Errorf("unknown request type %q (want user_message, history or cancel)", r.Type)
	}
	if err := CheckSessionID(r.Session); err != nil {
		return r, err
	}
	return r, nil
}

// fromRuntime converts a loop event, redacted by redact.
func fromRuntime(e runtime.Event, redact func(string) string) Event {
	return Event{Time: e.Time.UTC(), Kind: string(e.Kind), Name: redact(e.Name), ID: e.ID, Text: redact(e.Text), IsError: e.IsError,
		ModelTurn: e.Turn, InputTokens: e.InputTokens, OutputTokens: e.OutputTokens, Rule: e.Rule}
}

// fromDelta converts a streamed piece of the answer.
func fromDelta(d native.Delta, redact func(string) string) Event {
	return Event{Time: time.Now().UTC(), Kind: "delta", Delta: string(d.Kind), Text: redact(d.Text), ID: d.ID, Name: d.Name, ModelTurn: d.Turn}
}

// Protocol parts named by ValidateLine.
const (
	PartRequest  = "request"
	PartEnvelope = "envelope"
)

var partSchemas = sync.OnceValues(func() (map[string]*schemacheck.Schema, error) {
	out := map[string]*schemacheck.Schema{}
	for _, part := range []string{PartRequest, PartEnvelope} {
		var doc map[string]any
		if err := json.Unmarshal(Schema, &doc); err != nil {
			return nil, fmt.Errorf("chat protocol schema: %w", err)
		}
		delete(doc, "oneOf")
		doc["$ref"] = "#/$defs/" + part
		data, _ := json.Marshal(doc)
		s, err := schemacheck.Compile("chat protocol "+part, data)
		if err != nil {
			return nil, err
		}
		out[part] = s
	}
	return out, nil
})

// ValidateLine checks one protocol line against the schema's request or
// envelope definition (PartRequest, PartEnvelope).
func ValidateLine(part string, line []byte) error {
	schemas, err := partSchemas()
	if err != nil {
		return err
	}
	s, ok := schemas[part]
	if !ok {
		return fmt.Errorf("chat protocol: no part %q", part)
	}
	if _, probs := s.ValidateJSON(line); len(probs) > 0 {
		var msgs []string
		for _, p := range probs {
			msgs = append(msgs, p.Location()+": "+p.Reason)
		}
		return fmt.Errorf("chat protocol %s %s: %s", part, line, strings.Join(msgs, "; "))
	}
	return nil
}
