package forgetest

import "net/http"

// ghCommit answers GET /repos/O/R/commits/REF with the commit REF names
// now (only the "sha" field of GitHub's answer).
func (s *Server) ghCommit(w http.ResponseWriter, repo, ref string) {
	sn := s.lookup(repo, ref)
	if sn == nil {
		s.notFound(w)
		return
	}
	writeJSON(w, map[string]string{"sha": sn.commit})
}

// glCommit answers GET /projects/ID/repository/commits/REF (only the "id"
// field of GitLab's answer).
func (s *Server) glCommit(w http.ResponseWriter, repo, ref string) {
	sn := s.lookup(repo, ref)
	if sn == nil {
		s.notFound(w)
		return
	}
	writeJSON(w, map[string]string{"id": sn.commit})
}
