package resolve

import (
	"context"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v4"

	"github.com/fullsend-ai/fullsend/internal/cas"
	"github.com/fullsend-ai/fullsend/internal/corpustest"
	"github.com/fullsend-ai/fullsend/internal/forge/forgetest"
	"github.com/fullsend-ai/fullsend/internal/ref"
	"github.com/fullsend-ai/fullsend/internal/scan"
)

// publishHarness turns a library harness into the copy a publisher would
// serve from a forge: placed at the repository root (so "agents/code.md"
// resolves, RFC 3986, to …/blob/REF/agents/code.md next to it), every
// reference pinned with the sha256 (or tree hash) of the library file, a
// base: replaced by base(ref) (the published copy of that harness, pinned),
// allowed_remote_resources set to the repository, and the executable
// fields (pre/post scripts, validation script, host files other than
// ${VAR} ones) dropped: a harness fetched by URL has no local fullsend dir,
// and executables must be local.
func publishHarness(t *testing.T, corpus string, data []byte, prefix string, base func(ref string) string) []byte {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	pinOf := func(v string) string {
		p := filepath.Join(corpus, filepath.FromSlash(v))
		d, _, _, err := hashLocal(p)
		if err != nil {
			t.Fatalf("%s: %v", v, err)
		}
		return v + "#sha256=" + string(d)
	}
	var fix func(m *yaml.Node)
	fix = func(m *yaml.Node) {
		var out []*yaml.Node
		for i := 0; i+1 < len(m.Content); i += 2 {
			k, v := m.Content[i], m.Content[i+1]
			switch k.Value {
			case "pre_script", "post_script":
				continue
			case "base":
				v.Value = base(v.Value)
			case "agent", "doc", "policy":
				v.Value = pinOf(v.Value)
			case "skills", "plugins", "providers", "profiles":
				for _, c := range v.Content {
					c.Value = pinOf(c.Value)
				}
			case "openshell":
				fix(v)
			case "validation_loop":
				var keep []*yaml.Node
				for j := 0; j+1 < len(v.Content); j += 2 {
					switch v.Content[j].Value {
					case "script":
						continue
					case "schema":
						v.Content[j+1].Value = pinOf(v.Content[j+1].Value)
					}
					keep = append(keep, v.Content[j], v.Content[j+1])
				}
				v.Content = keep
			case "host_files", "env":
				// Host files and env expansion name the host's environment;
				// remote content may not (harness.ErrRemoteExpansion): a
				// local harness using the remote one as base declares them.
				continue
			case "forge":
				for j := 1; j < len(v.Content); j += 2 {
					fix(v.Content[j])
				}
			}
			out = append(out, k, v)
		}
		m.Content = out
	}
	root := doc.Content[0]
	fix(root)
	root.Content = append(root.Content,
		&yaml.Node{Kind: yaml.ScalarNode, Value: "allowed_remote_resources"},
		&yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{{Kind: yaml.ScalarNode, Value: prefix}}})
	b, err := yaml.Marshal(&doc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// chainLen is the number of bases above the published harness name.
func chainLen(t *testing.T, files map[string][]byte, name string) int {
	var h struct {
		Base string `yaml:"base"`
	}
	if err := yaml.Unmarshal(files[name], &h); err != nil {
		t.Fatal(err)
	}
	if h.Base == "" {
		return 0
	}
	return 1 + chainLen(t, files, strings.SplitN(h.Base, "#", 2)[0])
}

// TestLibrariesRemote serves each library from the fake forge and
// resolves every harness by URL (bases too), with every forge overlay,
// against an empty cache and then fully cached with a forge that fails
// every request.
func TestLibrariesRemote(t *testing.T) {
	corpustest.Each(t, testLibraryRemote)
}

func testLibraryRemote(t *testing.T, lib corpustest.Library) {
	corpus := lib.Dir
	files, err := readTree(corpus)
	if err != nil {
		t.Fatal(err)
	}
	srv := forgetest.NewGitHub(t, nil)
	prefix := "https://" + srv.WebHost() + "/fullsend-ai/agents/"
	harnesses, _ := filepath.Glob(filepath.Join(corpus, "harness", "*.yaml"))
	if len(harnesses) < lib.MinHarnesses {
		t.Fatalf("%d harnesses", len(harnesses))
	}
	// Bases are published first: a child pins its base's published copy.
	published := map[string][]byte{}
	var publish func(rel string) []byte
	publish = func(rel string) []byte {
		if b, ok := published[rel]; ok {
			return b
		}
		src, ok := files[rel]
		if !ok {
			t.Fatalf("base %s is not in the library", rel)
		}
		b := publishHarness(t, corpus, src, prefix, func(base string) string {
			return path.Base(base) + "#sha256=" + string(ref.SHA256(publish(base)))
		})
		published[rel] = b
		return b
	}
	for _, h := range harnesses {
		files[filepath.Base(h)] = publish("harness/" + filepath.Base(h))
	}
	key := "fullsend-ai/agents@main"
	srv.AddRepo(key, files)

	cfg := srv.OrgConfig(prefix)
	cfg.Security.RemoteResources.TrustedHarnessPrefixes = []string{prefix}
	store, err := cas.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	// The real scan pipeline (remote policy) runs over every fetched file.
	pipe, err := scan.New(scan.Options{Local: scan.Policy{ContextInjection: true}, Remote: scan.Policy{ContextInjection: true}})
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Config: cfg, Store: store, Scanner: pipe, Network: func() (*Network, error) {
		return NewNetwork(cfg, srv.Getenv(""), srv.Reach), nil
	}}
	for _, h := range harnesses {
		name := filepath.Base(h)
		u := srv.BlobURL(key, name) + "#sha256=" + string(ref.SHA256(files[name]))
		for _, fg := range []string{"", "github", "gitlab", "jira"} {
			oo := o
			oo.Forge = fg
			res, err := Resolve(context.Background(), u, oo)
			if err != nil {
				if fg == "jira" && strings.Contains(err.Error(), `no forge overlay "jira"`) {
					continue
				}
				t.Fatalf("%s --forge %q: %v", name, fg, err)
			}
			if len(res.Graph.Nodes) == 0 || !strings.HasPrefix(res.Harness.Agent, store.Dir()) {
				t.Fatalf("%s: %d nodes, agent %q", name, len(res.Graph.Nodes), res.Harness.Agent)
			}
			bases := 0
			for _, n := range res.Graph.Nodes {
				if !n.Remote || !strings.HasPrefix(n.URL, prefix) {
					t.Errorf("%s: %s is not remote: %+v", name, n.Field, n)
				}
				if n.Field == "base" {
					bases++
				}
			}
			// A published base: chain is fetched, one node per base.
			if want := chainLen(t, files, name); bases != want {
				t.Errorf("%s: %d base nodes, its chain has %d bases", name, bases, want)
			}
		}
	}
	// Everything is cached now: a forge failing every request is not asked.
	srv.ResetRequests()
	srv.Fail(forgetest.Fault{Status: 503})
	for _, h := range harnesses {
		name := filepath.Base(h)
		u := srv.BlobURL(key, name) + "#sha256=" + string(ref.SHA256(files[name]))
		if _, err := Resolve(context.Background(), u, o); err != nil {
			t.Fatalf("%s warm: %v", name, err)
		}
	}
	if n := srv.RequestCount(); n != 0 {
		t.Fatalf("warm corpus resolution made %d requests", n)
	}
}
