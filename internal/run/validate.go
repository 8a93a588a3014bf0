package run

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

var printer = message.NewPrinter(language.English)

// MaxResultSize bounds the agent's result file.
const MaxResultSize = 4 << 20

// schemaValidator validates results against one JSON Schema file. The
// schema is compiled once; $ref to anything but the schema itself is
// refused (no loader: nothing is read from disk or the network).
type schemaValidator struct {
	file string
	sch  *jsonschema.Schema
}

type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("schema reference %s: external references are not loaded", url)
}

func newSchemaValidator(file string) (*schemaValidator, error) {
	data, err := readBounded(file, MaxResultSize)
	if err != nil {
		return nil, fmt.Errorf("validation_loop.schema %s: %w", file, err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("validation_loop.schema %s: %w", file, err)
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(noLoader{})
	const loc = "file:///fullsend/result.schema.json"
	if err := c.AddResource(loc, doc); err != nil {
		return nil, fmt.Errorf("validation_loop.schema %s: %w", file, err)
	}
	sch, err := c.Compile(loc)
	if err != nil {
		return nil, fmt.Errorf("validation_loop.schema %s: %w", file, err)
	}
	return &schemaValidator{file: file, sch: sch}, nil
}

// validate checks result bytes; it returns the validation errors, one per
// line ("at '/name': minLength: got 0, want 1"), nil when valid.
func (v *schemaValidator) validate(data []byte) []string {
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return []string{"result is not valid JSON: " + err.Error()}
	}
	err = v.sch.Validate(inst)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []string{err.Error()}
	}
	var out []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			loc := "/" + strings.Join(e.InstanceLocation, "/")
			out = append(out, fmt.Sprintf("at %q: %s", loc, e.ErrorKind.LocalizedString(printer)))
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	if len(out) == 0 {
		out = []string{strings.TrimSpace(err.Error())}
	}
	return out
}
