package trace

import (
	"fmt"
	"math"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	oteltrace "go.opentelemetry.io/otel/trace"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// encodeRequest is the body of one OTLP/HTTP export: an
// opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest, whose
// only field (1) is the repeated ResourceSpans. The envelope is written
// here with protowire because the generated collector package also
// carries the gRPC service, and with it google.golang.org/grpc.
func encodeRequest(spans []sdktrace.ReadOnlySpan) ([]byte, error) {
	var b []byte
	for _, rs := range resourceSpans(spans) {
		n := proto.Size(rs)
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		b = protowire.AppendVarint(b, uint64(n))
		start := len(b)
		var err error
		if b, err = (proto.MarshalOptions{UseCachedSize: true}).MarshalAppend(b, rs); err != nil {
			return nil, fmt.Errorf("encode spans: %w", err)
		}
		if len(b)-start != n {
			return nil, fmt.Errorf("encode spans: %d bytes written, %d announced", len(b)-start, n)
		}
	}
	return b, nil
}

// resourceSpans groups spans by resource, then by instrumentation scope,
// in the order each resource and scope first appears.
func resourceSpans(spans []sdktrace.ReadOnlySpan) []*tracepb.ResourceSpans {
	type resKey struct {
		attrs  attribute.Distinct
		schema string
	}
	type scopeKey struct {
		res   resKey
		scope instrumentation.Scope
	}
	byRes := map[resKey]*tracepb.ResourceSpans{}
	byScope := map[scopeKey]*tracepb.ScopeSpans{}
	var out []*tracepb.ResourceSpans
	for _, s := range spans {
		if s == nil {
			continue
		}
		r := s.Resource()
		rk := resKey{r.Equivalent(), r.SchemaURL()}
		rs := byRes[rk]
		if rs == nil {
			rs = &tracepb.ResourceSpans{Resource: resourceProto(r), SchemaUrl: r.SchemaURL()}
			byRes[rk] = rs
			out = append(out, rs)
		}
		sc := s.InstrumentationScope()
		sk := scopeKey{rk, sc}
		ss := byScope[sk]
		if ss == nil {
			ss = &tracepb.ScopeSpans{Scope: scopeProto(sc), SchemaUrl: sc.SchemaURL}
			byScope[sk] = ss
			rs.ScopeSpans = append(rs.ScopeSpans, ss)
		}
		ss.Spans = append(ss.Spans, spanProto(s))
	}
	return out
}

func resourceProto(r *resource.Resource) *resourcepb.Resource {
	if r == nil {
		return nil
	}
	return &resourcepb.Resource{Attributes: iterProto(r.Iter())}
}

func scopeProto(s instrumentation.Scope) *commonpb.InstrumentationScope {
	if s == (instrumentation.Scope{}) {
		return nil
	}
	return &commonpb.InstrumentationScope{Name: s.Name, Version: s.Version, Attributes: iterProto(s.Attributes.Iter())}
}

func spanProto(s sdktrace.ReadOnlySpan) *tracepb.Span {
	sc := s.SpanContext()
	tid, sid := sc.TraceID(), sc.SpanID()
	st := s.Status()
	p := &tracepb.Span{
		TraceId:                tid[:],
		SpanId:                 sid[:],
		TraceState:             sc.TraceState().String(),
		Flags:                  flags(sc.TraceFlags(), s.Parent().IsRemote()),
		Name:                   s.Name(),
		Kind:                   spanKinds[s.SpanKind()],
		StartTimeUnixNano:      unixNano(s.StartTime().UnixNano()),
		EndTimeUnixNano:        unixNano(s.EndTime().UnixNano()),
		Attributes:             attrsProto(s.Attributes()),
		DroppedAttributesCount: count(s.DroppedAttributes()),
		DroppedEventsCount:     count(s.DroppedEvents()),
		DroppedLinksCount:      count(s.DroppedLinks()),
		Status:                 &tracepb.Status{Code: statusCodes[st.Code], Message: st.Description},
	}
	if psid := s.Parent().SpanID(); psid.IsValid() {
		p.ParentSpanId = psid[:]
	}
	for _, e := range s.Events() {
		p.Events = append(p.Events, &tracepb.Span_Event{
			Name:                   e.Name,
			TimeUnixNano:           unixNano(e.Time.UnixNano()),
			Attributes:             attrsProto(e.Attributes),
			DroppedAttributesCount: count(e.DroppedAttributeCount),
		})
	}
	for _, l := range s.Links() {
		ltid, lsid := l.SpanContext.TraceID(), l.SpanContext.SpanID()
		p.Links = append(p.Links, &tracepb.Span_Link{
			TraceId:                ltid[:],
			SpanId:                 lsid[:],
			TraceState:             l.SpanContext.TraceState().String(),
			Flags:                  flags(l.SpanContext.TraceFlags(), l.SpanContext.IsRemote()),
			Attributes:             attrsProto(l.Attributes),
			DroppedAttributesCount: count(l.DroppedAttributeCount),
		})
	}
	return p
}

// flags are the W3C trace flags in the low byte plus the two bits saying
// that whether the parent (or the linked span) is remote is known, and
// whether it is.
func flags(tf oteltrace.TraceFlags, remote bool) uint32 {
	f := uint32(tf) | uint32(tracepb.SpanFlags_SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE_MASK)
	if remote {
		f |= uint32(tracepb.SpanFlags_SPAN_FLAGS_CONTEXT_IS_REMOTE_MASK)
	}
	return f
}

// spanKinds and statusCodes map OpenTelemetry's span kinds and status
// codes to their OTLP values; anything else maps to the zero value,
// SPAN_KIND_UNSPECIFIED and STATUS_CODE_UNSET.
var (
	spanKinds = map[oteltrace.SpanKind]tracepb.Span_SpanKind{
		oteltrace.SpanKindInternal: tracepb.Span_SPAN_KIND_INTERNAL,
		oteltrace.SpanKindServer:   tracepb.Span_SPAN_KIND_SERVER,
		oteltrace.SpanKindClient:   tracepb.Span_SPAN_KIND_CLIENT,
		oteltrace.SpanKindProducer: tracepb.Span_SPAN_KIND_PRODUCER,
		oteltrace.SpanKindConsumer: tracepb.Span_SPAN_KIND_CONSUMER,
	}
	statusCodes = map[codes.Code]tracepb.Status_StatusCode{
		codes.Ok:    tracepb.Status_STATUS_CODE_OK,
		codes.Error: tracepb.Status_STATUS_CODE_ERROR,
	}
)

// unixNano clamps a time before 1970 (the zero time of a span never
// ended, say) to 0.
func unixNano(ns int64) uint64 { return uint64(max(ns, 0)) }

// count clamps a dropped-items count to the uint32 of the protocol.
func count(n int) uint32 { return uint32(min(max(int64(n), 0), math.MaxUint32)) }

func attrsProto(kvs []attribute.KeyValue) []*commonpb.KeyValue {
	if len(kvs) == 0 {
		return nil
	}
	out := make([]*commonpb.KeyValue, len(kvs))
	for i, kv := range kvs {
		out[i] = &commonpb.KeyValue{Key: string(kv.Key), Value: valueProto(kv.Value)}
	}
	return out
}

func iterProto(it attribute.Iterator) []*commonpb.KeyValue {
	if it.Len() == 0 {
		return nil
	}
	out := make([]*commonpb.KeyValue, 0, it.Len())
	for it.Next() {
		kv := it.Attribute()
		out = append(out, &commonpb.KeyValue{Key: string(kv.Key), Value: valueProto(kv.Value)})
	}
	return out
}

// valueProto converts every attribute type the API has; an EMPTY value is
// an AnyValue with nothing set, as the protocol defines it.
func valueProto(v attribute.Value) *commonpb.AnyValue {
	switch v.Type() {
	case attribute.BOOL:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_BoolValue{BoolValue: v.AsBool()}}
	case attribute.INT64:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: v.AsInt64()}}
	case attribute.FLOAT64:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: v.AsFloat64()}}
	case attribute.STRING:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: v.AsString()}}
	case attribute.BYTESLICE:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_BytesValue{BytesValue: v.AsByteSlice()}}
	case attribute.BOOLSLICE:
		return arrayProto(v.AsBoolSlice(), attribute.BoolValue)
	case attribute.INT64SLICE:
		return arrayProto(v.AsInt64Slice(), attribute.Int64Value)
	case attribute.FLOAT64SLICE:
		return arrayProto(v.AsFloat64Slice(), attribute.Float64Value)
	case attribute.STRINGSLICE:
		return arrayProto(v.AsStringSlice(), attribute.StringValue)
	case attribute.SLICE:
		return arrayProto(v.AsSlice(), func(v attribute.Value) attribute.Value { return v })
	case attribute.MAP:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_KvlistValue{KvlistValue: &commonpb.KeyValueList{Values: attrsProto(v.AsMap())}}}
	}
	return &commonpb.AnyValue{}
}

func arrayProto[T any](elems []T, value func(T) attribute.Value) *commonpb.AnyValue {
	vals := make([]*commonpb.AnyValue, len(elems))
	for i, e := range elems {
		vals[i] = valueProto(value(e))
	}
	return &commonpb.AnyValue{Value: &commonpb.AnyValue_ArrayValue{ArrayValue: &commonpb.ArrayValue{Values: vals}}}
}
