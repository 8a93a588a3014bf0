// Package schemacheck validates agent results against JSON Schema: the
// validation_loop.schema of a harness (package run) and the result_schema
// and delegate_task returnSchema of the native runtime. It owns compiling
// a schema document, decoding a result and turning a failed validation
// into problems that name the instance location (a JSON Pointer into the
// result) and the reason, which is what the agent is shown.
//
// # Engine
//
// The verdict is github.com/google/jsonschema-go's (draft 2020-12 and
// draft-07; a document without $schema is read as 2020-12). It does no work
// at package init beyond a few small tables, unlike the library it
// replaced, which compiled every draft's meta-schema in its init and cost
// each fullsend process about 5 ms. "format" is an annotation, never an
// assertion, in both drafts (the old library asserted it in draft-07).
//
// The engine reports only the first failure and names the schema location,
// not the result's. So when a result fails, Validate walks the schema and
// the result together and asks the engine for the verdict of each
// subschema on the matching part of the result (a probe: a one-line schema
// whose $ref points into the compiled document). A part that fails while
// every part below it passes is reported at its own location, with the
// engine's reason; required, additionalProperties:false, minItems and
// maxItems are also reported where a failing child would have hidden them.
// Problems come out sorted by location and de-duplicated, one line each,
// at most MaxProblems of them (then a last one says more were left out).
//
// # Rules
//
//   - $schema must be absent, draft 2020-12 or draft-07; anything else is
//     refused when the schema is compiled.
//   - References leave the document never: a $ref to another document
//     fails compilation (nothing is read from disk or the network).
//   - Regular expressions are Go's (RE2); one that does not compile fails
//     compilation.
//   - A result is one JSON value with nothing after it.
//
// # Failure
//
// Compile returns a one-line error naming the schema and the reason.
// Validate never fails: a result that is not JSON is one problem at the
// root.
package schemacheck
