package native

import (
	"context"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/netip"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/fullsend-ai/fullsend/internal/fetch"
	"github.com/fullsend-ai/fullsend/internal/hooks"
	"github.com/fullsend-ai/fullsend/internal/model"
	"github.com/fullsend-ai/fullsend/internal/runtime"
	"github.com/fullsend-ai/fullsend/internal/sandbox"
)

// ToolWebFetch fetches a public web page on the host (never in the sandbox).
const ToolWebFetch = "web_fetch"

// WebDir holds the raw responses of web_fetch: <n>.body and <n>.headers.
const WebDir = "web"

// WebScanCheck names web_fetch's content scan in the verdict of a page it
// withheld (EventVerdict.Name).
const WebScanCheck = "web-fetch-scan"

// WebScan scans fetched text as remote context before the model sees it.
// It returns the blocking findings' rules (empty: the text may be shown);
// an error fails the call closed.
type WebScan = runtime.WebScan

// WebConfig is what web_fetch needs from the runner (SetWeb). Without it a
// run asking for web_fetch fails at option parsing.
type WebConfig struct {
	// Allow is the run's egress allowlist (sandbox.Network.Allow entries):
	// web_fetch reaches nothing the sandbox could not.
	Allow []string
	// AllowedPrivateNetworks exempt internal addresses (the org's
	// security.remote_resources.allowed_private_networks).
	AllowedPrivateNetworks []netip.Prefix
	// Scan is the run's scan pipeline (required).
	Scan WebScan
	// Timeout and MaxSize bound one fetch (zero: fetch's web defaults).
	Timeout time.Duration
	MaxSize int64
	// Resolver and Client replace fetch's defaults (tests).
	Resolver fetch.Resolver
	Client   *fetch.Client
}

// webState is the configured web_fetch of a Runtime.
type webState struct {
	client  *fetch.WebClient
	scan    WebScan
	private []netip.Prefix // the client's AllowedPrivateNetworks, for the SSRF hook
}

// SetWeb configures web_fetch for the next Run. A bad allowlist entry is
// an error naming it.
func (r *Runtime) SetWeb(c WebConfig) error {
	if c.Scan == nil {
		return errors.New("web_fetch: no scan pipeline")
	}
	allow := make([]fetch.WebAllow, 0, len(c.Allow))
	for _, e := range c.Allow {
		a, err := sandbox.ParseAllow(e)
		if err != nil {
			return fmt.Errorf("web_fetch: %w", err)
		}
		allow = append(allow, a)
	}
	r.web = &webState{scan: c.Scan, private: c.AllowedPrivateNetworks, client: fetch.NewWeb(fetch.WebOptions{Allow: allow,
		AllowedPrivateNetworks: c.AllowedPrivateNetworks, Timeout: c.Timeout, MaxSize: c.MaxSize,
		Resolver: c.Resolver, Client: c.Client})}
	return nil
}

func webFetchTool() *tool {
	return &tool{run: runWebFetch, spec: model.ToolSpec{Name: ToolWebFetch,
		Description: "Fetch a public web page (http or https) on the host, within the run's network allowlist. Returns the page as text plus its links. Redirects are followed (at most 5); internal addresses, binary content and bodies over the size limit are refused.",
		Parameters:  schema(`"url":{"type":"string","description":"http:// or https:// URL"}`, "url")}}
}

func runWebFetch(ctx context.Context, l *loop, n int, args map[string]any) toolResult {
	u, err := argString(args, "url", true)
	if err != nil {
		return errorf("%v", err)
	}
	w := l.rt.web
	if w == nil {
		return errorf("web_fetch: not configured for this run")
	}
	resp, err := w.client.Get(ctx, u)
	if err != nil {
		return errorf("web_fetch: %v", err)
	}
	rel, err := l.rd.writeWeb(n, resp)
	if err != nil {
		return errorf("web_fetch %s: keeping the response in the run directory: %v", resp.URL, err)
	}
	mt := mediaType(resp.Header.Get("Content-Type"), resp.Body)
	var text string
	switch {
	case mt == "text/html" || mt == "application/xhtml+xml":
		text = htmlText(resp.Body, resp.URL)
	case isTextType(mt):
		text = strings.ToValidUTF8(string(resp.Body), "\uFFFD")
	default:
		return errorf("web_fetch %s: %s is not text (binary content is refused; the response is kept in %s)", resp.URL, mt, rel)
	}
	blocking, err := w.scan(ctx, []byte(text), "web_fetch "+resp.URL)
	if err != nil {
		out := errorf("web_fetch %s: content scan failed, page withheld: %v", resp.URL, err)
		out.stops = []stop{{hooks.Verdict{Block: true, Rule: "web-fetch-scan.error", Reason: "the content scan of " + resp.URL + " failed: " + err.Error()}, WebScanCheck}}
		return out
	}
	if len(blocking) > 0 {
		out := errorf("web_fetch %s: page withheld by fullsend content scan (%s); the response is kept in %s", resp.URL, strings.Join(blocking, ", "), rel)
		out.stops = []stop{{hooks.Verdict{Block: true, Rule: blocking[0], Reason: "the content scan withheld " + resp.URL + " (" + strings.Join(blocking, ", ") + ")"}, WebScanCheck}}
		return out
	}
	var b strings.Builder
	fmt.Fprintf(&b, "URL: %s\n", resp.URL)
	if len(resp.Hops) > 1 {
		fmt.Fprintf(&b, "Redirected from: %s\n", strings.Join(resp.Hops[:len(resp.Hops)-1], " -> "))
	}
	fmt.Fprintf(&b, "Content-Type: %s\n\n%s", mt, text)
	return toolResult{text: b.String()}
}

// mediaType is the response's declared media type, or the sniffed one.
func mediaType(header string, body []byte) string {
	if header != "" {
		if mt, _, err := mime.ParseMediaType(header); err == nil {
			return strings.ToLower(mt)
		}
	}
	mt, _, _ := mime.ParseMediaType(http.DetectContentType(body))
	return mt
}

func isTextType(mt string) bool {
	switch {
	case strings.HasPrefix(mt, "text/"), mt == "application/json", mt == "application/xml",
		strings.HasSuffix(mt, "+json"), strings.HasSuffix(mt, "+xml"), mt == "application/javascript":
		return true
	}
	return false
}

// writeWeb keeps the raw response of call n: web/<n>.body (bytes as
// received) and web/<n>.headers (hops, status and headers). Returns the
// body's relative path.
func (r *runDir) writeWeb(n int, resp *fetch.WebResponse) (string, error) {
	if err := r.d.MkdirAll(WebDir, 0o700); err != nil {
		return "", err
	}
	base := filepath.Join(WebDir, strconv.Itoa(n))
	var h strings.Builder
	for _, hop := range resp.Hops {
		fmt.Fprintf(&h, "GET %s\n", hop)
	}
	fmt.Fprintf(&h, "HTTP %d\n", resp.StatusCode)
	keys := make([]string, 0, len(resp.Header))
	for k := range resp.Header {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		for _, v := range resp.Header[k] {
			fmt.Fprintf(&h, "%s: %s\n", k, v)
		}
	}
	if err := r.d.WriteAtomic(base+".headers", []byte(r.redact(h.String())), 0o600); err != nil {
		return "", err
	}
	rel := filepath.ToSlash(base + ".body")
	return rel, r.d.WriteAtomic(rel, []byte(r.redact(string(resp.Body))), 0o600)
}
