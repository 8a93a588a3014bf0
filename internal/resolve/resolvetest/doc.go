// Package resolvetest holds the fixtures that the tests of package resolve
// and of the runtime fetch service (package fetchsvc) share: a forge
// repository of skills that pin each other (Repo, served by a
// forgetest.Server, which also gives the org config reaching it) and a
// scanner that blocks marked content and records what it saw (Scanner).
//
// It never imports package resolve, so resolve's own (internal) tests can
// use it. Repo.Skill reports setup failures with t.Fatal on the test
// goroutine; Scanner is safe for concurrent use.
package resolvetest
