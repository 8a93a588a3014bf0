package scan

import (
	"bytes"
	"strings"

	"github.com/fullsend-ai/fullsend/internal/lazyre"
)

// More rules of the context-injection scanner: markup that speaks to the
// model directly, instructions to hand secrets over without an override
// phrase, paraphrased and translated overrides. They read the same
// normalised text as injRules (see normalize).

// RuleModelMarkup is chat-template, tool-call and role-turn markup: tokens
// a model reads as the boundary of a conversation turn or as a tool call,
// with no business in a skill or a fetched page.
const RuleModelMarkup = "injection/model-markup"

var moreInjRules = []injRule{
	{id: RuleEncoded, what: "encoded injection", pats: []injPattern{{anchors: encodedAnchors(), find: noMatch}}},
	{id: RuleModelMarkup, what: "model-facing markup (chat template, tool call or role turn)", pats: []injPattern{
		pat([]string{"<|im_start|>"}, `<\|im_start\|>\s*(?:system|assistant|user|tool|developer)\b`),
		pat([]string{"<|im_end|>", "<|endoftext|>", "<|eot_id|>", "<|begin_of_text|>", "<|end_header_id|>"},
			`<\|(?:im_end|endoftext|eot_id|begin_of_text|end_header_id)\|>`),
		pat([]string{"<|start_header_id|>"}, `<\|start_header_id\|>\s*(?:system|assistant|user|ipython|tool)\b`),
		pat([]string{"<|system|>", "<|user|>", "<|assistant|>"}, `<\|(?:system|user|assistant)\|>`),
		pat([]string{"<tool_call>", "<function_call>", "<tool_use>"}, `<(?:tool_call|function_call|tool_use)>\s*[{<]`),
		pat([]string{"<function_calls>", "<function_calls>"}, `<(?:antml:)?function_calls>\s*<(?:antml:)?invoke\b`),
		pat([]string{"</user>", "</human>", "</assistant>", "</tool_result>", "</function_results>"},
			`</(?:user|human|assistant|tool_result|function_results)>\s*<(?:system|assistant|developer|admin|user|human)>`),
		pat([]string{"[inst]"}, `\[inst\][^\n]{0,300}?(?:<<sys>>|\[/inst\])`),
		pat([]string{"<<sys>>"}, `<<sys>>`),
		pat([]string{"<|start|>", "<|message|>", "<|channel|>", "<|constrain|>"}, `<\|(?:start|message|channel|constrain)\|>`),
		pat([]string{"<system-reminder>", "<system_reminder>"}, `<system[-_]reminder>`),
		pat([]string{"<start_of_turn>"}, `<start_of_turn>\s*(?:user|model|system)\b`),
		// Any special-token-shaped string (<|name|>), and the DeepSeek
		// family's fullwidth-bar tokens (<｜User｜>, <｜tool▁calls▁begin｜>).
		pat([]string{"<|"}, `<\|[a-z][a-z0-9_\x{2581}-]{1,40}\|>`),
		pat([]string{"<\uff5c"}, `<\x{ff5c}[^\x{ff5c}\n>]{1,40}\x{ff5c}>`),
		// Mistral's bracketed control tokens.
		pat([]string{"[system_prompt]", "[/system_prompt]", "[available_tools]", "[tool_calls]", "[tool_results]", "[/inst]"},
			`\[/?(?:system_prompt|available_tools|tool_calls|tool_results|inst)\]`),
		// Role and tool-result tags that open a turn the model did not
		// write: a system or developer turn, a tool or function result.
		pat([]string{"<system>", "<system_prompt>", "<developer>", "<tool_response>", "<tool_result>", "<tool_output>", "<function_results>", "<function_result>", "<function_response>"},
			`<(?:system|system_prompt|developer|tool_response|tool_result|tool_output|function_results?|function_response)>`),
		// Anthropic's legacy turn prefixes: a Human: line answered by an
		// Assistant: line.
		{anchors: []string{"human:"}, find: findTurnPair},
		// Chat-API message and tool-call objects written out as JSON.
		pat([]string{`"role"`}, `"role"\s*:\s*"(?:system|developer|tool)"\s*,\s*"content"\s*:`),
		pat([]string{`"tool_calls"`, `"function_call"`}, `"(?:tool_calls|function_call)"\s*:\s*[\[{]`),
	}},
	{id: RuleExfiltrate, what: "secret exfiltration", pats: []injPattern{
		// A well-known secret store or an environment dump, and on its
		// line (or the next) a sink: the agent's own output, a pipe to a
		// network client, a URL or a server.
		{anchors: credAnchors, find: findCredSink},
	}},
	{id: RuleOverride, what: "instruction override", pats: []injPattern{
		// Noun × verb × qualifier classes per language, and the agent's
		// instructions declared void (injlang.go).
		{anchors: lexiconAnchors(), find: findLangOverride},
		{anchors: voidAnchors, find: findVoided},
		// Verb classes × object classes.
		{anchors: overrideVerbs, re: lazyre.New(`(?i)^(?:` + overrideVerbRe + `)\s+(?:` + overrideObjRe + `)`), negatable: true},
		// The instructions declared void.
		pat([]string{"previous instructions", "prior instructions", "earlier instructions", "original instructions", "above instructions",
			"previous rules", "prior rules", "previous guidelines", "prior guidelines"},
			`(?:previous|prior|earlier|original|above)\s+(?:instructions|rules|guidelines|guidance|directions)\s+(?:(?:are|is|were|have\s+been|has\s+been)\s+(?:now\s+|hereby\s+)?(?:void|null|cancel+ed|revoked|obsolete|invalid|outdated|superseded|overridden|rescinded|lifted|suspended|no\s+longer\s+(?:valid|applicable|in\s+effect|relevant))|(?:no\s+longer|do\s+not|don't)\s+apply)\b`),
		// Languages other than English (text normalised: lower case,
		// combining marks dropped, so accents are optional).
		pat([]string{"ignora", "ignore", "ignorez", "ignoriere", "ignorieren", "ignoreer", "olvida", "olvide", "oublie", "oubliez", "vergiss", "vergessen", "esqueca", "esqueça", "dimentica", "ignoruj", "zignoruj", "negeer"},
			`(?:ignora(?:r|te|d)?|ignore|ignorez|ignoriere|ignorieren|ignoreer|olvida|olvide|oublie[rz]?|vergiss|esque(?:c|ç)a|dimentica|z?ignoruj|negeer)\s+(?:(?:todas?|todos|tutte|tutti|toutes?|tous|alle|all|die|le|les|las|los|as|os|wszystkie|de|het|previas|vorherigen|bisherigen)\s+)*`+
				`(?:(?:las|los|le|les|die|as|os|de|het|tes|vos|deine|ihre|seine|tus|sus|suas)\s+)?(?:anteriores\s+|precedenti\s+|pr[eé]c[eé]dentes\s+|vorherigen\s+|bisherigen\s+|vorigen\s+|poprzednie\s+|eerdere\s+|vorige\s+)?`+
				`(?:instrucciones|instru(?:ç|c)(?:õ|o)es|istruzioni|instructions|consignes|anweisungen|instruktionen|anordnungen|regeln|instrukcje|polecenia|instructies|regras|reglas|regole|r[eè]gles|indicaciones|indica(?:ç|c)(?:õ|o)es|indicazioni)`),
		pat([]string{"игнорир", "Игнорир", "забудь", "Забудь", "проигнорир", "Проигнорир"},
			`(?:про)?игнорир\S*\s+(?:все\s+|всё\s+)?(?:предыдущие|прежние|прошлые|предшествующие|вышеуказанные|эти|свои|твои)?\s*(?:инструкции|указания|правила|команды)|забудь(?:те)?\s+(?:все\s+|всё\s+)?(?:предыдущие|прежние|свои|твои|эти)?\s*(?:инструкции|указания|правила|что\s+тебе\s+говорили)`),
		pat([]string{"не обращай", "Не обращай"}, `не\s+обращай(?:те)?\s+внимания\s+на\s+(?:все\s+)?(?:предыдущие|прежние|эти|свои|твои)?\s*(?:инструкции|указания|правила)`),
		pat([]string{"önceki", "Önceki", "tüm", "Tüm"}, `(?:önceki|tüm)\s+(?:tüm\s+|önceki\s+)?(?:talimatları|talimatlari|kuralları|komutları)\s+(?:unut|yok\s+say|görmezden\s+gel)`),
		pat([]string{"忽略", "无视", "忽視", "忽视", "無視", "不要理会", "别管"},
			`(?:忽略|无视|忽视|忽視|無視|不要理会|别管)(?:掉)?(?:你)?[之以上先前面所有全部一切此述的]{1,8}(?:指令|指示|说明|規則|规则|提示|命令|要求|設定|设定)`),
		pat([]string{"以前の", "これまでの", "上記の", "前の", "すべての", "全ての"},
			`(?:以前の|これまでの|上記の|前の|すべての|全ての)(?:すべての|全ての)?(?:指示|命令|指令|ルール|プロンプト|設定)(?:を|は)(?:すべて|全て)?(?:無視|忘れ)`),
		pat([]string{"이전", "위의", "앞의", "모든"},
			`(?:이전(?:의)?|위의|앞의|모든)\s*(?:모든\s*)?(?:지시|명령|지침|규칙|프롬프트)(?:사항)?(?:을|를|은|는)?\s*(?:모두\s*)?(?:무시|잊어)`),
		pat([]string{"abaikan", "lupakan"}, `(?:abaikan|lupakan)\s+(?:semua\s+)?(?:instruksi|perintah|aturan)(?:\s+sebelumnya)?`),
		pat([]string{"bỏ qua", "hãy bỏ qua"}, `(?:hãy\s+)?bỏ\s+qua\s+(?:tất\s+cả\s+)?(?:các\s+)?(?:hướng\s+dẫn|chỉ\s+dẫn|lệnh|quy\s+tắc)`),
	}},
}

// findTurnPair matches a "Human:" turn prefix starting a line (after
// spaces) that an "Assistant:" line answers within injSpan bytes.
func findTurnPair(t []byte, at, end int) (int, int, bool) {
	ls := bytes.LastIndexByte(t[:at], '\n') + 1
	if len(bytes.TrimSpace(t[ls:at])) != 0 {
		return 0, 0, false
	}
	for off := at; off < end; {
		i := bytes.IndexByte(t[off:end], '\n')
		if i < 0 {
			break
		}
		off += i + 1
		j, _ := skipSpaces(t, off, end)
		if hasPrefixFold(t, j, end, "assistant:") {
			return at, j + len("assistant:"), true
		}
	}
	return 0, 0, false
}

// overrideVerbs anchor the verb-class override pattern.
var overrideVerbs = []string{"ignore", "disregard", "overlook", "forget", "set aside", "put aside", "cast aside", "discard", "dismiss",
	"throw out", "pay no attention", "stop following", "no longer follow", "override", "bypass", "abandon", "neglect", "nevermind", "never mind"}

const overrideVerbRe = `ignore|disregard|overlook|forget(?:\s+about)?|(?:set|put|cast)\s+aside|discard|dismiss|throw\s+out|pay\s+no\s+attention\s+to|stop\s+following|no\s+longer\s+follow|override|bypass|abandon|neglect|never\s*mind`

// overrideObjRe is what an override sets aside: the agent's instructions
// however named, or everything it was told.
const overrideObjRe = `(?:everything|all|anything)\s+(?:(?:that\s+)?(?:you\s+(?:were|have\s+been|'ve\s+been|got)\s+(?:told|given|instructed|asked|taught)|(?:was\s+)?(?:written|said|stated|mentioned|given)\s+(?:above|before|earlier|previously)|(?:above|before|so\s+far|until\s+now|previously|prior))\b)` +
	`|(?:the|any|all|every|your|these|those)\s+(?:[a-z'-]+\s+){0,2}?(?:instructions?|guidance|guidelines|directions|directives?|orders|commands|rules|prompts?|policies|constraints|restrictions|programming)\s+(?:(?:that\s+)?you\s+(?:were|have\s+been|'ve\s+been|got|have\s+received|received)(?:\s+(?:given|told|provided))?|(?:given|provided)\s+(?:to\s+you\s+)?(?:above|before|earlier|previously|so\s+far)|(?:that\s+)?(?:came|come|appeared?|were\s+(?:written|given))\s+(?:before|above|earlier|previously)|(?:above|so\s+far|until\s+now)\b)` +
	`|(?:the\s+|all\s+(?:of\s+)?(?:the\s+)?)?(?:above|foregoing|preceding)(?:\s+(?:instructions|guidance|rules|text|content|directions))?\s*(?:[.,;:!]|$|and\b|then\b)` +
	`|what\s+you\s+(?:were|have\s+been|'ve\s+been)\s+(?:told|given|instructed|asked)` +
	`|what\s+(?:was|is)\s+(?:written|said|stated)\s+(?:above|before|earlier)` +
	`|(?:your|the|all|any)\s+(?:previous|prior|earlier|original|initial|system|developer|safety|existing|current)\s+(?:[a-z'-]+\s+){0,2}?(?:instructions?|guidance|guidelines|directions|directives?|orders|commands|rules|prompts?|policies|constraints|restrictions|programming)\b`

// credAnchors are the secret stores and environment dumps of the
// credential-exfiltration pattern.
var credAnchors = []string{"~/.aws", ".aws/credentials", "~/.ssh", ".ssh/id_", "id_rsa", "id_ed25519", "id_ecdsa", ".netrc",
	".git-credentials", ".docker/config.json", ".kube/config", ".npmrc", ".pypirc", "/proc/self/environ", "/etc/shadow",
	"hosts.yml", "gh auth token", "$github_token", "${github_token}", "$gh_token", "$npm_token", "$anthropic_api_key", "$openai_api_key",
	"$aws_secret_access_key", "$aws_access_key_id", "$pypi_token", "$docker_password", "printenv", "`env", "env |", "env|", "os.environ", "process.env", "environment variable", "secrets.", "git credential fill"}

// credTargetLen returns the length of the secret store or dump at t[at]
// (an anchor of credAnchors), or 0 when the anchor is not read as one
// there: env must be a command (piped, quoted, or ending its line),
// secrets.X must name a token, key, secret, password or PAT, and
// "environment variables" must be all of them.
func credTargetLen(t []byte, at int) int {
	rest := t[at:min(len(t), at+64)]
	switch {
	case hasPrefixFold(rest, 0, len(rest), "environment variable"):
		from := max(0, at-16)
		before := bytes.ToLower(t[from:at])
		if bytes.HasSuffix(bytes.TrimRight(before, " "), []byte("all")) || bytes.Contains(before, []byte("every")) ||
			bytes.Contains(before, []byte("each")) || bytes.Contains(before, []byte("all the")) || bytes.Contains(before, []byte("all your")) {
			if hasPrefixFold(rest, 0, len(rest), "environment variables") {
				return len("environment variables")
			}
			return len("environment variable")
		}
		return 0
	case rest[0] == '`' && hasPrefixFold(rest, 1, len(rest), "env"):
		if len(rest) > 4 && (rest[4] == '`' || rest[4] == ' ' || rest[4] == '|') {
			return 4
		}
		return 0
	case hasPrefixFold(rest, 0, len(rest), "env") && !hasPrefixFold(rest, 0, len(rest), "environment"):
		if at > 0 {
			switch t[at-1] {
			case '.', '/', '-', '_', '$', '{', '<':
				return 0 // a file name (code.env), a path, a variable
			}
		}
		j, _ := skipSpaces(rest, 3, len(rest))
		if j >= len(rest) {
			return 3
		}
		switch rest[j] {
		case '|':
			// a pipe into a command, not a table cell
			if k, _ := skipSpaces(rest, j+1, len(rest)); k < len(rest) && isASCIILetter(rest[k]) {
				return 3
			}
			return 0
		case '`', '\'', '"', '\n', ')':
			return 3
		}
		if hasPrefixFold(rest, j, len(rest), "command") || hasPrefixFold(rest, j, len(rest), "output") {
			return 3
		}
		return 0
	case hasPrefixFold(rest, 0, len(rest), "secrets."):
		j := len("secrets.")
		for j < len(rest) && (isWordByte(rest[j]) || rest[j] == '-') {
			j++
		}
		name := string(bytes.ToLower(rest[len("secrets."):j]))
		for _, w := range [...]string{"token", "key", "secret", "password", "pat"} {
			if strings.Contains(name, w) {
				return j
			}
		}
		return 0
	case hasPrefixFold(rest, 0, len(rest), "process.env") || hasPrefixFold(rest, 0, len(rest), "os.environ"):
		// the whole mapping, not one variable of it
		k := len("process.env")
		if rest[0] == 'o' || rest[0] == 'O' {
			k = len("os.environ")
		}
		if k < len(rest) && (rest[k] == '.' || rest[k] == '[') {
			return 0
		}
		return k
	}
	for _, a := range credAnchors {
		if hasPrefixFold(rest, 0, len(rest), a) {
			if k := bytes.IndexAny(rest[len(a):], " \t\n\"'`)"); hasPrefixFold(rest, len(a), len(rest), ".pub") || k >= 0 && bytes.HasSuffix(rest[len(a):len(a)+k], []byte(".pub")) {
				return 0 // a public key
			}
			return len(a)
		}
	}
	return 0
}

// credSink is where the secret goes.
var credSink = lazyre.New(`(?i)\|[^\n]{0,60}?\b(?:curl|wget|nc|ncat|netcat|socat)\b` +
	`|\b(?:include|put|paste|add|append|embed|attach|post|send|upload|exfiltrate|transmit|forward|share|report|echo|write|print|copy|output|return|dump)\b[^\n]{0,100}?` +
	`(?:\b(?:in(?:to)?|to|with|as|inside|at\s+the\s+end\s+of)\s+(?:your|the|a)\s+(?:[a-z-]+\s+){0,2}?(?:output|result|response|reply|answer|summary|comment|report|message|pr|pull\s+request|commit(?:\s+message)?|issue|description|body|log|release\s+notes|changelog|notes)\b` +
	`|https?://|\bto\s+(?:my|our|this|that|an?|the)\s+(?:[a-z-]+\s+)?(?:server|webhook|endpoint|url|host|bucket|channel)\b|\b(?:webhook|pastebin|ngrok|requestbin|interact\.sh|burpcollaborator)\b)` +
	`|\b(?:curl|wget)\b[^\n]{0,160}?https?://`)

// credVerb is a verb handing something over, before the secret.
var credVerb = lazyre.New(`(?i)\b(?:include|put|paste|add|append|embed|attach|post|send|upload|exfiltrate|transmit|forward|share|copy|output|return|dump|leak|list|print|show|quote|reproduce|write|report)\b`)

// credDest is where it goes, right after the secret.
var credDest = lazyre.New(`(?i)^[^\n]{0,60}?\b(?:(?:in(?:to)?|to|with|as|inside|at\s+the\s+end\s+of)\s+(?:your|the|a)\s+(?:[a-z-]+\s+){0,2}?(?:output|result|response|reply|answer|summary|comment|report|message|pr|pull\s+request|commit(?:\s+message)?|issue|description|body|log|release\s+notes|changelog|notes)\b|to\s+https?://|to\s+(?:my|our|this|that|an?|the)\s+(?:[a-z-]+\s+)?(?:server|webhook|endpoint|url|host|bucket|channel)\b)`)

// credDestPre is the agent's output named before the verb that puts the
// secret in it.
var credDestPre = lazyre.New(`(?i)\b(?:in(?:to)?|inside|at\s+the\s+end\s+of)\s+(?:your|the|a)\s+(?:[a-z-]+\s+){0,2}?(?:output|result|response|reply|answer|summary|comment|report|message|pr|pull\s+request|description|body|release\s+notes|changelog|notes)\b`)

// credNegation on the text before the sink makes it a prohibition ("never
// include ~/.ssh/id_rsa in your output").
var credNegation = lazyre.New(`(?i)\b(?:never|not|don't|do\s+not|must\s+not|mustn't|avoid|without|no\s+need|prevent|forbid(?:den)?|refuse)\b`)

// findCredSink matches the credential-exfiltration pattern at the anchor
// t[at:]: a secret store there, and a sink after it on its line or the
// next, with no negation in between or before it on its line. It returns
// the matched range, or ok false.
func findCredSink(t []byte, at, end int) (s, e int, ok bool) {
	n := credTargetLen(t, at)
	if n == 0 {
		return 0, 0, false
	}
	loc := []int{0, n}
	ls := bytes.LastIndexByte(t[:at], '\n') + 1
	le := len(t)
	if i := bytes.IndexByte(t[at:], '\n'); i >= 0 {
		le = at + i
		if j := bytes.IndexByte(t[le+1:], '\n'); j >= 0 {
			le = le + 1 + j
		} else {
			le = len(t)
		}
	}
	le = min(le, at+injSpan)
	after := at + loc[1]
	sk := credSink.FindIndex(t[after:le])
	if sk == nil {
		if s, ok := credBefore(t, ls, at); ok && !credNegation.Match(t[max(ls, s-120):s]) {
			return s, after, true
		}
		if e, ok := credAfterMore(t, at, n, le); ok && !credNegation.Match(t[max(ls, at-120):e]) {
			return at, e, true
		}
		// The verb before the secret, the destination after it ("upload
		// ~/.netrc to https://…", "attach … to your reply").
		from := max(ls, at-80)
		v := credVerb.Get().FindAllIndex(t[from:at], -1)
		d := credDest.FindIndex(t[after:le])
		if v != nil && d == nil {
			// The destination before the verb ("in your final summary,
			// list every environment variable").
			if p := credDestPre.Get().FindIndex(t[ls : from+v[len(v)-1][0]]); p != nil {
				if credNegation.Match(t[max(ls, at-120):at]) {
					return 0, 0, false
				}
				return ls + p[0], after, true
			}
		}
		if v == nil || d == nil {
			return 0, 0, false
		}
		if credNegation.Match(t[max(ls, at-120) : from+v[len(v)-1][0]]) {
			return 0, 0, false
		}
		return from + v[len(v)-1][0], after + d[1], true
	}
	if credNegation.Match(t[max(ls, at-120) : after+sk[0]]) {
		return 0, 0, false
	}
	return at, after + sk[1], true
}

// negatedBefore reports whether the word before t[at] is a negation: "do
// not", "don't", "never", "not" (after spaces and emphasis characters).
func negatedBefore(t []byte, at int) bool {
	i := at
	for i > 0 && (reSpace(t[i-1]) || t[i-1] == '*' || t[i-1] == '_') {
		i--
	}
	w := i
	for w > 0 && (isWordByte(t[w-1]) || t[w-1] == '\'') {
		w--
	}
	switch string(bytes.ToLower(t[w:i])) {
	case "not", "don't", "never", "dont", "won't", "shouldn't", "mustn't", "cannot", "can't", "t":
		return true
	}
	return false
}

// canonRule returns the index of the first entry of injRules with rule
// i's id: rules extended in several entries count as one.
func canonRule(i int) int {
	for j := 0; j < i; j++ {
		if injRules[j].id == injRules[i].id {
			return j
		}
	}
	return i
}

// negated marks a pattern negatable: a prohibition ("never ignore previous
// instructions") is not an override.
func (p injPattern) negated() injPattern {
	p.negatable = true
	return p
}
