// Package trace is fullsend's OpenTelemetry tracing: it owns the tracer
// provider, the span names and attribute keys, and the rule that decides
// whether anything is exported at all.
//
// Tracing is configured only by the standard OTEL_* environment variables
// and is off unless one of them asks for traces: OTEL_TRACES_EXPORTER=otlp,
// OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT.
// OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none turn it off whatever
// else is set. When it is off Setup creates nothing: no exporter, no
// goroutine, and every Start returns the global no-op span (the callers'
// attribute work is guarded by Span.IsRecording). When it is on, spans are
// exported over OTLP/HTTP (protobuf) by a batching processor; the SDK reads
// OTEL_BSP_* and OTEL_TRACES_SAMPLER*, and OTEL_SERVICE_NAME /
// OTEL_RESOURCE_ATTRIBUTES name the resource (service.name defaults to
// "fullsend"). The gRPC protocol is not built in; asking for it is a
// one-line error.
//
// # The exporter
//
// The OTLP/HTTP exporter is our own (otlp.go): the SDK's otlptracehttp
// brings google.golang.org/grpc, and with it golang.org/x/net/trace, which
// added 15 MB to the binary (its html/template execution defeats the linker's
// dead-method elimination) and registers /debug/requests on
// http.DefaultServeMux. Spans are converted to the generated messages of
// go.opentelemetry.io/proto/otlp (trace, common, resource: no gRPC) and
// the ExportTraceServiceRequest around them is written with protowire. It
// reads the OTEL_EXPORTER_OTLP_* variables as the SDK's exporter did, each
// traces-specific OTEL_EXPORTER_OTLP_TRACES_* variable winning over the
// general one: ENDPOINT (plus /v1/traces; the traces endpoint as it is;
// default https://localhost:4318), HEADERS (key=value,… URL-decoded; the
// traces list replaces the general one), TIMEOUT (milliseconds, default
// 10000, 0 for none), COMPRESSION (gzip or none), INSECURE (true or false,
// when set, picks http or https whatever the endpoint's scheme),
// CERTIFICATE, CLIENT_CERTIFICATE and CLIENT_KEY (PEM files). Unlike the
// SDK, a value it cannot honour (a URL that is not http(s), a malformed
// header list, a timeout that is not a number, an unknown compression, an
// unreadable certificate, half a client key pair, certificates with a
// plain-http endpoint) is Setup's one-line error, and tracing stays off,
// rather than a setting quietly ignored; errors never show a header value
// or a URL's password.
//
// One export is one POST. 429, 502, 503 and 504 and a reset or timed-out
// connection are retried, waiting 1 s, 2 s, 4 s, then 8 s (±50%) or what
// Retry-After asks if longer, for as long as the timeout allows (a minute
// when it is 0); other statuses are not retried. The error names the URL,
// the status and the collector's own message (its google.rpc.Status, or
// the first line of a text body); a 2xx answer with a partial_success that
// rejected spans is an error too. Requests above MaxExportBytes are
// refused and responses are read up to MaxResponseBytes. Shutdown waits
// for the exports in flight (cancelling them when its context ends) and
// later exports fail with ErrExporterShutDown.
//
// Span names and attributes follow the OpenTelemetry GenAI semantic
// conventions where they apply (invoke_agent, chat, execute_tool and the
// gen_ai.* attributes); everything else is named fullsend.*. Prompt and
// completion text is recorded only when
// OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true, and always after
// the caller's secret redaction; header values, tokens and keys never are.
//
// Traceparent renders the current span as a W3C traceparent value; the run
// passes it to the agent as TRACEPARENT so that an agent CLI's own
// telemetry joins the run's trace.
package trace
