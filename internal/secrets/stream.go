package secrets

import (
	"bytes"
	"io"
)

// stream copies src, replacing each occurrence of a needle by what repl
// returns for it, or stopping with repl's error. It holds back only the
// longest tail of what it read that could begin a needle, so a streamed
// body (server-sent events) flows without delay.
type stream struct {
	src  io.ReadCloser
	find [][]byte
	repl func(i int) ([]byte, error)
	buf  []byte // read, not yet released (a possible needle start)
	out  []byte // released, not yet returned
	err  error
	tmp  []byte
}

func (s *stream) Read(p []byte) (int, error) {
	for len(s.out) == 0 {
		if s.err != nil {
			return 0, s.err
		}
		if s.tmp == nil {
			s.tmp = make([]byte, 32<<10)
		}
		n, err := s.src.Read(s.tmp)
		s.buf = append(s.buf, s.tmp[:n]...)
		if perr := s.process(err != nil); perr != nil {
			s.out, s.buf, s.err = nil, nil, perr
			return 0, perr
		}
		if err != nil {
			s.err = err
		}
	}
	n := copy(p, s.out)
	s.out = s.out[n:]
	return n, nil
}

func (s *stream) Close() error { return s.src.Close() }

// process releases s.buf into s.out, replacing needles; at the end of the
// input (final) it releases everything.
func (s *stream) process(final bool) error {
	for {
		at, which := -1, -1
		for i, n := range s.find {
			if j := bytes.Index(s.buf, n); j >= 0 && (at < 0 || j < at) {
				at, which = j, i
			}
		}
		if at < 0 {
			break
		}
		r, err := s.repl(which)
		if err != nil {
			return err
		}
		s.out = append(s.out, s.buf[:at]...)
		s.out = append(s.out, r...)
		s.buf = s.buf[at+len(s.find[which]):]
	}
	keep := 0
	if !final {
		keep = s.partial()
	}
	s.out = append(s.out, s.buf[:len(s.buf)-keep]...)
	s.buf = append([]byte(nil), s.buf[len(s.buf)-keep:]...)
	return nil
}

// partial is the length of the longest tail of s.buf that is a proper
// prefix of a needle.
func (s *stream) partial() int {
	best := 0
	for _, n := range s.find {
		for k := min(len(n)-1, len(s.buf)); k > best; k-- {
			if bytes.HasSuffix(s.buf, n[:k]) {
				best = k
				break
			}
		}
	}
	return best
}
