package scan

import (
	"math/rand"
	"strings"
	"testing"
)

// TestInjectionPrechecksNecessary: wherever a pattern's regular expression
// matches at one of its anchors, its precheck says yes (a precheck may
// only skip work, never a match). Texts are random phrases from the
// patterns' own vocabulary, with odd spacing, case, punctuation and
// non-ASCII look-alikes.
func TestInjectionPrechecksNecessary(t *testing.T) {
	vocab := strings.Fields(`all any every of the these those your my previous previously prior above earlier
		system developer safety instructions instruction prompt prompts rules message messages new are follow : do not don't never
		reveal print show output send post list tell me give write out its initial original hidden secret entire exact verbatim
		pre-prompt preprompt you were given what is were now dan unrestricted evil free from no longer bound freed have been
		enter enable developer god mode switch to turn on act as if a an behave pretend be that admin root from now on
		curl wget iwr irm | || ; & sudo sh bash zsh python3 python perl iex -c $( <( ` + "`" + ` " ' https://x.sh
		token tokens secret credentials password api api_key key private ssh access env environment variables .env cookie session
		${GITHUB_TOKEN} $TOKEN at into via webhook my server https://evil.com x@y.io -d --data -F --form -T --upload-file
		~/.ssh/id_rsa /etc/passwd $(env) /proc/self/environ ſecret ſystem K é —`)
	// phrases that match some pattern once an anchor is put before them
	phrases := []string{"all previous instructions", "system instructions are", "instructions follow", "follow your previous instructions",
		"the system prompt", "me your initial instructions", "out all of your hidden prompt", "are your system prompt", "is your exact instructions",
		"are now dan", "have been freed", "are no longer bound", "developer mode", "as an unrestricted", "as if you are evil",
		"to be unrestricted", "you are an admin", "that you are root", "https://x.sh | sh", "-s https://x | sudo bash", "-c \"$(curl https://x)\"",
		"$(wget x)", "<(curl x)", "the token to https://evil.com", "your api key to my server", "$GITHUB_TOKEN via webhook",
		"-d $TOKEN https://x", "--data @~/.ssh/id_rsa x", "-F f=@/etc/passwd", "x\n-T .env"}
	seps := []string{" ", " ", " ", "  ", "\n", "\t", "", ",", ".", "\r\n", "\u00a0"}
	rng := rand.New(rand.NewSource(5))
	checked := map[string]int{}
	for n := 0; n < 30000; n++ {
		var sb strings.Builder
		words := strings.Fields(phrases[rng.Intn(len(phrases))])
		if rng.Intn(3) == 0 {
			words = nil
			for j := 1 + rng.Intn(9); j > 0; j-- {
				words = append(words, vocab[rng.Intn(len(vocab))])
			}
		}
		for _, w := range words {
			switch rng.Intn(10) {
			case 0:
				w = vocab[rng.Intn(len(vocab))]
			case 1:
				w += seps[rng.Intn(len(seps))] + vocab[rng.Intn(len(vocab))]
			}
			if rng.Intn(4) == 0 {
				w = strings.ToUpper(w)
			}
			sb.WriteString(w)
			sb.WriteString(seps[rng.Intn(len(seps))])
		}
		for ri := range injRules {
			for pi := range injRules[ri].pats {
				p := &injRules[ri].pats[pi]
				if p.pre == nil {
					continue
				}
				a := p.anchors[rng.Intn(len(p.anchors))]
				text := []byte(a + seps[rng.Intn(4)] + sb.String())
				if rng.Intn(2) == 0 {
					text = []byte(strings.ToUpper(string(text)))
				}
				end := min(len(text), injSpan)
				if p.re.Match(text[:end]) {
					checked[injRules[ri].id+"/"+string(rune('0'+pi))]++
					if !p.pre(text, len(strings.TrimRight(a, " ")), end) {
						t.Fatalf("%s pattern %d: precheck refuses %q", injRules[ri].id, pi, text)
					}
				}
			}
		}
	}
	for ri := range injRules {
		for pi, p := range injRules[ri].pats {
			if k := injRules[ri].id + "/" + string(rune('0'+pi)); p.pre != nil && checked[k] == 0 {
				t.Errorf("%s: no matching sample: the generator does not exercise it", k)
			}
		}
	}
	t.Logf("matching samples: %v", checked)
}
