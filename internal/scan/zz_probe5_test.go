package scan

import (
	"fmt"
	"testing"
)

func TestZZProbe5(t *testing.T) {
	data := corpusMarkdown(t)
	e, _ := sharedSecrets()
	for ri, r := range e.rules {
		switch r.RuleID {
		case "cohere-api-token", "atlassian-api-token", "generic-api-key", "octopus-deploy-api-key", "lob-api-key", "curl-auth-user":
			fmt.Println(r.RuleID, r.Regex.String(), r.Keywords, e.checkKW[ri], len(r.Regex.String()))
		}
	}
	var cur lineCursor
	cur.b = data
	e.kw.find(data, func(off, k int) {
		ws, we := cur.at(off)
		kwEnd := off + len(e.kw.kws[k])
		for _, ri := range e.kwRules[k] {
			id := e.rules[ri].RuleID
			if id != "cohere-api-token" && id != "atlassian-api-token" && id != "curl-auth-user" && id != "generic-api-key" {
				continue
			}
			if c := e.check[ri]; c != nil && e.checkKW[ri][e.kw.kws[k]] {
				if !c(data, kwEnd) { continue }
			}
			fmt.Printf("%s: %q\n", id, data[ws:min(we, ws+200)])
		}
	})
}
