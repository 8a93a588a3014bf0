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
