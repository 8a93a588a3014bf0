package native

import (
	"bytes"
	"fmt"
	"net/url"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// MaxWebLinks bounds the link list web_fetch returns.
const MaxWebLinks = 200

// htmlText reduces an HTML page to its visible text (block elements on
// their own lines, script/style/template content dropped) followed by a
// numbered list of its links, resolved against base.
func htmlText(page []byte, base string) string {
	bu, _ := url.Parse(base)
	z := html.NewTokenizer(bytes.NewReader(page))
	var text strings.Builder
	var links []string
	seen := map[string]bool{}
	skip := 0
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return finishText(text.String(), links)
		case html.TextToken:
			if skip == 0 {
				text.WriteString(strings.Join(strings.Fields(string(z.Text())), " "))
				text.WriteString(" ")
			}
		case html.StartTagToken, html.EndTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			a := atom.Lookup(name)
			if hidden[a] && tt != html.SelfClosingTagToken {
				if tt == html.StartTagToken {
					skip++
				} else if skip > 0 {
					skip--
				}
			}
			if blockTags[a] {
				text.WriteString("\n")
			}
			if a == atom.A && tt != html.EndTagToken && hasAttr {
				if l := linkOf(z, bu); l != "" && !seen[l] && len(links) < MaxWebLinks {
					seen[l] = true
					links = append(links, l)
				}
			}
		}
	}
}

func linkOf(z *html.Tokenizer, base *url.URL) string {
	for {
		k, v, more := z.TagAttr()
		if string(k) == "href" {
			ref, err := url.Parse(strings.TrimSpace(string(v)))
			if err != nil || base == nil {
				return ""
			}
			u := base.ResolveReference(ref)
			if u.Scheme != "http" && u.Scheme != "https" {
				return ""
			}
			u.Fragment, u.RawFragment = "", ""
			return u.String()
		}
		if !more {
			return ""
		}
	}
}

var hidden = map[atom.Atom]bool{atom.Script: true, atom.Style: true, atom.Template: true, atom.Noscript: true, atom.Svg: true}

var blockTags = map[atom.Atom]bool{
	atom.P: true, atom.Div: true, atom.Br: true, atom.Li: true, atom.Tr: true, atom.H1: true, atom.H2: true,
	atom.H3: true, atom.H4: true, atom.H5: true, atom.H6: true, atom.Pre: true, atom.Blockquote: true,
	atom.Section: true, atom.Article: true, atom.Header: true, atom.Footer: true, atom.Title: true,
	atom.Table: true, atom.Ul: true, atom.Ol: true, atom.Dt: true, atom.Dd: true, atom.Hr: true,
}

// finishText trims every line, drops blank runs and appends the links.
func finishText(raw string, links []string) string {
	var b strings.Builder
	for _, line := range strings.Split(raw, "\n") {
		if line = strings.Join(strings.Fields(line), " "); line != "" {
			b.WriteString(line)
			b.WriteString("\n")
		}
	}
	if len(links) > 0 {
		b.WriteString("\nLinks:\n")
		for i, l := range links {
			fmt.Fprintf(&b, "[%d] %s\n", i+1, l)
		}
	}
	return b.String()
}
