package k8stest

import (
	"encoding/json"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
)

// TestListFiltersByNamespaceAndSelector: a list answers only the objects
// of its namespace whose labels match labelSelector, and a bad selector is
// a 400.
func TestListFiltersByNamespaceAndSelector(t *testing.T) {
	s := New(nil)
	defer s.Close()
	base := s.URL + "/apis/networking.k8s.io/v1/namespaces/"
	for _, np := range []struct{ ns, name, run string }{{"a", "p1", "r1"}, {"a", "p2", "r2"}, {"b", "p3", "r1"}} {
		body := `{"metadata":{"name":"` + np.name + `","labels":{"run":"` + np.run + `"}}}`
		resp, err := http.Post(base+np.ns+"/networkpolicies", "application/json", strings.NewReader(body))
		if err != nil || resp.StatusCode != http.StatusCreated {
			t.Fatalf("create %s/%s: %v %v", np.ns, np.name, resp, err)
		}
		resp.Body.Close()
	}
	list := func(ns, sel string) ([]string, int) {
		resp, err := http.Get(base + ns + "/networkpolicies?labelSelector=" + url.QueryEscape(sel))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var l networkingv1.NetworkPolicyList
		json.NewDecoder(resp.Body).Decode(&l)
		var names []string
		for _, p := range l.Items {
			names = append(names, p.Name)
		}
		sort.Strings(names)
		return names, resp.StatusCode
	}
	for _, c := range []struct{ ns, sel, want string }{
		{"a", "run=r1", "p1"},
		{"a", "", "p1 p2"},
		{"b", "run=r1", "p3"},
		{"b", "run=r2", ""},
	} {
		if got, code := list(c.ns, c.sel); code != http.StatusOK || strings.Join(got, " ") != c.want {
			t.Errorf("list %s %q = %d %v, want %q", c.ns, c.sel, code, got, c.want)
		}
	}
	if _, code := list("a", "run in ("); code != http.StatusBadRequest {
		t.Errorf("bad selector answered %d, want 400", code)
	}
}
