package model

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// Limits of a streamed (server-sent events) response.
const (
	// MaxStreamEvent bounds one SSE line and the data of one event.
	MaxStreamEvent = 4 << 20
)

// sseEvent is one dispatched server-sent event.
type sseEvent struct {
	name string // the "event:" field ("" when absent)
	data []byte // the "data:" lines joined by "\n"
}

// sseReader reads text/event-stream framing, strictly and within bounds:
// lines end in LF or CRLF (a bare CR is an error), a line or an event's
// data longer than maxEvent is an error, and so is a stream longer than
// maxTotal bytes. Comments (":...") and the id/retry fields are skipped,
// as are unknown fields; a blank line dispatches the event, if it has data.
type sseReader struct {
	br       *bufio.Reader
	maxEvent int
	maxTotal int64
	total    int64 // bytes consumed
	line     []byte
	ioErr    error // the transport error that ended the stream, if any
}

func newSSEReader(r io.Reader, maxEvent int, maxTotal int64) *sseReader {
	return &sseReader{br: bufio.NewReaderSize(r, 64<<10), maxEvent: maxEvent, maxTotal: maxTotal}
}

// next returns the next event; io.EOF at a clean end between events.
func (r *sseReader) next() (sseEvent, error) {
	var ev sseEvent
	hasData := false
	for {
		line, err := r.readLine()
		if err == io.EOF {
			if hasData || ev.name != "" {
				return sseEvent{}, errors.New("stream ended inside an event")
			}
			return sseEvent{}, io.EOF
		}
		if err != nil {
			return sseEvent{}, err
		}
		if len(line) == 0 {
			if hasData {
				return ev, nil
			}
			ev = sseEvent{}
			continue
		}
		if line[0] == ':' {
			continue
		}
		field, value, found := bytes.Cut(line, []byte(":"))
		if found && len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
		switch string(field) {
		case "event":
			ev.name = string(value)
		case "data":
			if hasData {
				ev.data = append(ev.data, '\n')
			}
			if len(ev.data)+len(value) > r.maxEvent {
				return sseEvent{}, fmt.Errorf("event data larger than %d bytes", r.maxEvent)
			}
			ev.data = append(ev.data, value...)
			hasData = true
		}
	}
}

// readLine returns one line without its terminator; io.EOF only when the
// stream ends at a line boundary.
func (r *sseReader) readLine() ([]byte, error) {
	r.line = r.line[:0]
	for {
		frag, err := r.br.ReadSlice('\n')
		r.total += int64(len(frag))
		if r.total > r.maxTotal {
			return nil, fmt.Errorf("stream larger than %d bytes", r.maxTotal)
		}
		if len(r.line)+len(frag) > r.maxEvent+2 {
			return nil, fmt.Errorf("line longer than %d bytes", r.maxEvent)
		}
		r.line = append(r.line, frag...)
		switch {
		case err == nil:
			line := r.line[:len(r.line)-1]
			line = bytes.TrimSuffix(line, []byte("\r"))
			if bytes.IndexByte(line, '\r') >= 0 {
				return nil, errors.New("bare CR in a line")
			}
			return line, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err == io.EOF && len(r.line) == 0:
			return nil, io.EOF
		case err == io.EOF:
			return nil, errors.New("stream ended inside a line")
		default:
			r.ioErr = err
			return nil, err
		}
	}
}
