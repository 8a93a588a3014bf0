// Package modeltest provides a scripted fake model server on loopback
// (httptest) speaking both dialects of package model, for tests of the
// model client and the native runtime. It owns no production behaviour.
//
// Each test lists the answers the "model" gives, in order (New, Push), or
// computes them per request (NewFunc): a Reply (text and tool calls, with
// arguments sent verbatim so malformed calls can be scripted), a raw
// status with headers (429 + Retry-After), or a Handler taking over the
// exchange (stall until the client gives up). Every request is kept, raw
// and decoded back to model.Request, for assertions; HandlerTime reports
// the time spent serving, so benchmarks can subtract "model time".
//
// A Reply to a request asking for a stream is sent as server-sent events
// in the dialect's grammar (text and tool arguments split into pieces of
// PieceSize bytes, so arguments always arrive split), with SetDeltaDelay
// between events; Step.Fault injects a dropped connection, a malformed
// event, an error event, an oversize line or a missing final event after
// about half of the events.
//
// Handlers report script problems (wrong endpoint, undecodable request,
// script exhausted) with t.Errorf and an HTTP error, never t.Fatal: they
// run on server goroutines.
package modeltest
