package forgetest

import (
	"net/http"
	"strconv"
	"strings"
)

func (s *Server) serveGitLabAPI(w http.ResponseWriter, r *http.Request, segs []string) {
	// segs: projects, ID, repository, tree | files, PATH, raw
	if len(segs) < 4 || segs[0] != "projects" || segs[2] != "repository" {
		s.t.Errorf("forgetest: unexpected GitLab API request %s", r.URL)
		s.notFound(w)
		return
	}
	repo := segs[1]
	switch {
	case len(segs) == 4 && segs[3] == "tree":
		s.glTree(w, r, repo)
	case len(segs) == 5 && segs[3] == "commits":
		s.glCommit(w, repo, segs[4])
	case len(segs) == 6 && segs[3] == "files" && segs[5] == "raw":
		s.glRaw(w, r, repo, segs[4])
	default:
		s.t.Errorf("forgetest: unexpected GitLab API request %s", r.URL)
		s.notFound(w)
	}
}

type glEntry struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Type string `json:"type"`
	Path string `json:"path"`
	Mode string `json:"mode"`
}

func (s *Server) glTree(w http.ResponseWriter, r *http.Request, repo string) {
	q := r.URL.Query()
	sn := s.lookup(repo, q.Get("ref"))
	if sn == nil {
		s.notFound(w)
		return
	}
	path := strings.Trim(q.Get("path"), "/")
	if path != "" {
		if e := sn.entries[path]; e == nil || e.typ != "tree" {
			writeJSONStatus(w, http.StatusNotFound, `{"message":"404 Tree Not Found"}`)
			return
		}
	}
	entries := sn.sortedEntries(path, q.Get("recursive") == "true")
	per := intQuery(r, "per_page", 20)
	if per > 100 {
		per = 100
	}
	if ps := int(s.pageSize.Load()); ps > 0 && per > ps {
		per = ps
	}
	if per < 1 {
		per = 20
	}
	page := intQuery(r, "page", 1)
	pages := (len(entries) + per - 1) / per
	start := min((page-1)*per, len(entries))
	end := min(start+per, len(entries))
	out := []glEntry{}
	for _, e := range entries[start:end] {
		out = append(out, glEntry{ID: e.sha, Name: e.path[strings.LastIndexByte(e.path, '/')+1:], Type: e.typ, Path: e.path, Mode: e.mode})
	}
	h := w.Header()
	h.Set("X-Page", strconv.Itoa(page))
	h.Set("X-Per-Page", strconv.Itoa(per))
	h.Set("X-Total", strconv.Itoa(len(entries)))
	h.Set("X-Total-Pages", strconv.Itoa(pages))
	if page < pages {
		h.Set("X-Next-Page", strconv.Itoa(page+1))
	} else {
		h.Set("X-Next-Page", "")
	}
	writeJSON(w, out)
}

func (s *Server) glRaw(w http.ResponseWriter, r *http.Request, repo, path string) {
	sn := s.lookup(repo, r.URL.Query().Get("ref"))
	if sn == nil {
		s.notFound(w)
		return
	}
	e := sn.entries[path]
	if e == nil || e.typ != "blob" {
		writeJSONStatus(w, http.StatusNotFound, `{"message":"404 File Not Found"}`)
		return
	}
	b, _ := s.content(e.sha)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Write(b)
}
