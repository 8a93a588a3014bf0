package yamlx

import "testing"

func TestSuggest(t *testing.T) {
	t.Parallel()
	keys := []string{"agent", "skills", "policy", "allowed_remote_resources", "env", "runtime"}
	for _, c := range []struct{ word, want string }{
		{"agnet", "agent"},   // swap
		{"skils", "skills"},  // deletion
		{"skillz", "skills"}, // substitution
		{"allowed_remote_resource", "allowed_remote_resources"},
		{"runtmie", "runtime"},
		{"agent", ""}, // known: nothing to suggest
		{"ev", "env"}, // one edit
		{"xyz", ""},   // nothing close
		{"model_endpoint", ""},
		{"x", ""},
	} {
		if got := Suggest(c.word, keys); got != c.want {
			t.Errorf("Suggest(%q) = %q, want %q", c.word, got, c.want)
		}
	}
}
