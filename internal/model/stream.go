package model

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"time"
	"unicode/utf8"
)

// streamDecoder assembles one dialect's stream into a Response.
type streamDecoder interface {
	// event consumes one SSE event; done is true after the final one.
	event(ev sseEvent) (done bool, err error)
	// response returns the assembled answer (after done).
	response() (*Response, error)
	// final names the event that ends a complete stream.
	final() string
}

// isEventStream reports whether the 2xx answer is a server-sent event
// stream. A server that ignores "stream": true answers with JSON; that body
// takes the non-streaming path and is delivered as whole deltas.
func isEventStream(h http.Header) bool {
	mt, _, err := mime.ParseMediaType(h.Get("Content-Type"))
	return err == nil && mt == "text/event-stream"
}

// readStream reads a 2xx event stream, passing deltas to onDelta as they
// arrive. Only a transport failure before the first byte is retried
// (wait >= 0): after it, deltas may have been delivered, and a retry would
// repeat them.
func (c *Client) readStream(ctx context.Context, body io.Reader, onDelta func(Delta), rec *Call, start time.Time) (*Response, time.Duration, error) {
	rd := newSSEReader(body, MaxStreamEvent, MaxResponseBytes)
	defer func() {
		rec.ResponseBytes = int(rd.total)
		rec.DurationMS = ms(c.o.Now().Sub(start))
	}()
	sink := &deltaSink{fn: onDelta, secret: c.cfg.Key.Reveal()}
	var dec streamDecoder
	switch c.cfg.API {
	case APIAnthropic:
		dec = &anStream{sink: sink, blocks: map[int]*anStreamBlock{}}
	default:
		dec = &oaStream{sink: sink, callIdx: map[int]int{}}
	}
	for {
		ev, err := rd.next()
		if err != nil {
			if ctx.Err() != nil {
				return nil, -1, fmt.Errorf("model API %s: %w", c.endpoint, ctx.Err())
			}
			if rd.ioErr != nil {
				wait := time.Duration(-1)
				if rd.total == 0 {
					wait = c.backoff(rec.Attempt)
				}
				return nil, wait, &APIError{API: c.cfg.API, URL: c.endpoint, Status: rec.Status, RequestID: rec.RequestID,
					Message: fmt.Sprintf("stream broken after %d bytes: %s", rd.total, c.cfg.Key.redact(transportMessage(err)))}
			}
			if errors.Is(err, io.EOF) {
				err = fmt.Errorf("stream ended before its final event (%s)", dec.final())
			}
			return nil, -1, c.streamError(rec, rd.total, err)
		}
		if rec.FirstEventMS == 0 {
			rec.FirstEventMS = ms(c.o.Now().Sub(start))
		}
		done, err := dec.event(ev)
		if err != nil {
			return nil, -1, c.streamError(rec, rd.total, err)
		}
		if done {
			break
		}
	}
	resp, err := dec.response()
	if err != nil {
		return nil, -1, c.streamError(rec, rd.total, err)
	}
	sink.flush()
	if rec.RequestID == "" {
		rec.RequestID = resp.RequestID
	}
	resp.RequestID = rec.RequestID
	return resp, 0, nil
}

// streamError reports a bad stream on one line, redacted and cut to an
// excerpt (an error event's text comes from the server).
func (c *Client) streamError(rec *Call, at int64, err error) error {
	return &ProtocolError{URL: c.endpoint, RequestID: rec.RequestID, Err: fmt.Errorf("stream at byte %d: %s", at, c.excerpt([]byte(err.Error())))}
}

// deliverWhole passes a non-streamed answer to onDelta as whole deltas.
func (c *Client) deliverWhole(resp *Response, onDelta func(Delta)) {
	sink := &deltaSink{fn: onDelta, secret: c.cfg.Key.Reveal()}
	sink.text(DeltaReasoning, resp.Message.Reasoning)
	sink.text(DeltaText, resp.Message.Text())
	for i, tc := range resp.Message.ToolCalls {
		sink.toolCall(i, tc.ID, tc.Name)
	}
	sink.flush()
}

// deltaSink delivers deltas in order with the key redacted. Text is held
// back by len(key)-1 bytes so that a key split across pieces is still
// caught; the held text goes out before a delta of another kind and at
// the end.
type deltaSink struct {
	fn      func(Delta)
	secret  string
	kind    DeltaKind
	pending string
}

func (s *deltaSink) text(kind DeltaKind, t string) {
	if t == "" {
		return
	}
	if kind != s.kind {
		s.flush()
		s.kind = kind
	}
	if len(s.secret) < 4 {
		s.fn(Delta{Kind: kind, Text: t})
		return
	}
	s.pending = Redact(s.pending+t, s.secret)
	cut := len(s.pending) - (len(s.secret) - 1)
	for cut > 0 && !utf8.RuneStart(s.pending[cut]) {
		cut--
	}
	if cut <= 0 {
		return
	}
	out := s.pending[:cut]
	s.pending = s.pending[cut:]
	s.fn(Delta{Kind: kind, Text: out})
}

func (s *deltaSink) toolCall(i int, id, name string) {
	s.flush()
	s.fn(Delta{Kind: DeltaToolCall, Index: i, ID: Redact(id, s.secret), Name: Redact(name, s.secret)})
}

func (s *deltaSink) flush() {
	if s.pending != "" {
		s.fn(Delta{Kind: s.kind, Text: Redact(s.pending, s.secret)})
		s.pending = ""
	}
	s.kind = ""
}
