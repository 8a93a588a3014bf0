package run

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/corpustest"
)

// schemaCase is one result checked against one real schema: the verdict,
// and for an invalid result the instance paths the errors must name.
type schemaCase struct {
	name   string
	schema string // relative to the library (or the module for examples/)
	result string
	paths  []string // nil = valid
}

// corpusCases use the schemas of the real agents library.
var corpusCases = []schemaCase{
	{"code ok", "schemas/code-result.schema.json", `{"target_branch":"fix/issue-12","pr_body":"x","closes_issue":false}`, nil},
	{"code bad branch", "schemas/code-result.schema.json", `{"target_branch":"fix issue"}`, []string{"/target_branch"}},
	{"code extra field", "schemas/code-result.schema.json", `{"target_branch":"a","extra":1}`, []string{"/"}},
	{"code missing branch", "schemas/code-result.schema.json", `{}`, []string{"/"}},
	{"fix ok", "schemas/fix-result.schema.json", `{"pr_number":7,"trigger_source":"bot","actions":[{"type":"fix","finding":"f","description":"d"},{"type":"disagree","finding":"g","reason":"r"}],"summary":"s","tests_passed":true,"files_changed":["a.go"],"strategy_change":null}`, nil},
	{"fix then-required", "schemas/fix-result.schema.json", `{"pr_number":7,"trigger_source":"bot","actions":[{"type":"fix","finding":"f","description":"d"},{"type":"disagree","finding":"g"}],"summary":"s","tests_passed":true,"files_changed":[]}`, []string{"/actions/1"}},
	{"fix integer", "schemas/fix-result.schema.json", `{"pr_number":7.5,"trigger_source":"bot","actions":[{"type":"fix","finding":"f","description":"d"}],"summary":"s","tests_passed":true,"files_changed":[]}`, []string{"/pr_number"}},
	{"fix two errors", "schemas/fix-result.schema.json", `{"pr_number":7,"trigger_source":"cron","actions":[],"summary":"s","tests_passed":true,"files_changed":[]}`, []string{"/trigger_source", "/actions"}},
	{"fix nullable", "schemas/fix-result.schema.json", `{"pr_number":7,"trigger_source":"bot","actions":[{"type":"fix","finding":"f","description":"d"}],"summary":"s","tests_passed":true,"files_changed":[],"strategy_change":3}`, []string{"/strategy_change"}},
	{"prioritize ok", "schemas/prioritize-result.schema.json", `{"reach":1,"impact":0.25,"confidence":1,"effort":3,"reasoning":{"reach":"a","impact":"b","confidence":"c","effort":"d"}}`, nil},
	{"prioritize range", "schemas/prioritize-result.schema.json", `{"reach":1,"impact":0.2,"confidence":1,"effort":3,"reasoning":{"reach":"a","impact":"b","confidence":"","effort":"d"}}`, []string{"/impact", "/reasoning/confidence"}},
	{"retro ok", "schemas/retro-result.schema.json", `{"summary":"s","proposals":[{"target_repo":"org/repo","title":"t","what_happened":"w","what_could_go_better":"b","proposed_change":"c","validation_criteria":"v"}]}`, nil},
	{"retro ref item", "schemas/retro-result.schema.json", `{"summary":"s","proposals":[{"target_repo":"org/repo","title":"t","what_happened":"w","what_could_go_better":"b","proposed_change":"c","validation_criteria":"v"},{"target_repo":"repo","title":"t","what_happened":"w","what_could_go_better":"b","proposed_change":"c","validation_criteria":"v"}]}`, []string{"/proposals/1/target_repo"}},
	{"retro too many", "schemas/retro-result.schema.json", `{"summary":"s","proposals":[{},{},{},{}]}`, []string{"/proposals"}},
	{"review ok", "schemas/review-result.schema.json", `{"action":"request-changes","pr_number":3,"repo":"o/r","head_sha":"0123456789012345678901234567890123456789","body":"b","findings":[{"severity":"low","category":"style","file":"a.go","description":"d","line":4}],"label_actions":{"reason":"r","actions":[{"action":"add","label":"needs: work"}]}}`, nil},
	{"review approve protected", "schemas/review-result.schema.json", `{"action":"approve","pr_number":3,"repo":"o/r","head_sha":"0123456789012345678901234567890123456789","body":"b","findings":[{"severity":"low","category":"protected-path","file":"a.go","description":"d"}]}`, []string{"/"}},
	{"review approve fine", "schemas/review-result.schema.json", `{"action":"approve","pr_number":3,"repo":"o/r","head_sha":"0123456789012345678901234567890123456789","body":"b","findings":[{"severity":"low","category":"style","file":"a.go","description":"d"}]}`, nil},
	{"review finding", "schemas/review-result.schema.json", `{"action":"comment","pr_number":3,"repo":"o/r","head_sha":"0123456789012345678901234567890123456789","body":"b","findings":[{"severity":"low","category":"c","file":"a.go","description":"d"},{"severity":"urgent","category":"c","file":"a.go","description":"d"}]}`, []string{"/findings/1/severity"}},
	{"review label", "schemas/review-result.schema.json", `{"action":"failure","reason":"token-limit","pr_number":3,"repo":"o/r","label_actions":{"reason":"r","actions":[{"action":"add","label":"bad|label"}]}}`, []string{"/label_actions/actions/0/label"}},
	{"review failure needs reason", "schemas/review-result.schema.json", `{"action":"failure","pr_number":3,"repo":"o/r"}`, []string{"/"}},
	{"scribe ok", "schemas/scribe-result.schema.json", `{"topics":[{"topic":"t","summary":"s","confidence":0.5,"public_safe":false,"public_safe_category":"hr","existing_issue":null}],"new_issues":[],"stats":{"notes_processed":1,"topics_extracted":1,"existing_matched":0,"new_proposed":0,"omitted":0}}`, nil},
	{"scribe enum null", "schemas/scribe-result.schema.json", `{"topics":[{"topic":"t","summary":"s","confidence":0.5,"public_safe":true,"public_safe_category":null}],"new_issues":[],"stats":{"notes_processed":1,"topics_extracted":1,"existing_matched":0,"new_proposed":0,"omitted":0}}`, nil},
	{"scribe bad category", "schemas/scribe-result.schema.json", `{"topics":[{"topic":"t","summary":"s","confidence":0.5,"public_safe":true,"public_safe_category":"gossip"}],"new_issues":[],"stats":{"notes_processed":1,"topics_extracted":1,"existing_matched":0,"new_proposed":0,"omitted":-1}}`, []string{"/topics/0/public_safe_category", "/stats/omitted"}},
	{"triage ok sufficient", "schemas/triage-result.schema.json", `{"action":"sufficient","reasoning":"r","comment":"c","clarity_scores":{"symptom":1,"cause":1,"reproduction":1,"impact":1,"overall":1},"triage_summary":{"title":"t","severity":"low","category":"bug","problem":"p","root_cause_hypothesis":"h","reproduction_steps":["a"],"impact":"i","recommended_fix":"f","proposed_test_case":"t"}}`, nil},
	{"triage duplicate anyOf", "schemas/triage-result.schema.json", `{"action":"duplicate","reasoning":"r","comment":"c","duplicate_of":"PROJ-12"}`, nil},
	{"triage duplicate bad", "schemas/triage-result.schema.json", `{"action":"duplicate","reasoning":"r","comment":"c","duplicate_of":"proj 12"}`, []string{"/duplicate_of"}},
	{"triage sufficient missing", "schemas/triage-result.schema.json", `{"action":"sufficient","reasoning":"r","comment":"c","clarity_scores":{"symptom":1,"cause":1,"reproduction":1,"impact":1,"overall":1}}`, []string{"/"}},
	{"triage prerequisites empty", "schemas/triage-result.schema.json", `{"action":"prerequisites","reasoning":"r","comment":"c","prerequisites":{"existing":[],"create":[]}}`, []string{"/prerequisites/existing", "/prerequisites/create"}},
	{"triage prerequisites ok", "schemas/triage-result.schema.json", `{"action":"prerequisites","reasoning":"r","comment":"c","prerequisites":{"existing":[{"url":"https://github.com/o/r/issues/4"}],"create":[]}}`, nil},
	{"triage pr url", "schemas/triage-result.schema.json", `{"action":"in-progress","reasoning":"r","comment":"c","pull_requests":[{"url":"https://github.com/o/r/pull/1"},{"url":"https://example.com/o/r/pull/1"}]}`, []string{"/pull_requests/1/url"}},
	{"triage not an object", "schemas/triage-result.schema.json", `["action"]`, []string{"/"}},
}

// ownCases use the project's fixture library and examples/hello.
var ownCases = []schemaCase{
	{"build ok", "schemas/build-result.schema.json", `{"target_branch":"b","resolves_issue":true}`, nil},
	{"build type", "schemas/build-result.schema.json", `{"target_branch":"b","resolves_issue":"yes"}`, []string{"/resolves_issue"}},
	{"digest ok", "schemas/digest-result.schema.json", `{"topics":[{"title":"t","action":"skip","confidence":0}]}`, nil},
	{"digest item", "schemas/digest-result.schema.json", `{"topics":[{"title":"t","action":"skip","confidence":0},{"title":"t","action":"skip","confidence":2,"issue":0}]}`, []string{"/topics/1/confidence", "/topics/1/issue"}},
	{"inspect ok", "schemas/inspect-result.schema.json", `{"verdict":"approve","findings":[],"summary":"s","head_sha":"0123456789abcdef0123456789abcdef01234567","label_actions":{"add":["x"]}}`, nil},
	{"inspect sha", "schemas/inspect-result.schema.json", `{"verdict":"approve","findings":[],"summary":"s","head_sha":"0123456789ABCDEF0123456789abcdef01234567"}`, []string{"/head_sha"}},
	{"intake ok", "schemas/intake-result.schema.json", `{"decision":"ready","reasoning":"r","label_actions":{"add":["a"],"remove":[]}}`, nil},
	{"intake ref", "schemas/intake-result.schema.json", `{"decision":"ready","reasoning":"r","label_actions":{"add":[1]}}`, []string{"/label_actions/add/0"}},
	{"retrospect format is an annotation", "schemas/retrospect-result.schema.json", `{"run":"not a uri","proposals":[]}`, nil},
	{"retrospect title", "schemas/retrospect-result.schema.json", `{"run":"r","proposals":[{"title":"` + strings.Repeat("t", 121) + `","body":"b","area":"skill"}]}`, []string{"/proposals/0/title"}},
}

var helloCases = []schemaCase{
	{"hello ok", "examples/hello/schemas/hello-result.schema.json", `{"greeting":"Hello, world!","name":"world"}`, nil},
	{"hello bad", "examples/hello/schemas/hello-result.schema.json", `{"greeting":"Hi","name":""}`, []string{"/greeting", "/name"}},
	{"hello not json", "examples/hello/schemas/hello-result.schema.json", `{"greeting":`, []string{}},
}

func TestSchemaValidatorCorpus(t *testing.T) {
	checkSchemaCases(t, corpustest.Corpus(t).Dir, corpusCases)
}

func TestSchemaValidatorOwn(t *testing.T) {
	checkSchemaCases(t, corpustest.Own(t).Dir, ownCases)
	root, err := corpustest.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	checkSchemaCases(t, root, helloCases)
}

func checkSchemaCases(t *testing.T, dir string, cases []schemaCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v, err := newSchemaValidator(filepath.Join(dir, filepath.FromSlash(c.schema)))
			if err != nil {
				t.Fatal(err)
			}
			errs := v.validate([]byte(c.result))
			if c.paths == nil {
				if errs != nil {
					t.Fatalf("valid result refused: %q", errs)
				}
				return
			}
			if len(errs) == 0 {
				t.Fatal("invalid result accepted")
			}
			for _, p := range c.paths {
				found := false
				for _, e := range errs {
					found = found || strings.HasPrefix(e, `at "`+p+`": `)
				}
				if !found {
					t.Errorf("no error at %q: %q", p, errs)
				}
			}
			for _, e := range errs {
				if strings.Contains(e, "\n") || e == "" {
					t.Errorf("error not one line: %q", e)
				}
			}
		})
	}
}

func TestSchemaValidatorBadSchema(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"remote ref":  `{"$ref":"https://example.com/other.json"}`,
		"not json":    `{"type":`,
		"bad pattern": `{"type":"string","pattern":"("}`,
	} {
		t.Run(name, func(t *testing.T) {
			f := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".json")
			if err := os.WriteFile(f, []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
			if _, err := newSchemaValidator(f); err == nil || !strings.Contains(err.Error(), "validation_loop.schema "+f) {
				t.Fatalf("got %v, want an error naming %s", err, f)
			}
		})
	}
}
