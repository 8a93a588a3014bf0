package scan

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"sort"
)

// Streaming: a large content is scanned in chunks, so that memory stays
// flat, with exactly the findings of scanning it whole (rule, line, column,
// message, excerpt, severity, hash, the per-rule cap and its "N more"
// summaries).
//
// Chunks do not overlap: a chunk ends at a quiet line start B, one that no
// scanner's reading crosses, so that every scanner reads the same bytes
// around every finding as on the whole content. B is quiet when
//   - the line before B is blank and line B is neither blank nor a list item
//     (the mention rule looks up to the previous paragraph line and to a
//     list's lead-in line; both stop at line B, or find the blank line);
//   - no byte that is non-ASCII or a control lies in the two lines before B
//     or in the two from B on (the unicode scanner reads a run's
//     neighbouring runes; the injection scanner normalises a suspicious line
//     with one line either side, chained from window to window: with no
//     suspicious line near B, the chain on either side is the same);
//   - no fenced code block and no HTML comment is open at B (their state
//     comes from the start of the content; a chunk starts in the state
//     "outside both", so an open one at every candidate grows the chunk);
//   - no secrets keyword of a rule reaching over lines (curl, PEM keys,
//     Kubernetes secrets, JWTs) lies so close before B that the rule's
//     window may reach it (at most 2 KiB, resp. 64 KiB for private keys);
//     other rules read the keyword's line only;
//   - the injection patterns anchored within injSpan bytes before B match
//     the same text when the content ends at B as when it goes on (tried
//     on the bytes that follow, which the chunk reader holds);
//   - the rest of the content is at least one chunk long (so every chunk's
//     work budget is its share of the whole content's).
//
// Everything else the scanners read (URLs, base64 blobs, words, runs of
// invisible runes, quotations, keyword lines) lies within one line. When no
// quiet line start shows up, the chunk grows until one does (at worst to
// the end of the content): such content is scanned whole, never partly.
// When a chunk's scanner fails (a work budget exceeded), or a secrets rule
// goes over its cap of findings (whose order of discovery is not the order
// of position), the whole content is scanned again in one piece, so the
// result is that of Scan. Streaming is used only by the package's own
// scanners without the ML layer (which judges a content as a whole) and
// without secrets rules that run on every byte (none today); otherwise the
// content is read whole.
//
// Work budgets: a chunk gets the budget of a content of its size, which
// for chunks of streamChunk bytes or more is proportional to the size
// (TestStreamChunkBudgets), and the scanners do the same work on the chunks
// as on the whole content, so content over its whole-content budget is over
// some chunk's, and is then rescanned whole. One known difference: the
// injection patterns anchored within injSpan bytes before a cut are charged
// the bytes up to the cut only, so content within that margin (a few KiB
// per chunk) of its injection budget may be scanned in chunks where one
// scan reports the budget exceeded; it is then fully scanned, never
// skipped.

// streamChunk is the size of a chunk; content up to twice as long is read
// whole. At 1 MiB a chunk's work budgets are proportional to its size
// (TestStreamChunkBudgets), and the reader's buffer (two chunks and the
// look ahead, allocated once) is small beside the rule set.
const streamChunk = 1 << 20

// streamLook is the first read ahead of a chunk's nominal end in which a
// quiet line start is sought; it doubles while none is found.
const streamLook = 16 << 10

// ScanReaderAt scans the size bytes of r as one content, with the result
// Scan would give for them. Content longer than two chunks is read chunk by
// chunk (see stream.go) so that memory does not grow with its size. r must
// not change during the scan.
func (p *Pipeline) ScanReaderAt(ctx context.Context, r io.ReaderAt, size int64, m Meta) (*Result, error) {
	return p.scanStream(ctx, r, size, m, streamChunk, nil)
}

// canStream reports whether the pipeline's scanners are those whose reach
// stream.go knows.
func (p *Pipeline) canStream() bool {
	sec, ok := p.secrets.(secretsScanner)
	_, injOK := p.injection.(injectionScanner)
	_, uniOK := p.unicode.(unicodeScanner)
	_, ssrfOK := p.ssrf.(ssrfScanner)
	return ok && injOK && uniOK && ssrfOK && p.ml == nil && len(sec.e.always) == 0
}

// scanStream is ScanReaderAt with a chunk size; onChunk, when not nil, is
// told the length of every chunk scanned (tests).
func (p *Pipeline) scanStream(ctx context.Context, r io.ReaderAt, size int64, m Meta, chunk int, onChunk func(n int)) (*Result, error) {
	if size < 0 || size > maxIndexed {
		return nil, fmt.Errorf("scan %s: size %d out of range", m.Path, size)
	}
	if size <= 2*int64(chunk) || !p.canStream() {
		return p.scanWhole(ctx, r, size, m)
	}
	// room for the largest chunk (the last, under two chunks) and the
	// first look ahead
	cr := &chunkReader{r: r, size: size, buf: make([]byte, 0, 2*chunk+streamLook)}
	scanners := p.scanners(m)
	reach := secretsKWReach(p.secrets.(secretsScanner).e)
	sum := sha256.New()
	var merge capMerge
	lineBase := 0
	for cr.pos < cr.size {
		content, ix, err := cr.next(p, chunk, reach)
		if err != nil {
			return nil, fmt.Errorf("scan %s: %w", m.Path, err)
		}
		fs, failed, err := p.runScanners(ctx, content, m, ix, scanners)
		if err != nil {
			return nil, err
		}
		if failed {
			return p.scanWhole(ctx, r, size, m)
		}
		for i := range fs {
			if fs[i].Line > 0 {
				fs[i].Line += lineBase
			}
		}
		if !merge.add(fs) {
			return p.scanWhole(ctx, r, size, m)
		}
		if onChunk != nil {
			onChunk(len(content))
		}
		sum.Write(content)
		lineBase += bytes.Count(content, []byte{'\n'})
		cr.advance(len(content))
	}
	fs := merge.result()
	hexsum := ""
	if len(fs) > 0 {
		hexsum = hex.EncodeToString(sum.Sum(nil))
	}
	return p.finish(fs, hexsum, m)
}

// scanWhole reads the content into memory and scans it with Scan.
func (p *Pipeline) scanWhole(ctx context.Context, r io.ReaderAt, size int64, m Meta) (*Result, error) {
	content := make([]byte, size)
	if _, err := readFull(r, content, 0); err != nil {
		return nil, fmt.Errorf("scan %s: %w", m.Path, err)
	}
	return p.Scan(ctx, content, m)
}

// readFull fills b from r at off; a short content is an error.
func readFull(r io.ReaderAt, b []byte, off int64) (int, error) {
	n, err := r.ReadAt(b, off)
	if n == len(b) {
		return n, nil
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}

// chunkReader holds the bytes from the start of the next chunk on.
type chunkReader struct {
	r    io.ReaderAt
	size int64
	pos  int64  // content offset of buf[0]
	buf  []byte // content[pos : pos+len(buf)]
	// the arrays of the last index, reused for the next: streaming
	// allocates next to nothing per chunk, so the heap does not grow
	// with the content before the collector runs.
	sec, inj []kwHit
	specials []int32
}

// index is Pipeline.index of buf (the secrets keywords and injection
// anchors in one pass, as secretsEngine.kwIndex finds them, and the
// special bytes), in the reader's arrays.
func (c *chunkReader) index(p *Pipeline) *scanIndex {
	e := p.secrets.(secretsScanner).e
	n := len(e.kw.kws)
	sec, inj := c.sec[:0], c.inj[:0]
	e.all.find(c.buf, func(off, k int) {
		if k < n {
			sec = append(sec, kwHit{int32(off), int32(k)})
		} else {
			inj = append(inj, kwHit{int32(off), int32(k - n)})
		}
	})
	sp := indexSpecials(c.buf, c.specials)
	c.sec, c.inj = sec, inj
	if sp.offs != nil {
		c.specials = sp.offs
	}
	return &scanIndex{sec: sec, inj: inj, sp: sp}
}

// fill makes buf hold n bytes, or the rest of the content.
func (c *chunkReader) fill(n int) error {
	n = int(min(int64(n), c.size-c.pos))
	if n <= len(c.buf) {
		return nil
	}
	if n > cap(c.buf) {
		nb := make([]byte, len(c.buf), n)
		copy(nb, c.buf)
		c.buf = nb
	}
	have := len(c.buf)
	c.buf = c.buf[:n]
	if _, err := readFull(c.r, c.buf[have:], c.pos+int64(have)); err != nil {
		c.buf = c.buf[:have]
		return err
	}
	return nil
}

// advance drops the first n bytes of buf (the chunk just scanned).
func (c *chunkReader) advance(n int) {
	k := copy(c.buf, c.buf[n:])
	c.buf = c.buf[:k]
	c.pos += int64(n)
}

// next returns the next chunk and its index: up to the first quiet line
// start at or after chunk bytes that leaves at least chunk bytes for the
// rest, else (none found before the end) the rest of the content.
func (c *chunkReader) next(p *Pipeline, chunk int, reach []int) ([]byte, *scanIndex, error) {
	rest := c.size - c.pos
	if rest < 2*int64(chunk) {
		if err := c.fill(int(rest)); err != nil {
			return nil, nil, err
		}
		return c.buf, c.index(p), nil
	}
	last := int(rest) - chunk // the latest cut that leaves a whole chunk
	from := chunk
	for look := streamLook; ; look *= 2 {
		if err := c.fill(chunk + look); err != nil {
			return nil, nil, err
		}
		ix := c.index(p)
		eof := c.pos+int64(len(c.buf)) == c.size
		cut, resume := quietCut(c.buf, ix, reach, from, last, eof)
		switch {
		case cut > 0:
			return c.buf[:cut], ix.prefix(cut), nil
		case eof:
			return c.buf, ix, nil
		case resume < 0: // no quiet line up to the last cut: one chunk
			if err := c.fill(int(rest)); err != nil {
				return nil, nil, err
			}
			return c.buf, c.index(p), nil
		}
		// The lines from resume on need more of the content to be judged;
		// those before are not quiet whatever follows.
		from = resume
	}
}

// prefix is the index of content[:n], n a line start.
func (ix *scanIndex) prefix(n int) *scanIndex {
	cut := func(h []kwHit) []kwHit {
		return h[:sort.Search(len(h), func(i int) bool { return int(h[i].off) >= n })]
	}
	sp := *ix.sp
	sp.b, sp.k = sp.b[:n], 0
	if sp.offs != nil {
		sp.offs = sp.offs[:sort.Search(len(sp.offs), func(i int) bool { return int(sp.offs[i]) >= n })]
	}
	return &scanIndex{sec: cut(ix.sec), inj: cut(ix.inj), sp: &sp}
}

// secretsKWReach returns, per keyword of e, how many bytes from the
// keyword's start the window of one of its rules may reach when it goes
// beyond the keyword's line; 0 when every rule of the keyword reads that
// line only.
func secretsKWReach(e *secretsEngine) []int {
	out := make([]int, len(e.kwRules))
	for k, rules := range e.kwRules {
		for _, ri := range rules {
			switch {
			case e.wide[ri] == wideLines:
				out[k] = max(out[k], len(e.kw.kws[k])+wideReach)
			case e.wide[ri] != 0 || e.hasReach(ri):
				out[k] = max(out[k], len(e.kw.kws[k])+curlReach)
			}
		}
	}
	return out
}

// capMerge joins the findings of consecutive chunks under the per-rule cap,
// as one scan of the whole content reports them: the first maxPerRule of a
// rule, then one summary counting the rest.
type capMerge struct {
	out   []Finding
	n     map[string]int
	first map[string]Finding
}

// add takes the findings of the next chunk (line numbers already those of
// the whole content). It reports false when the merge cannot be exact: a
// secrets rule over its cap, whose findings the scanner takes in an order
// other than their position.
func (c *capMerge) add(fs []Finding) bool {
	if c.n == nil {
		c.n, c.first = map[string]int{}, map[string]Finding{}
	}
	for _, f := range fs {
		if _, ok := summaryCount(f); ok {
			continue
		}
		c.n[f.Rule]++
		if _, ok := c.first[f.Rule]; !ok {
			c.first[f.Rule] = f
		}
		if c.n[f.Rule] <= maxPerRule {
			c.out = append(c.out, f)
		}
	}
	for _, f := range fs {
		if k, ok := summaryCount(f); ok {
			c.n[f.Rule] += k
		}
	}
	for rule, n := range c.n {
		if n > maxPerRule && c.first[rule].Scanner == "secrets" {
			return false
		}
	}
	return true
}

// result returns the merged findings with a summary per rule over the cap.
func (c *capMerge) result() []Finding {
	out := c.out
	for _, rule := range slices.Sorted(maps.Keys(c.n)) {
		if n := c.n[rule]; n > maxPerRule {
			out = append(out, summaryFinding(c.first[rule], n-maxPerRule))
		}
	}
	return out
}

// quietCut returns the first quiet line start (see above) in [from, to] of
// b, a content read from a quiet line start (or its start) on. Without one
// it returns -1 and where to resume once b holds more of the content (-1:
// nowhere, every line start up to to is not quiet). eof says b ends where
// the content does.
func quietCut(b []byte, ix *scanIndex, reach []int, from, to int, eof bool) (cut, resume int) {
	q := quietState{b: b, ix: ix, sp: ix.sp.cursor(), eof: eof}
	q.fences = fencedRanges(b)
	q.comments = commentRanges(b)
	q.commentEnd = make([]int, len(q.comments))
	for i, c := range q.comments {
		q.commentEnd[i] = c[1] + len("-->")
		if i > 0 {
			q.commentEnd[i] = max(q.commentEnd[i], q.commentEnd[i-1])
		}
	}
	q.reach = reach
	if to > len(b)-1 {
		to, resume = len(b)-1, len(b)
	} else {
		resume = -1
	}
	for B := from; B <= to; B++ {
		i := bytes.IndexByte(b[B-1:to], '\n')
		if i < 0 {
			break
		}
		B += i // b[B-1] == '\n'
		switch q.quiet(B) {
		case isQuiet:
			return B, 0
		case needMore:
			return -1, B
		}
	}
	return -1, resume
}

// The verdicts on a line start.
const (
	notQuiet = iota
	isQuiet
	needMore // the bytes after it are not all read yet
)

type quietState struct {
	b          []byte
	ix         *scanIndex
	sp         *specialIndex
	eof        bool
	fences     [][2]int
	comments   [][2]int
	commentEnd []int // max end (with "-->") of comments[:i+1]
	// the multi-line secrets rules: reach per keyword; the furthest any
	// keyword before the line starts judged so far (in order) reaches,
	// and the next keyword to account for.
	reach   []int
	wideEnd int
	nextHit int
}

// quiet judges the line start B of q.b; calls come in increasing B.
func (q *quietState) quiet(B int) int {
	b := q.b
	for ; q.nextHit < len(q.ix.sec) && int(q.ix.sec[q.nextHit].off) < B; q.nextHit++ {
		h := q.ix.sec[q.nextHit]
		if r := q.reach[h.kw]; r > 0 {
			q.wideEnd = max(q.wideEnd, int(h.off)+r)
		}
	}
	ps := bytes.LastIndexByte(b[:B-1], '\n') + 1 // the line before B
	if len(bytes.TrimSpace(b[ps:B-1])) != 0 {
		return notQuiet
	}
	le, le2 := chunkLineEnd(b, B, q.eof), -1
	if le >= 0 && le < len(b) {
		le2 = chunkLineEnd(b, le+1, q.eof)
	}
	if le2 < 0 || B+injSpan > len(b) && !q.eof {
		return needMore
	}
	if len(bytes.TrimSpace(b[B:le])) == 0 || listItem(b, B) >= 0 {
		return notQuiet
	}
	pps := 0 // the line two before B
	if ps > 0 {
		pps = bytes.LastIndexByte(b[:ps-1], '\n') + 1
	}
	if n := q.sp.next(pps); n >= 0 && n <= le2 {
		return notQuiet
	}
	if i := sort.Search(len(q.fences), func(i int) bool { return q.fences[i][1] >= B }); i < len(q.fences) && q.fences[i][0] < B {
		return notQuiet
	}
	if i := sort.Search(len(q.comments), func(i int) bool { return q.comments[i][0] > B }); i > 0 && q.commentEnd[i-1] >= B {
		return notQuiet
	}
	if q.wideEnd >= B || !q.sameInjection(B) {
		return notQuiet
	}
	return isQuiet
}

// chunkLineEnd returns the offset of the newline ending the line at ls,
// len(b) for the last line of the content, or -1 when b does not hold it
// all.
func chunkLineEnd(b []byte, ls int, eof bool) int {
	if i := bytes.IndexByte(b[ls:], '\n'); i >= 0 {
		return ls + i
	}
	if eof {
		return len(b)
	}
	return -1
}

// sameInjection reports whether the injection patterns anchored within
// injSpan bytes before B find the same matches in b[:B] as in b.
func (q *quietState) sameInjection(B int) bool {
	inj := q.ix.inj
	lo := sort.Search(len(inj), func(i int) bool { return int(inj[i].off) >= B-injSpan })
	hi := sort.Search(len(inj), func(i int) bool { return int(inj[i].off) >= B })
	if lo == hi {
		return true
	}
	b1, b2 := math.MaxInt, math.MaxInt // a few anchors: no budget needed
	cut := matchHits(q.b[:B], inj[lo:hi], nil, 0, q.b[:B], &b1)
	all := matchHits(q.b, inj[lo:hi], nil, 0, q.b, &b2)
	if len(cut) != len(all) {
		return false
	}
	for i := range cut {
		if cut[i] != all[i] {
			return false
		}
	}
	return true
}
