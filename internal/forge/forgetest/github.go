package forgetest

import (
	"encoding/base64"
	"net/http"
	"strings"
)

func (s *Server) serveGitHubAPI(w http.ResponseWriter, r *http.Request, segs []string) {
	if len(segs) < 4 || segs[0] != "repos" {
		s.t.Errorf("forgetest: unexpected GitHub API request %s", r.URL)
		s.notFound(w)
		return
	}
	repo := segs[1] + "/" + segs[2]
	switch {
	case len(segs) == 6 && segs[3] == "git" && segs[4] == "trees":
		s.ghTree(w, r, repo, segs[5])
	case len(segs) == 6 && segs[3] == "git" && segs[4] == "blobs":
		s.ghBlob(w, r, segs[5])
	case len(segs) == 5 && segs[3] == "commits":
		s.ghCommit(w, repo, segs[4])
	case segs[3] == "contents":
		s.ghContents(w, r, repo, strings.Join(segs[4:], "/"))
	default:
		s.t.Errorf("forgetest: unexpected GitHub API request %s", r.URL)
		s.notFound(w)
	}
}

type ghTreeEntry struct {
	Path string `json:"path"`
	Mode string `json:"mode"`
	Type string `json:"type"`
	SHA  string `json:"sha"`
	Size *int64 `json:"size,omitempty"`
	URL  string `json:"url"`
}

func (s *Server) ghTree(w http.ResponseWriter, r *http.Request, repo, ref string) {
	sn := s.lookup(repo, ref)
	if sn == nil {
		s.notFound(w)
		return
	}
	recursive := r.URL.Query().Get("recursive") != ""
	entries := sn.sortedEntries("", recursive)
	truncated := s.truncated.Load() && recursive
	if truncated {
		entries = entries[:(len(entries)+1)/2]
	}
	out := make([]ghTreeEntry, 0, len(entries))
	base := "https://" + s.APIHost() + s.apiPrefix + "/repos/" + repo + "/git/"
	for _, e := range entries {
		te := ghTreeEntry{Path: e.path, Mode: e.mode, Type: e.typ, SHA: e.sha}
		switch e.typ {
		case "blob":
			size := e.size
			te.Size = &size
			te.URL = base + "blobs/" + e.sha
		case "tree":
			te.URL = base + "trees/" + e.sha
		}
		out = append(out, te)
	}
	writeJSON(w, map[string]any{"sha": sn.commit, "url": base + "trees/" + sn.commit, "tree": out, "truncated": truncated})
}

func (s *Server) ghBlob(w http.ResponseWriter, r *http.Request, sha string) {
	b, ok := s.content(sha)
	if !ok {
		s.notFound(w)
		return
	}
	if strings.Contains(r.Header.Get("Accept"), "vnd.github.raw") && !s.blobJSON.Load() {
		w.Header().Set("Content-Type", "application/vnd.github.raw")
		w.Write(b)
		return
	}
	writeJSON(w, map[string]any{"sha": sha, "size": len(b), "encoding": "base64", "content": wrap64(b), "url": "https://" + s.APIHost() + r.URL.Path})
}

// wrap64 encodes b in base64 with a newline every 60 characters, as GitHub
// does.
func wrap64(b []byte) string {
	enc := base64.StdEncoding.EncodeToString(b)
	var sb strings.Builder
	for len(enc) > 60 {
		sb.WriteString(enc[:60])
		sb.WriteByte('\n')
		enc = enc[60:]
	}
	sb.WriteString(enc)
	sb.WriteByte('\n')
	return sb.String()
}

type ghContent struct {
	Type        string  `json:"type"`
	Name        string  `json:"name"`
	Path        string  `json:"path"`
	SHA         string  `json:"sha"`
	Size        int64   `json:"size"`
	URL         string  `json:"url"`
	GitURL      *string `json:"git_url"`
	DownloadURL *string `json:"download_url"`
	Encoding    string  `json:"encoding,omitempty"`
	Content     string  `json:"content,omitempty"`
}

func (s *Server) ghContents(w http.ResponseWriter, r *http.Request, repo, path string) {
	ref := r.URL.Query().Get("ref")
	if ref == "" {
		ref = "main"
	}
	sn := s.lookup(repo, ref)
	if sn == nil {
		s.notFound(w)
		return
	}
	api := "https://" + s.APIHost() + s.apiPrefix + "/repos/" + repo
	item := func(e *entry) ghContent {
		name := e.path[strings.LastIndexByte(e.path, '/')+1:]
		c := ghContent{Name: name, Path: e.path, SHA: e.sha, Size: e.size, URL: api + "/contents/" + e.path + "?ref=" + ref}
		git := api + "/git/blobs/" + e.sha
		dl := "https://" + s.RawHost() + "/" + repo + "/" + ref + "/" + e.path
		switch {
		case e.typ == "tree":
			c.Type, git, dl = "dir", api+"/git/trees/"+e.sha, ""
		case e.typ == "commit":
			// GitHub lists submodules as "file" in directory listings.
			c.Type, git, dl = "file", api+"/git/trees/"+e.sha, ""
		case e.mode == "120000":
			c.Type = "symlink"
		default:
			c.Type = "file"
		}
		c.GitURL = &git
		if dl != "" {
			c.DownloadURL = &dl
		}
		return c
	}
	if path != "" {
		e := sn.entries[path]
		if e == nil {
			s.notFound(w)
			return
		}
		if e.typ != "tree" {
			b, _ := s.content(e.sha)
			if strings.Contains(r.Header.Get("Accept"), "vnd.github.raw") && e.typ == "blob" {
				w.Header().Set("Content-Type", "application/vnd.github.raw")
				w.Write(b)
				return
			}
			c := item(e)
			c.Encoding, c.Content = "base64", wrap64(b)
			writeJSON(w, c)
			return
		}
	}
	list := []ghContent{}
	for _, e := range sn.sortedEntries(path, false) {
		list = append(list, item(e))
	}
	writeJSON(w, list)
}
