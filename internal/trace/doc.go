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
// exported over OTLP/HTTP (protobuf) by a batching processor; the exporter
// reads the endpoint, headers, timeout, TLS and compression settings from
// the OTEL_EXPORTER_OTLP_* variables itself, the SDK reads OTEL_BSP_* and
// OTEL_TRACES_SAMPLER*, and OTEL_SERVICE_NAME / OTEL_RESOURCE_ATTRIBUTES
// name the resource (service.name defaults to "fullsend"). The gRPC
// protocol is not built in; asking for it is a one-line error.
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
