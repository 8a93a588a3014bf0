package scan

import (
	"math/rand"
	"strings"
	"testing"
)

// TestSecretChecksNecessary: on generated assignments ("<prefix><keyword>
// <op> <value>") a rule whose regular expression matches is admitted by its
// cheap check at some keyword occurrence (the property FuzzSecretsPrefilter
// explores, here with inputs shaped like the semi-generic rules).
func TestSecretChecksNecessary(t *testing.T) {
	e, err := sharedSecrets()
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(6))
	ops := []string{"=", ">", ":", "::=", "||", "=>", "?=", ",", "|", "?", ": ", " = ", "\t:", "='", ": \"", "= `", "=\n "}
	pre := []string{"", "my_", "X.", "the ", "export ", "\"", "a-b-"}
	mid := []string{"", "_id", " ", "_KEY", "'", "\" ", "-x.y"}
	alpha := "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.=+/~@$ "
	matched := 0
	for ri, r := range e.rules {
		if e.prefilter(ri).check == nil || len(r.Keywords) == 0 || e.wide[ri] != 0 {
			continue
		}
		for n := 0; n < 300; n++ {
			var sb strings.Builder
			sb.WriteString(pre[rng.Intn(len(pre))])
			kw := r.Keywords[rng.Intn(len(r.Keywords))]
			if rng.Intn(2) == 0 {
				kw = strings.ToUpper(kw)
			}
			sb.WriteString(kw)
			sb.WriteString(mid[rng.Intn(len(mid))])
			sb.WriteString(ops[rng.Intn(len(ops))])
			l := 8 + rng.Intn(80)
			for j := 0; j < l; j++ {
				if rng.Intn(3) == 0 {
					sb.WriteByte(alpha[rng.Intn(len(alpha))])
				} else {
					sb.WriteByte(alpha[rng.Intn(36)])
				}
			}
			sb.WriteString([]string{"", " ", "\"", ";", "\n"}[rng.Intn(5)])
			data := []byte(sb.String())
			sm := r.Regex.Get().FindSubmatch(data)
			if sm == nil {
				continue
			}
			if r.RuleID == "generic-api-key" && distinct(sm[1]) < 12 {
				continue // below the rule's entropy floor: never a finding (genericAPIKeyCheck)
			}
			matched++
			admitted := false
			e.kw.find(data, func(off, k int) {
				kwEnd := off + len(e.kw.kws[k])
				for _, rj := range e.kwRules[k] {
					if rj == ri && (!e.prefilter(ri).checkKW[e.kw.kws[k]] || e.prefilter(ri).check(data, kwEnd)) {
						admitted = true
					}
				}
			})
			if !admitted {
				t.Fatalf("rule %s matches %q but its check refuses it", r.RuleID, data)
			}
		}
	}
	if matched < 150 {
		t.Fatalf("only %d matching samples", matched)
	}
	t.Logf("%d matching samples", matched)
}

func distinct(b []byte) int {
	var seen [256]bool
	n := 0
	for _, c := range b {
		if !seen[c] {
			seen[c] = true
			n++
		}
	}
	return n
}
