// Package corpustest gives tests the agent libraries they run against, and
// is the one place that decides whether the real-library layer runs. Only
// _test.go files import it.
//
// Two libraries exist:
//
//   - Own: the project's fixture library in testdata/library of this
//     package, written for fullsend. It uses every field and shape of the
//     real fullsend-ai/agents library (forge overlays for github, gitlab and
//     jira, host_files with expand, optional and ${VAR} sources, validation
//     loops, providers, profiles, plugins, readonly_repo, base chains,
//     nested forge skills, sub-agent files, frontmatter with comments,
//     folded scalars, empty lists and an unquoted ": " read leniently). It
//     is always there, so every property is proven in a fresh clone.
//   - Corpus: a checkout of the real fullsend-ai/agents library, an extra
//     layer. Its directory is $FULLSEND_CORPUS, or, when the variable is
//     unset, ../shared/corpus/fullsend-agents beside the module root (where
//     CI keeps it). When the variable is unset and the default is absent,
//     Corpus skips the test with SkipLine; when the variable is set, the
//     directory must be a library (config.yaml and harness/) or the test
//     fails: naming a corpus and not testing it is never silent. A relative
//     $FULLSEND_CORPUS is taken from the module root.
//
// Each runs a test body once per library, as subtests "library" and
// "corpus". Seeds lists the directories to take fuzz seeds from without
// skipping. Library also names, per library, the few harnesses tests refer
// to by role (Main, AllForges) and the facts tests check about them.
package corpustest
