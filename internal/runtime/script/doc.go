// Package script implements the "script" runtime: instead of a model, a
// YAML file of deterministic operations runs inside the real sandbox
// session. It exists for behaviour tests (drive the runner's layout,
// validation loop and teardown paths exactly) and for demos.
//
// It owns the script format and its interpreter. The script file is a host
// path given as RunInput.Options["script"]; it is read once per Run.
//
// # Format
//
//	steps:
//	  - say: "reading the issue"                 # a text event
//	  - read: {path: ${WORKDIR}/README.md, expect_contains: Hello, save: README}
//	  - write: {path: ${WORKDIR}/out.txt, content: "iteration ${ITERATION}\n"}
//	  - exec: {args: [go, test, ./...], expect_exit: 0, expect_stdout_contains: ok}
//	  - exec: {cmd: "ls | wc -l", expect_output: '^\s*\d+', save: COUNT, cwd: /sandbox/workspace}
//	  - expect: {path: ${WORKDIR}/out.txt, contains: iteration}   # exists: false to assert absence
//	  - fetch_skill: {url: "https://github.com/org/lib/tree/v1/skills/x", save: SKILL_DIR}
//	  - write_result: {json: '{"status": 1}'}    # raw text, may be invalid on purpose
//	    when: {iteration: 1}
//	  - write_result: {value: {status: ok, count: "${COUNT}"}}
//	    when: {from_iteration: 2}
//	  - fail: {message: "agent crashed", exit_code: 3}
//
// Each step holds exactly one operation, plus optional name and when
// (iteration: N, from_iteration: N, feedback: true|false). exec expects exit
// status 0 unless expect_exit or any_exit says otherwise; cmd runs through
// sh -c, args verbatim; the working directory defaults to RunInput.WorkDir
// and the environment is RunInput.Env plus the step's env. fetch_skill runs
// `/usr/local/bin/fullsend fetch-skill URL` and stores the directory it
// prints. write_result writes to RunInput.ResultPath: value as JSON, json
// verbatim, or a copy of a sandbox file.
//
// ${NAME} is replaced in every string field from: RunInput.Env, the
// built-ins ITERATION, RESULT_PATH, WORKDIR, PROMPT, FEEDBACK, AGENT, MODEL,
// and variables saved by earlier steps; an unknown name fails the step. "$$"
// is a literal "$"; "$NAME" without braces is left for the shell.
//
// Parsing is strict: unknown fields, steps with zero or several operations,
// missing required fields and bad regexps are errors naming the line.
//
// # Failure
//
// The first failing step ends the run. Run then returns an Outcome with
// ExitCode 1 (or fail's exit_code, -1 on timeout or cancellation) and a
// *runtime.Error wrapping a *StepError ("step 3 (exec, line 12): …");
// failed expectations wrap ErrExpectation. Every step emits a tool_call and
// a tool_result event.
package script
