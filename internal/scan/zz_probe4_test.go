package scan

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

func TestZZProbe4(t *testing.T) {
	data := corpusMarkdown(t)
	os.WriteFile(os.Getenv("ZZOUT")+"/corpus.md", data, 0644)
	e, _ := sharedSecrets()
	os.WriteFile(os.Getenv("ZZOUT")+"/kws.txt", []byte(strings.Join(append(append([]string{}, e.kw.kws...), injAnchors.kws...), "\n")), 0644)
	fmt.Println(len(e.kw.kws), len(injAnchors.kws))
}
