// Package model is fullsend's client for hosted and local language-model
// APIs. It speaks two dialects over plain net/http:
//
//   - openai: POST {base}/chat/completions with function tools, as served by
//     OpenAI, vLLM (`vllm serve`), llama.cpp (`llama-server`), Ollama's /v1,
//     LM Studio and most gateways;
//   - anthropic: POST {base}/v1/messages (Anthropic Messages API).
//
// It owns the provider-neutral conversation types (Message, Block,
// ToolCall, ToolSpec, Request, Response), the conversion to and from both
// wire formats, the configuration (Config, ConfigFromEnv) and the HTTP
// exchange with bounded retries.
//
// # Why not the vendor SDKs
//
// openai-go and anthropic-sdk-go can take a base URL, an *http.Client, zero
// retries and a middleware, but their constructors read ambient variables
// (OPENAI_API_KEY, OPENAI_BASE_URL, OPENAI_CUSTOM_HEADERS,
// ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN, ...). A key from the operator's
// shell could then be sent to whatever base URL a harness run points at, and
// "auth: none" would need header stripping after the fact. Two JSON
// endpoints are small enough to own completely: every header we send is
// one we set.
//
// # Configuration precedence
//
// flags (Overrides) > environment (FULLSEND_MODEL_API, FULLSEND_MODEL_BASE_URL,
// FULLSEND_MODEL, FULLSEND_MODEL_AUTH, FULLSEND_MODEL_KEY_ENV) > the harness
// `model` field > defaults (api openai, auth bearer, key from
// FULLSEND_API_KEY, the vendor's public base URL).
//
// # Rules enforced
//
//   - The API key is a Secret: it formats as "[redacted]", is sent only in
//     the Authorization (openai) or x-api-key (anthropic) header of requests
//     to the configured endpoint, and is scrubbed from every error and call
//     record this package produces.
//   - Bearer auth over plain http is refused unless the host is loopback.
//   - Base URLs with userinfo, a query or a fragment are refused.
//   - Responses are read up to MaxResponseBytes; error bodies are cut to a
//     short excerpt.
//   - Retries: at most Options.MaxRetries (default DefaultMaxRetries) after
//     the first attempt, only on 408, 409, 429, 5xx and transport errors,
//     waiting Retry-After (seconds, HTTP date, or retry-after-ms) when the
//     server sends it, else exponential backoff. A Retry-After longer than
//     Options.MaxRetryAfter ends the retries at once. Every attempt is
//     reported to Options.Record.
//
// # Streaming
//
// A Request with OnDelta set asks for a stream (openai: "stream": true with
// stream_options.include_usage; anthropic: "stream": true) and receives
// Deltas (text, reasoning, tool-call starts) in order as events arrive,
// with the key redacted even when split across events (text is held back
// by len(key)-1 bytes). Complete still returns the assembled Response, equal
// to what the same answer sent as one body decodes to. The event stream is
// read by a strict reader of our own (sse.go): LF or CRLF line ends,
// MaxStreamEvent per line and per event, MaxResponseBytes in all. Retries
// apply only until the first byte of a 2xx stream; a stream that breaks,
// is malformed, carries an error event or ends without its final event
// (data: [DONE], message_stop) is an error, never retried, since deltas
// were already delivered. A server answering a stream request with JSON is
// decoded as usual and its answer delivered as whole deltas. Call.Stream
// and Call.FirstEventMS mark streamed calls in the record. Without OnDelta
// the request and its handling are unchanged.
//
// # Failure
//
// Complete returns *APIError for HTTP failures (status, request id, a
// redacted excerpt, attempts) and *ProtocolError when a 2xx body cannot be
// understood. Context cancellation is returned as the context's error,
// wrapped.
//
// Each Complete is traced as one "chat MODEL" span (package trace, GenAI
// semantic conventions): provider, model, server, token usage, finish
// reason; retries as events; message text only with the content-capture
// opt-in, redacted.
package model
