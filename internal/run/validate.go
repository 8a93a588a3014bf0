package run

import (
	"fmt"

	"github.com/fullsend-ai/fullsend/internal/schemacheck"
)

// MaxResultSize bounds the agent's result file.
const MaxResultSize = 4 << 20

// schemaValidator validates results against one JSON Schema file. The
// schema is compiled once; $ref to anything but the schema itself is
// refused (nothing is read from disk or the network).
type schemaValidator struct {
	file string
	sch  *schemacheck.Schema
}

func newSchemaValidator(file string) (*schemaValidator, error) {
	data, err := readBounded(file, MaxResultSize)
	if err != nil {
		return nil, fmt.Errorf("validation_loop.schema %s: %w", file, err)
	}
	sch, err := schemacheck.Compile(file, data)
	if err != nil {
		return nil, fmt.Errorf("validation_loop.%w", err)
	}
	return &schemaValidator{file: file, sch: sch}, nil
}

// validate checks result bytes; it returns the validation errors, one per
// line (`at "/name": minLength: "" contains 0 Unicode code points, fewer
// than 1`), nil when valid.
func (v *schemaValidator) validate(data []byte) []string {
	inst, err := schemacheck.Decode(data)
	if err != nil {
		return []string{"result is " + err.Error()}
	}
	probs := v.sch.Validate(inst)
	if probs == nil {
		return nil
	}
	out := make([]string, len(probs))
	for i, p := range probs {
		out[i] = fmt.Sprintf("at %q: %s", p.Location(), p.Reason)
	}
	return out
}
