package event

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/ext"
)

// Bounds of a trigger expression.
const (
	// MaxExprLen bounds the source text of an expression.
	MaxExprLen = 4096
	// CostLimit bounds one evaluation (cel-go's cost units: roughly one per
	// operation and per element a list operation visits).
	CostLimit = 100_000
)

// ErrCost marks an evaluation stopped by CostLimit.
var ErrCost = errors.New("trigger evaluation exceeded its cost limit")

var (
	envOnce sync.Once
	env     *cel.Env
	envErr  error
)

// Env is the CEL environment of triggers: one variable, event, of type
// Event (field names as in the event file).
func Env() (*cel.Env, error) {
	envOnce.Do(func() {
		env, envErr = cel.NewEnv(
			ext.NativeTypes(reflect.TypeFor[Event](), ext.ParseStructTags(true)),
			cel.Variable("event", cel.ObjectType("event.Event")),
			ext.Strings(),
		)
	})
	return env, envErr
}

// Program is a compiled trigger.
type Program struct {
	Expr string
	prg  cel.Program
}

// Compile parses and type-checks expr: it must be a bool expression over
// event. The error is CEL's report (line and column within expr).
func Compile(expr string) (*Program, error) {
	if strings.TrimSpace(expr) == "" {
		return nil, errors.New("empty expression")
	}
	if len(expr) > MaxExprLen {
		return nil, fmt.Errorf("longer than %d bytes", MaxExprLen)
	}
	e, err := Env()
	if err != nil {
		return nil, err
	}
	ast, iss := e.Compile(expr)
	if iss != nil && iss.Err() != nil {
		// CEL's report: "ERROR: <input>:L:C: msg" then the source line and
		// a caret; the first line is the message.
		msg, _, _ := strings.Cut(iss.Err().Error(), "\n")
		return nil, errors.New(strings.TrimPrefix(msg, "ERROR: <input>:"))
	}
	if !ast.OutputType().IsExactType(types.BoolType) {
		return nil, fmt.Errorf("must be a bool expression, not %s", ast.OutputType())
	}
	prg, err := e.Program(ast, cel.CostLimit(CostLimit), cel.InterruptCheckFrequency(100))
	if err != nil {
		return nil, err
	}
	return &Program{Expr: expr, prg: prg}, nil
}

// Match evaluates the trigger against ev.
func (p *Program) Match(ev *Event) (bool, error) {
	out, _, err := p.prg.Eval(map[string]any{"event": ev})
	if err != nil {
		if strings.Contains(err.Error(), "cost limit exceeded") {
			return false, fmt.Errorf("%w (%d)", ErrCost, CostLimit)
		}
		return false, err
	}
	b, ok := out.Value().(bool)
	if !ok {
		return false, fmt.Errorf("result is %T, not bool", out.Value())
	}
	return b, nil
}
