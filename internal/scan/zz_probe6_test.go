package scan

import (
	"fmt"
	"testing"
)

func TestZZProbe6(t *testing.T) {
	e, _ := sharedSecrets()
	n, m := 0, 0
	for ri, r := range e.rules {
		if e.checkKW[ri] == nil || r.RuleID == "generic-api-key" { continue }
		n++
		sh, ok := templateSecretShape(r.Regex.String())
		if ok { m++ } else { fmt.Println("no shape:", r.RuleID) }
		if r.RuleID == "cohere-api-token" || r.RuleID == "atlassian-api-token" { fmt.Println(r.RuleID, sh.min, ok) }
	}
	fmt.Println(n, m)
}
