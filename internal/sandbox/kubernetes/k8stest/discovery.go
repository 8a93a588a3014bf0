package k8stest

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"sync"

	openapi_v2 "github.com/google/gnostic-models/openapiv2"
	"google.golang.org/protobuf/proto"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// What kubectl asks before it applies anything, even with
// --dry-run=client: the API groups and resources (the legacy discovery
// documents; a client that asks for aggregated discovery accepts them
// too) and, to validate objects on its side, the OpenAPI v2 document as
// protobuf. /openapi/v3 is not served, so kubectl does not count on the
// server to check fields (there is none behind --dry-run=client) and
// validates against the v2 document itself.

func (s *Server) discovery(w http.ResponseWriter, r *http.Request) bool {
	if r.Method != http.MethodGet {
		return false
	}
	verbs := metav1.Verbs{"create", "delete", "get", "list"}
	switch strings.TrimSuffix(r.URL.Path, "/") {
	case "/version":
		writeJSON(w, http.StatusOK, map[string]string{"major": "1", "minor": "32", "gitVersion": "v1.32.0-fullsend-k8stest", "platform": "linux/amd64"})
	case "/api":
		writeJSON(w, http.StatusOK, &metav1.APIVersions{TypeMeta: metav1.TypeMeta{Kind: "APIVersions"}, Versions: []string{"v1"},
			ServerAddressByClientCIDRs: []metav1.ServerAddressByClientCIDR{{ClientCIDR: "0.0.0.0/0", ServerAddress: r.Host}}})
	case "/apis":
		gv := metav1.GroupVersionForDiscovery{GroupVersion: "networking.k8s.io/v1", Version: "v1"}
		writeJSON(w, http.StatusOK, &metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"},
			Groups: []metav1.APIGroup{{Name: "networking.k8s.io", Versions: []metav1.GroupVersionForDiscovery{gv}, PreferredVersion: gv}}})
	case "/api/v1":
		writeJSON(w, http.StatusOK, &metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"}, GroupVersion: "v1",
			APIResources: []metav1.APIResource{
				{Name: "pods", SingularName: "pod", Namespaced: true, Kind: "Pod", Verbs: verbs, ShortNames: []string{"po"}},
				{Name: "pods/exec", SingularName: "", Namespaced: true, Kind: "PodExecOptions", Verbs: metav1.Verbs{"create", "get"}},
			}})
	case "/apis/networking.k8s.io/v1":
		writeJSON(w, http.StatusOK, &metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"}, GroupVersion: "networking.k8s.io/v1",
			APIResources: []metav1.APIResource{{Name: "networkpolicies", SingularName: "networkpolicy", Namespaced: true, Kind: "NetworkPolicy", Verbs: verbs, ShortNames: []string{"netpol"}}}})
	case "/openapi/v2":
		b, err := openAPIv2()
		if err != nil {
			status(w, http.StatusInternalServerError, metav1.StatusReasonInternalError, err.Error())
			return true
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Write(b)
	default:
		return false
	}
	return true
}

var openAPIOnce = sync.OnceValues(func() ([]byte, error) {
	g := &schemaGen{defs: map[string]*openapi_v2.Schema{}}
	g.root(reflect.TypeFor[corev1.Pod](), "", "v1", "Pod")
	g.root(reflect.TypeFor[networkingv1.NetworkPolicy](), "networking.k8s.io", "v1", "NetworkPolicy")
	doc := &openapi_v2.Document{Swagger: "2.0", Info: &openapi_v2.Info{Title: "fullsend k8stest", Version: "v1.32.0"},
		Paths: &openapi_v2.Paths{}, Definitions: &openapi_v2.Definitions{}}
	for name, sc := range g.defs {
		doc.Definitions.AdditionalProperties = append(doc.Definitions.AdditionalProperties, &openapi_v2.NamedSchema{Name: name, Value: sc})
	}
	return proto.MarshalOptions{Deterministic: true}.Marshal(doc)
})

func openAPIv2() ([]byte, error) { return openAPIOnce() }

// schemaGen derives OpenAPI v2 definitions from the k8s.io/api Go types
// (the same types the API server's own document is generated from): a
// struct's JSON fields are its properties, so a field the types lack is
// one kubectl reports as unknown.
type schemaGen struct{ defs map[string]*openapi_v2.Schema }

func defName(t reflect.Type) string {
	// k8s.io/api/core/v1.Pod -> io.k8s.api.core.v1.Pod, as the API server names it.
	p := t.PkgPath()
	if rest, ok := strings.CutPrefix(p, "k8s.io/"); ok {
		p = "io.k8s." + rest
	}
	return strings.ReplaceAll(p, "/", ".") + "." + t.Name()
}

func (g *schemaGen) root(t reflect.Type, group, version, kind string) {
	g.schema(t)
	gvk := "- group: \"" + group + "\"\n  version: " + version + "\n  kind: " + kind + "\n"
	d := g.defs[defName(t)]
	d.VendorExtension = append(d.VendorExtension, &openapi_v2.NamedAny{Name: "x-kubernetes-group-version-kind", Value: &openapi_v2.Any{Yaml: gvk}})
}

var (
	marshaler = reflect.TypeFor[json.Marshaler]()
	typeOf    = func(s string) *openapi_v2.TypeItem { return &openapi_v2.TypeItem{Value: []string{s}} }
)

func (g *schemaGen) schema(t reflect.Type) *openapi_v2.Schema {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Implements(marshaler) || reflect.PointerTo(t).Implements(marshaler) {
		// Quantity, IntOrString, Time: written as strings or numbers,
		// and a string schema accepts any scalar.
		return &openapi_v2.Schema{Type: typeOf("string")}
	}
	switch t.Kind() {
	case reflect.String:
		return &openapi_v2.Schema{Type: typeOf("string")}
	case reflect.Bool:
		return &openapi_v2.Schema{Type: typeOf("boolean")}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return &openapi_v2.Schema{Type: typeOf("integer")}
	case reflect.Float32, reflect.Float64:
		return &openapi_v2.Schema{Type: typeOf("number")}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return &openapi_v2.Schema{Type: typeOf("string"), Format: "byte"}
		}
		return &openapi_v2.Schema{Type: typeOf("array"), Items: &openapi_v2.ItemsItem{Schema: []*openapi_v2.Schema{g.schema(t.Elem())}}}
	case reflect.Map:
		return &openapi_v2.Schema{Type: typeOf("object"), AdditionalProperties: &openapi_v2.AdditionalPropertiesItem{
			Oneof: &openapi_v2.AdditionalPropertiesItem_Schema{Schema: g.schema(t.Elem())}}}
	case reflect.Struct:
		name := defName(t)
		if _, ok := g.defs[name]; !ok {
			d := &openapi_v2.Schema{Type: typeOf("object"), Properties: &openapi_v2.Properties{}}
			g.defs[name] = d // before the fields: a type may refer to itself
			g.fields(t, d.Properties)
		}
		return &openapi_v2.Schema{XRef: "#/definitions/" + name}
	}
	return &openapi_v2.Schema{} // anything
}

// fields adds t's JSON fields to props, inlining embedded structs as
// encoding/json does.
func (g *schemaGen) fields(t reflect.Type, props *openapi_v2.Properties) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if f.Anonymous && (name == "" || strings.Contains(opts, "inline")) {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			g.fields(ft, props)
			continue
		}
		if name == "" {
			name = f.Name
		}
		props.AdditionalProperties = append(props.AdditionalProperties, &openapi_v2.NamedSchema{Name: name, Value: g.schema(f.Type)})
	}
}
