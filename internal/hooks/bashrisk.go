package hooks

import (
	"context"
	"fmt"
	"github.com/fullsend-ai/fullsend/internal/lazyre"
	"path"
	"strings"
)

// The bash risk check refuses command lines whose shape is dangerous
// whatever the task: running downloaded or decoded code, wiping the file
// system, setuid bits, SSH key planting and private-key reads, reverse
// shells, credential exfiltration, loader hijacking, and tampering with the
// hook configuration that enforces these checks. Rules are matched against
// the raw command and against a de-obfuscated copy (quotes, backslashes and
// $IFS removed), so c'u'rl and cu\rl count as curl. It is a tripwire in
// front of the sandbox, not the boundary: the sandbox's mounts and network
// allowlist are.

type riskRule struct {
	id, why string
	re      *lazyre.Regexp
}

const (
	reShell   = `(?:sudo\s+)?(?:env\s+)?(?:/\S*/)?(?:ba|z|da|k|fi|tc|c)?sh\b|(?:/\S*/)?(?:python[0-9.]*|perl|ruby|node|php)\b`
	reFetcher = `\b(?:curl|wget|fetch|aria2c|lwp-download|http)\b`
)

var riskRules = []riskRule{
	{"pipe-to-shell", "pipes a download into an interpreter",
		lazyre.New(reFetcher + `[^|;&\n]*\|+\s*(?:` + reShell + `)`)},
	{"shell-from-download", "runs code fetched by a command substitution",
		lazyre.New(`(?:\b(?:ba|z)?sh\s+(?:-c\s+)?|\beval\s+|\bsource\s+|(?:^|[;&|]\s*)\.\s+)["']?[$<]\(\s*` + reFetcher)},
	{"decode-and-exec", "decodes an encoded payload and executes it",
		lazyre.New(`(?:\bbase64\s+(?:-\w+\s+)*(?:-d|--decode|-D)\b|\bxxd\s+(?:-\w+\s+)*-r|\bopenssl\s+(?:enc\s+)?(?:base64\s+)?(?:-\w+\s+)*-d\b)[^;&\n]*\|+\s*(?:` + reShell + `)|\beval\s+["']?\$\([^)]*\b(?:base64\s+(?:-d|--decode)|xxd\s+-r)`)},
	{"rm-root", "recursively deletes the root, home or whole working tree",
		lazyre.New(`\brm\s+(?:-[a-zA-Z-]+\s+)*(?:-[a-zA-Z]*[rR][a-zA-Z]*|--recursive)\s+(?:-[a-zA-Z-]+\s+)*(?:/|/\*|~/?|~/\*|\$HOME/?|\$\{HOME\}/?|\*|\.\*?)(?:\s|$|;|&)|--no-preserve-root`)},
	{"setuid", "sets a setuid/setgid bit",
		lazyre.New(`\bchmod\s+(?:-\w+\s+)*(?:[ugoa]*[+=][rwxXt]*s|0?[2467][0-7]{3})\b`)},
	{"ssh-keys", "writes SSH authorized keys or reads SSH private keys",
		lazyre.New(`authorized_keys|\bid_(?:rsa|dsa|ecdsa|ed25519)\b|(?:>|\btee\b|\bcp\b|\bmv\b|\bln\b|\binstall\b|\bmkdir\b)[^;&|\n]*(?:~|\$HOME|\$\{HOME\}|/root|/home/[^/\s]+)/\.ssh\b`)},
	{"reverse-shell", "opens a reverse shell or raw socket",
		lazyre.New(`\b(?:nc|ncat|netcat)\b[^|;&\n]*\s-[a-zA-Z]*[ec]\b|\bsocat\b[^;&|\n]*\b(?:exec|system):|/dev/(?:tcp|udp)/|\bbash\s+-i\s+[<>]&|\bmkfifo\b[^;\n]*\b(?:nc|ncat|netcat)\b|\b(?:python[0-9.]*|perl|ruby|php)\b[^;\n]*\bsocket\b[^;\n]*\b(?:subprocess|pty|dup2|exec|fsockopen|spawn)`)},
	{"credential-exfiltration", "sends environment variables or credential files over the network",
		lazyre.New(`(?:` + reFetcher + `|\b(?:nc|ncat|scp|rsync|ssh)\b)[^;\n]*(?:/proc/(?:self|\d+)/environ|\.aws/credentials|\.gcp-credentials|\.config/gcloud|\.netrc|\.git-credentials|\.docker/config\.json|\.kube/config|\$\(\s*(?:env|printenv|set)\s*\))|\b(?:env|printenv)\s*\|[^;\n]*(?:` + reFetcher + `|\b(?:nc|ncat)\b)`)},
	{"loader-hijack", "hijacks the dynamic loader",
		lazyre.New(`\bLD_PRELOAD=|\bLD_AUDIT=|/etc/ld\.so\.preload`)},
	{"destroy-disk", "formats or overwrites a disk, or forks without bound",
		lazyre.New(`\bmkfs(?:\.\w+)?\b|\bdd\b[^;&|\n]*\bof=/dev/(?:sd|nvme|xvd|vd|hd|mmcblk)|>\s*/dev/(?:sd|nvme|xvd|vd|hd)[a-z]|:\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:`)},
	{"hook-env-tampering", "changes the environment the security hooks read",
		lazyre.New(`\b(?:unset\s+(?:-v\s+)?|export\s+|declare\s+-x\s+)?(?:FULLSEND_TOOL_ALLOWLIST|FULLSEND_CANARY_TOKEN|FULLSEND_ALLOWED_SERVICES|CLAUDE_CONFIG_DIR)=|\bunset\s+(?:-v\s+)?(?:FULLSEND_|CLAUDE_CONFIG_DIR)`)},
}

// protectedRe matches paths of the hook configuration, of the fullsend
// binary and of the workspace environment files (/sandbox/workspace/.env
// and .env.d/, sourced before every claude iteration and every native bash
// call: a write there would run code past a Bash(...) allowlist and could
// change the variables the hooks read); the agent must not modify them.
// Claude Code's own configuration that would start processes or load
// instructions at its next start is protected too, wherever it is:
// .claude.json (its mcpServers), .mcp.json, plugin hooks, output styles
// and CLAUDE.local.md. (The claude runtime also restores its whole config
// dir before every iteration; reading it, e.g. a skill, stays allowed.)
var protectedRe = lazyre.New(`\.claude/settings(?:\.local)?\.json|\.claude/hooks(?:/|\b)|\.claude\.json\b|\.mcp\.json\b|\bplugins/[^/\s]+/hooks\b|\boutput-styles\b|\bCLAUDE\.local\.md\b|\bdisableAllHooks\b|/usr/local/bin/fullsend\b|\.claude/managed-settings\.json|/sandbox/workspace/\.env\b|\.env\.d\b`)

// readOnlyProgs may mention protected paths (inspection only).
var readOnlyProgs = map[string]bool{"cat": true, "ls": true, "head": true, "tail": true, "grep": true, "rg": true,
	"jq": true, "less": true, "stat": true, "wc": true, "file": true, "diff": true, "printenv": true, "git": false}

// deobfuscate removes quoting and $IFS tricks.
func deobfuscate(s string) string {
	r := strings.NewReplacer(`${IFS}`, " ", `$IFS`, " ", `'`, "", `"`, "", `\`+"\n", "", `\`, "")
	s = r.Replace(s)
	return strings.Join(strings.Fields(s), " ")
}

// BashRisk classifies a command line: risky is true when a rule matches,
// with the rule id and what the command does.
func BashRisk(cmd string) (rule, why string, risky bool) {
	forms := []string{cmd, deobfuscate(cmd)}
	for _, r := range riskRules {
		for _, f := range forms {
			if r.re.MatchString(f) {
				return r.id, r.why, true
			}
		}
	}
	for _, f := range forms {
		if protectedRe.MatchString(f) && !readOnlyCommand(f) {
			return "hook-config-tampering", "modifies or references the security hook configuration", true
		}
	}
	return "", "", false
}

func readOnlyCommand(cmd string) bool {
	if strings.ContainsAny(cmd, ">") {
		return false
	}
	names, err := commandNames(cmd)
	if err != nil {
		return false
	}
	for _, n := range names {
		if !readOnlyProgs[n] {
			return false
		}
	}
	return true
}

func checkBashRisk(_ context.Context, in *Input, _ *Env) (Verdict, error) {
	switch in.ToolName {
	case "Bash":
		cmd := in.inputString("command")
		if id, why, bad := BashRisk(cmd); bad {
			return Verdict{Block: true, Rule: "bash." + id, Reason: fmt.Sprintf(
				"command blocked by the fullsend bash risk check (%s): it %s. Do the task with ordinary, reviewable commands; do not retry variants of this command.", id, why)}, nil
		}
	case "Write", "Edit", "MultiEdit", "NotebookEdit":
		p := in.inputString("file_path")
		if p == "" {
			p = in.inputString("notebook_path")
		}
		if protectedPath(p) {
			return Verdict{Block: true, Rule: "bash.hook-config-tampering", Reason: fmt.Sprintf(
				"%s of %q blocked: the hook configuration, Claude Code's configuration, the workspace .env files, SSH keys and the fullsend binary are off limits to the agent.", in.ToolName, p)}, nil
		}
	}
	return Verdict{}, nil
}

func protectedPath(p string) bool {
	if p == "" {
		return false
	}
	c := path.Clean(p)
	return protectedRe.MatchString(c) || strings.Contains(c, "/.ssh/") || strings.HasSuffix(c, "/.ssh")
}
