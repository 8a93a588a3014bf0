package scan

import (
	"bytes"

	"github.com/fullsend-ai/fullsend/internal/lazyre"
)

// Sinks of the credential-exfiltration pattern beyond "the agent's
// output, a pipe to a network client, a URL or a server after the
// secret" (findCredSink): the secret given to a network command written
// before it (as data, a file to send, or part of the host name a DNS
// lookup leaks), placed in a URL's query, published by a commit or a push,
// or encoded to slip past a CI log's masking.

// netCmd is a network client in command position on the text before a
// secret; the ones that are also English words (dig, host, ping, nc) only
// after a backtick, "$(", a pipe, a semicolon or at the start of the line.
var netCmd = lazyre.New(`(?i)(?:^|[` + "`" + `;|&(]|\$\()\s*(?:sudo\s+)?(?:dig|host|nslookup|drill|ping|nc|ncat|netcat|socat|telnet|scp|sftp|rsync|ftp|curl|wget)\s` +
	`|\b(?:curl|wget|scp|rsync|sftp|nslookup|netcat|ncat|socat)\s` +
	`|\b(?:requests|httpx|aiohttp|session|client)\.(?:post|put|patch|get|request)\s*\(|\bfetch\s*\(|\baxios(?:\.(?:post|put|patch|get))?\s*\(` +
	`|\burllib\.request|\burlopen\s*\(|\bhttp\.(?:request|post|get)\s*\(|\bxmlhttprequest\b|\binvoke-(?:webrequest|restmethod)\b|\b(?:iwr|irm)\s`)

// usedAs is an option right before a secret that makes the command use
// it (an identity file, a config, a header, user credentials) rather than
// send it: "-i ~/.ssh/id_rsa", "--netrc-file ~/.netrc", "-H 'Authorization:
// token $GITHUB_TOKEN'". Data and upload options are not among them.
var usedAs = lazyre.New(`(?i)(?:(?:^|\s)-[a-ce-eg-su-z]\s*["']?|--(?:identity|netrc-file|netrc|kubeconfig|config|cacert|cert|key|user|header|auth|token|password)[=\s]+["']?|authorization:\s*(?:bearer|token|basic)?\s*|(?:bearer|token)\s+)$`)

// credPublish is a sink after the secret that publishes the repository
// or the CI log: a commit, a push, an issue or PR comment command, a
// build artifact.
var credPublish = lazyre.New(`(?i)\b(?:commit(?:s|ted)?|push(?:es|ed)?|artifacts?|gh\s+(?:issue|pr)\s+(?:comment|create|edit))\b`)

// credEncode is a secret piped through an encoder (CI logs mask a
// secret's value, not its encodings).
var credEncode = lazyre.New(`(?i)^[^\n]{0,40}?\|\s*(?:base64|base32|xxd|od|hexdump|rev|openssl\s+(?:enc|base64))\b(?:\s+[^-d|\n][^\n]*)?(?:\||$|\s|["'])`)

// credBefore matches the sinks written before a secret at t[at:] (its
// line starts at ls): a network command taking it as data or in its host
// name, or a URL whose query or host it is part of. It returns where the
// match starts.
func credBefore(t []byte, ls, at int) (int, bool) {
	before := t[max(ls, at-200):at]
	// The option that takes the secret comes before its path prefix.
	if usedAs.Match(bytes.TrimRight(before, "~$/{}.-_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")) {
		return 0, false
	}
	// In a URL: the secret in its query or host ("?d=${GITHUB_TOKEN}",
	// "https://$(cat …).example.net"), not its user information
	// ("https://x-access-token:$TOKEN@github.com").
	if i := bytes.LastIndex(before, []byte("://")); i >= 0 && !bytes.ContainsAny(before[i:], " \t\"'<>") {
		rest := t[at:min(len(t), at+200)]
		if j := bytes.IndexAny(rest, " \t\n\"'<>/"); j >= 0 {
			rest = rest[:j]
		}
		if bytes.IndexByte(rest, '@') >= 0 {
			return 0, false
		}
		return at - len(before) + i, true
	}
	if loc := netCmd.Get().FindIndex(before); loc != nil {
		s := at - len(before) + loc[0]
		for s < at && bytes.IndexByte([]byte("`;|&($ \t"), t[s]) >= 0 {
			s++ // point at the command, not the punctuation before it
		}
		return s, true
	}
	return 0, false
}

// strongSecret reports whether the secret at t[at:at+n] is one that never
// belongs in a repository: a file in a home directory, a private key, an
// environment dump, a secret variable (the bare project files .npmrc,
// .pypirc, hosts.yml and docker or kube configs may be committed
// legitimately without credentials).
func strongSecret(t []byte, at, n int) bool {
	a := bytes.ToLower(t[at : at+n])
	switch {
	case bytes.HasPrefix(a, []byte("~")), bytes.HasPrefix(a, []byte("$")), bytes.HasPrefix(a, []byte("secrets.")),
		bytes.HasPrefix(a, []byte("id_")), bytes.Contains(a, []byte("env")), bytes.Contains(a, []byte("/etc/shadow")),
		bytes.Contains(a, []byte(".ssh")), bytes.Contains(a, []byte(".aws")), bytes.Contains(a, []byte("credential")),
		bytes.Contains(a, []byte("token")):
		return true
	}
	pre := bytes.ToLower(t[max(0, at-8):at])
	return bytes.HasSuffix(pre, []byte("~/")) || bytes.HasSuffix(pre, []byte("home/")) || bytes.HasSuffix(pre, []byte("home}/")) ||
		bytes.HasSuffix(pre, []byte("/root/"))
}

// credAfterMore matches the sinks after a secret beyond credSink: a
// publishing step (for a strong secret), an encoder pipe (for a secret
// variable). It returns the end of the sink.
func credAfterMore(t []byte, at, n, le int) (int, bool) {
	after := at + n
	if strongSecret(t, at, n) {
		if loc := credPublish.Get().FindIndex(t[after:le]); loc != nil {
			return after + loc[1], true
		}
	}
	a := t[at]
	if a == '$' || a == 's' || a == 'S' {
		if loc := credEncode.Get().FindIndex(t[after:le]); loc != nil {
			return after + loc[1], true
		}
	}
	return 0, false
}
