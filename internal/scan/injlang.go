package scan

import (
	"bytes"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/fullsend-ai/fullsend/internal/lazyre"
)

// Overrides as classes rather than phrases. Two detectors extend
// RuleOverride:
//
//   - overrideLexicon: per language, an instruction noun (the anchor), a
//     setting-aside verb and a qualifier that points back at what came
//     before ("previous", "all", "above") in the same sentence, in any
//     order: word order differs between languages (the verb ends the
//     sentence in Japanese, Korean, Hindi, Persian, Turkish, Bengali).
//   - voidedInstructions (English): a reference to the agent's own
//     instructions ("your guidelines", "the directives you received", "the
//     system prompt", "whatever you were told") and, in the same sentence
//     or the next, a predicate that sets them aside ("are void", "have
//     been superseded", "let go of", "does not bind you", "act as though
//     you never received").

// overrideLang is one language's classes (lower case; a word stem matches
// any word it starts).
type overrideLang struct {
	nouns, verbs, quals []string
}

// overrideLexicon covers the most common languages of the web (by share of
// web content) and of speakers, beside English: Spanish, German, Japanese,
// French, Russian, Portuguese, Italian, Dutch, Polish, Turkish, Chinese,
// Persian, Vietnamese, Indonesian, Czech, Korean, Ukrainian, Arabic,
// Hungarian, Greek, Swedish, Romanian, Hebrew, Thai, Hindi and Bengali.
var overrideLexicon = []overrideLang{
	{ // Spanish
		nouns: []string{"instrucciones", "instrucción", "instruccion", "órdenes", "ordenes", "reglas", "directrices", "pautas", "lo que te dij", "lo que se te dijo", "lo que te han dicho"},
		verbs: []string{"ignor", "olvid", "descart", "desestim", "omit", "pasa por alto", "no hagas caso", "no tengas en cuenta", "haz caso omiso"},
		quals: []string{"anterior", "previa", "previo", "todo", "toda", "todos", "todas", "arriba", "antes", "tus", "sus"},
	},
	{ // Portuguese
		nouns: []string{"instruções", "instrucoes", "instrução", "orientações", "orientacoes", "regras", "diretrizes", "comandos", "o que te disseram", "o que lhe disseram"},
		verbs: []string{"ignor", "esqueç", "esquec", "desconsider", "descart", "despreze", "não siga", "nao siga"},
		quals: []string{"anterior", "prévia", "previa", "todo", "toda", "todos", "todas", "acima", "antes", "suas"},
	},
	{ // French
		nouns: []string{"instructions", "consignes", "directives", "règles", "regles", "ordres", "ce qu'on t'a dit", "ce qu'on vous a dit"},
		verbs: []string{"ignor", "oubli", "ne tiens plus compte", "ne tenez plus compte", "ne plus tenir compte", "ne tiens pas compte", "ne tenez pas compte", "fais abstraction", "faites abstraction", "néglig", "neglig", "écarte", "ecarte"},
		quals: []string{"précédent", "precedent", "antérieur", "anterieur", "tout", "toutes", "ci-dessus", "vos", "tes", "plus haut"},
	},
	{ // German
		nouns: []string{"anweisung", "instruktion", "regeln", "vorgaben", "richtlinien", "befehle", "anordnungen", "was dir gesagt", "was man dir gesagt"},
		verbs: []string{"ignorier", "vergiss", "vergessen", "missacht", "außer acht", "ausser acht", "verwirf", "nicht beachten", "beachte nicht", "beachten sie nicht", "übergeh"},
		quals: []string{"vorherig", "bisherig", "früher", "frueher", "obig", "alle", "sämtlich", "saemtlich", "deine", "ihre", "vorig", "zuvor"},
	},
	{ // Italian
		nouns: []string{"istruzioni", "regole", "direttive", "comandi", "quello che ti è stato detto"},
		verbs: []string{"ignor", "dimentic", "trascur", "non considerare", "non tenere conto", "lascia perdere"},
		quals: []string{"precedent", "tutti", "tutte", "tutto", "sopra", "prima", "tue", "sue"},
	},
	{ // Dutch
		nouns: []string{"instructies", "regels", "aanwijzingen", "richtlijnen", "opdrachten"},
		verbs: []string{"negeer", "vergeet", "houd geen rekening", "sla", "laat"},
		quals: []string{"eerdere", "vorige", "alle", "bovenstaande", "je ", "jouw"},
	},
	{ // Polish
		nouns: []string{"instrukcj", "polece", "zasad", "wytyczn", "reguł"},
		verbs: []string{"ignoruj", "zignoruj", "zapomnij", "pomiń", "pomin", "nie zwracaj uwagi", "odrzuć", "odrzuc"},
		quals: []string{"poprzedni", "wcześniejsz", "wczesniejsz", "wszystk", "powyższ", "powyzsz", "swoje", "twoje"},
	},
	{ // Russian
		nouns: []string{"инструкци", "указани", "правил", "команд", "распоряжени", "что тебе говорили", "что тебе сказали"},
		verbs: []string{"игнорир", "проигнорир", "забудь", "забыть", "не обращай", "отбрось", "пренебреги", "не учитывай", "не следуй"},
		quals: []string{"предыдущ", "прежн", "все", "всё", "выше", "вышеуказ", "свои", "твои", "прошл", "ранее"},
	},
	{ // Ukrainian
		nouns: []string{"інструкці", "вказівк", "правил", "команд"},
		verbs: []string{"ігнору", "проігнору", "забудь", "не зважай", "відкинь", "не виконуй"},
		quals: []string{"попередн", "усі", "всі", "вище", "свої", "твої"},
	},
	{ // Czech
		nouns: []string{"pokyn", "instrukc", "pravidl", "příkaz", "prikaz"},
		verbs: []string{"ignoruj", "zapomeň", "zapomen", "nedbej", "nevšímej", "nevsimej", "neřiď se", "nerid se"},
		quals: []string{"předchozí", "predchozi", "všechn", "vsechn", "dřívější", "drivejsi", "výše", "vyse", "své", "tvé"},
	},
	{ // Turkish
		nouns: []string{"talimat", "kural", "komut", "yönerge", "yonerge", "söylenen", "soylenen"},
		verbs: []string{"unut", "yok say", "görmezden gel", "gormezden gel", "dikkate alma", "boşver", "bosver", "önemseme", "onemseme"},
		quals: []string{"önceki", "onceki", "tüm", "tum", "bütün", "butun", "yukarıdaki", "yukaridaki", "sana"},
	},
	{ // Swedish
		nouns: []string{"instruktion", "regler", "anvisning", "direktiv"},
		verbs: []string{"ignorera", "glöm", "glom", "bortse från", "strunta i"},
		quals: []string{"tidigare", "alla", "ovanstående", "föregående", "dina"},
	},
	{ // Romanian
		nouns: []string{"instrucțiun", "instrucţiun", "instructiun", "reguli", "comenzi"},
		verbs: []string{"ignor", "uită", "uita", "nu ține cont", "nu tine cont", "nu lua în seamă"},
		quals: []string{"anterioar", "toate", "precedent", "de mai sus", "tale"},
	},
	{ // Hungarian
		nouns: []string{"utasítás", "utasitas", "szabály", "szabaly", "parancs", "útmutatás"},
		verbs: []string{"figyelmen kívül", "figyelmen kivul", "felejtsd", "ne törődj", "ne torodj", "hagyd figyelmen"},
		quals: []string{"korábbi", "korabbi", "összes", "osszes", "előző", "elozo", "fenti", "minden"},
	},
	{ // Greek
		nouns: []string{"οδηγί", "οδηγι", "εντολ", "κανόν", "κανον"},
		verbs: []string{"αγνόησ", "αγνοησ", "αγνόη", "ξέχασ", "ξεχασ", "παράβλεψ", "παραβλεψ"},
		quals: []string{"προηγούμεν", "προηγουμεν", "όλ", "ολ", "παραπάνω", "παραπανω"},
	},
	{ // Arabic
		nouns: []string{"التعليمات", "تعليمات", "الأوامر", "الاوامر", "أوامر", "القواعد", "الإرشادات", "الارشادات", "التوجيهات"},
		verbs: []string{"تجاهل", "تناس", "انس ", "اترك", "لا تلتزم", "لا تتبع", "أهمل", "اهمل"},
		quals: []string{"السابقة", "السابق", "جميع", "كل", "أعلاه", "اعلاه"},
	},
	{ // Hebrew
		nouns: []string{"הוראות", "ההוראות", "הנחיות", "ההנחיות", "כללים", "הכללים"},
		verbs: []string{"התעלם", "תתעלם", "התעלמי", "שכח", "תשכח"},
		quals: []string{"הקודמות", "הקודמים", "כל", "לעיל", "הקודם"},
	},
	{ // Persian (the zero-width non-joiner of "دستورالعمل\u200cها" is part of the word)
		nouns: []string{"دستورالعمل", "دستورات", "دستور", "قوانین", "قواعد", "راهنمایی"},
		verbs: []string{"نادیده", "فراموش", "توجه نکن", "اعتنا نکن"},
		quals: []string{"قبلی", "همه", "تمام", "بالا", "پیشین", "گذشته"},
	},
	{ // Hindi
		nouns: []string{"निर्देश", "नियम", "आदेश", "हिदायत"},
		verbs: []string{"अनदेखा", "नज़रअंदाज़", "नजरअंदाज", "भूल", "उपेक्षा", "ध्यान न"},
		quals: []string{"पिछले", "पिछली", "सभी", "सारे", "पहले", "ऊपर", "पूर्व"},
	},
	{ // Bengali
		nouns: []string{"নির্দেশ", "নিয়ম", "আদেশ"},
		verbs: []string{"উপেক্ষা", "ভুলে", "অগ্রাহ্য", "পাত্তা দিও না"},
		quals: []string{"আগের", "সব", "পূর্ববর্তী", "উপরের"},
	},
	{ // Thai
		nouns: []string{"คำสั่ง", "คำแนะนำ", "กฎ"},
		verbs: []string{"ไม่ต้องสนใจ", "เพิกเฉย", "ลืม", "ละเว้น", "ละทิ้ง"},
		quals: []string{"ก่อนหน้า", "ทั้งหมด", "ข้างต้น", "เดิม"},
	},
	{ // Japanese
		nouns: []string{"指示", "命令", "指令", "ルール", "プロンプト", "設定", "規則"},
		verbs: []string{"無視", "忘れ", "従わな"},
		quals: []string{"前の", "以前", "これまで", "上記", "すべて", "全て", "先ほど", "上の"},
	},
	{ // Chinese
		nouns: []string{"指令", "指示", "说明", "說明", "規則", "规则", "提示", "命令", "要求", "設定", "设定"},
		verbs: []string{"忽略", "无视", "無視", "忽视", "忽視", "忘记", "忘記", "不要理会", "不要理會", "别管", "別管", "不用管", "抛开", "拋開"},
		quals: []string{"之前", "以前", "上面", "上述", "所有", "全部", "先前", "前面", "一切"},
	},
	{ // Korean
		nouns: []string{"지시", "명령", "지침", "규칙", "프롬프트"},
		verbs: []string{"무시", "잊어", "잊고", "잊으"},
		quals: []string{"이전", "앞의", "위의", "모든", "앞서", "기존"},
	},
	{ // Indonesian and Malay
		nouns: []string{"instruksi", "perintah", "petunjuk"},
		verbs: []string{"abaikan", "lupakan", "jangan hiraukan", "acuhkan", "jangan ikuti"},
		quals: []string{"sebelumnya", "semua", "di atas", "tadi"},
	},
	{ // Vietnamese (with and without diacritics)
		nouns: []string{"hướng dẫn", "huong dan", "chỉ dẫn", "chi dan", "lệnh", "quy tắc", "quy tac", "chỉ thị", "chi thi"},
		verbs: []string{"bỏ qua", "bo qua", "quên", "phớt lờ", "pho lo", "đừng làm theo", "dung lam theo"},
		quals: []string{"trước", "truoc", "tất cả", "tat ca", "ở trên", "o tren", "cũ"},
	},
}

// langIndex maps each noun anchor of overrideLexicon to its languages.
var langIndex = sync.OnceValue(func() map[string][]int {
	m := map[string][]int{}
	for i, l := range overrideLexicon {
		for _, n := range l.nouns {
			m[n] = append(m[n], i)
		}
	}
	return m
})

// langByFirst lists the noun anchors by their first byte (lower case).
var langByFirst = sync.OnceValue(func() [256][]string {
	var out [256][]string
	for n := range langIndex() {
		out[n[0]] = append(out[n[0]], n)
	}
	return out
})

// lexiconAnchors are the anchors of the lexicon pattern.
func lexiconAnchors() []string {
	var out []string
	for n := range langIndex() {
		out = append(out, n)
	}
	return out
}

// stemAnchor reports whether an anchor of the injection rules is a word
// stem (it may be followed by more letters of its word).
func stemAnchor(kw string) bool {
	_, ok := langIndex()[kw]
	return ok
}

// langWindow bounds how far from the noun the verb and qualifier may be.
const langWindow = 120

// findLangOverride matches the lexicon pattern at the noun anchor t[at:]:
// one of its languages has a verb and a qualifier in the same sentence
// within langWindow bytes either side.
func findLangOverride(t []byte, at, end int) (int, int, bool) {
	var langs []int
	for _, n := range langByFirst()[lowerTable[t[at]]] {
		if hasPrefixFold(t, at, end, n) {
			langs = append(langs, langIndex()[n]...)
		}
	}
	if len(langs) == 0 {
		return 0, 0, false
	}
	s, e := sentenceAround(t, at, langWindow)
	var buf [2*langWindow + 64]byte
	w := buf[:0]
	if isASCII(t[s:e]) {
		w = lowerASCII(w, t[s:e])
	} else {
		w = bytes.ToLower(t[s:e])
	}
	for _, li := range langs {
		l := &overrideLexicon[li]
		v := indexAnyStem(w, l.verbs)
		if v < 0 || indexAnyStem(w, l.quals) < 0 {
			continue
		}
		if negatedBefore(w, v) {
			continue
		}
		return s, e, true
	}
	return 0, 0, false
}

// sentenceAround returns the sentence holding t[at] bounded to max bytes
// either side: it ends at a full stop, question or exclamation mark
// followed by a space (or at an ideographic full stop) and at a blank
// line or a line end.
func sentenceAround(t []byte, at, max int) (int, int) {
	s := at
	for s > 0 && at-s < max {
		c := t[s-1]
		if c == '\n' || c == '|' || (c == '.' || c == '!' || c == '?') && s < len(t) && (t[s] == ' ' || t[s] == '\t') {
			break
		}
		if c >= 0x80 {
			r, sz := utf8.DecodeLastRune(t[:s])
			if r == '。' || r == '！' || r == '？' || r == '।' {
				break
			}
			s -= sz
			continue
		}
		s--
	}
	e := at
	for e < len(t) && e-at < max {
		c := t[e]
		if c == '\n' || c == '|' || (c == '.' || c == '!' || c == '?') && (e+1 == len(t) || t[e+1] == ' ' || t[e+1] == '\n') {
			break
		}
		if c >= 0x80 {
			r, sz := utf8.DecodeRune(t[e:])
			if r == '。' || r == '！' || r == '？' || r == '।' {
				break
			}
			e += sz
			continue
		}
		e++
	}
	return s, e
}

// indexAnyStem returns the offset in w of the first of stems found at the
// start of a word (for stems that start with an ASCII letter), or -1.
func indexAnyStem(w []byte, stems []string) int {
	best := -1
	for _, st := range stems {
		for off := 0; off < len(w); {
			i := bytes.Index(w[off:], []byte(st))
			if i < 0 {
				break
			}
			at := off + i
			if isWordByte(st[0]) && at > 0 && (isWordByte(w[at-1]) || w[at-1] >= 0x80 && !wordBoundaryBefore(w, at)) {
				off = at + 1
				continue
			}
			// A short ASCII stem is a whole word ("tes", "vos", "alle"):
			// as a prefix it would match English words.
			if e := at + len(st); len(st) <= 4 && isWordByte(st[len(st)-1]) && e < len(w) && (isWordByte(w[e]) || w[e] >= 0x80) {
				off = at + 1
				continue
			}
			if best < 0 || at < best {
				best = at
			}
			break
		}
	}
	return best
}

// wordBoundaryBefore reports whether the rune before w[at] is not a letter.
func wordBoundaryBefore(w []byte, at int) bool {
	r, _ := utf8.DecodeLastRune(w[:at])
	return r == utf8.RuneError || !unicode.IsLetter(r)
}

// voidRefAfter is a reference that starts at its noun: "the directives
// you received", "instructions given to you", "the preceding text".
var voidRefAfter = lazyre.New(`(?i)^(?:(?:instructions?|guidance|guidelines|directives?|directions|orders|rules|constraints|restrictions|ones|prompt)\s+(?:that\s+)?(?:you\s+(?:were|have\s+been|'ve\s+been)\s+(?:given|told|provided|sent)|you\s+(?:received|got|have\s+received)|(?:given|provided|sent)\s+to\s+you)\b` +
	`|(?:preceding|foregoing)\s+(?:text|content|messages?|context|conversation)\b` +
	`|whatever\s+your\s+(?:operator|developer|admin|owner|creator|system\s+prompt)s?\s+(?:configured|said|says|told|wrote|set|asked)\b)`)

// voidNext reports whether the word at t[i:] (after spaces) may continue
// a voidRefAfter reference.
func voidNext(t []byte, i, end int) bool {
	j, ok := skipSpaces(t, i, end)
	return ok && anyPrefixFold(t, j, end, []string{"that ", "you ", "given ", "provided ", "sent "})
}

// voidRefBefore is a reference that ends at its last word: "whatever you
// were told", "what your operator configured".
var voidRefBefore = lazyre.New(`(?i)(?:whatever|what|everything|anything)\s+(?:you\s+(?:were|have\s+been|'ve\s+been)\s+(?:told|given|instructed)|your\s+(?:operator|developer|admin|owner|creator|system\s+prompt)s?\s+(?:configured|said|says|told|wrote|set|asked))$`)

// voidNouns are the instruction nouns a possessive reference ends with
// ("your previous guidance", "the system prompt").
var voidNouns = map[string]bool{"instructions": true, "instruction": true, "guidance": true, "guidelines": true, "directive": true,
	"directives": true, "directions": true, "orders": true, "rules": true, "constraints": true, "restrictions": true,
	"programming": true, "policies": true, "prompt": true, "ones": true}

// voidRef returns the reference to the agent's own instructions at anchor
// t[at:], or ok false: a noun of voidNouns with "your" (or "system")
// among the four words before it, a voidRefAfter match, or a
// voidRefBefore match ending at the anchor.
func voidRef(t []byte, at, end int) (int, int, bool) {
	w := at
	for w < end && isWordByte(t[w]) {
		w++
	}
	var buf [16]byte
	word := lowerASCII(buf[:0], t[at:min(w, at+16)])
	if string(word) == "preceding" || string(word) == "whatever" || voidNext(t, w, end) {
		if loc := voidRefAfter.FindIndex(t[at:end]); loc != nil {
			return at, at + loc[1], true
		}
	}
	if !voidNouns[string(word)] {
		if loc := voidRefBefore.FindIndex(t[max(0, at-64):w]); loc != nil {
			return max(0, at-64) + loc[0], w, true
		}
		return 0, 0, false
	}
	// Up to four words back, on the same line.
	i := at
	for n := 0; n < 4 && i > 0; n++ {
		for i > 0 && (t[i-1] == ' ' || t[i-1] == '\t') {
			i--
		}
		j := i
		for j > 0 && (isWordByte(t[j-1]) || t[j-1] == '\'' || t[j-1] == '-') {
			j--
		}
		if j == i {
			break
		}
		switch {
		case i-j == 4 && hasPrefixFold(t, j, i, "your"):
			return j, w, true
		case i-j == 6 && hasPrefixFold(t, j, i, "system"):
			if string(word) == "prompt" || n == 0 && string(word) != "ones" {
				return j, w, true
			}
		}
		i = j
	}
	return 0, 0, false
}

// voidAnchors are the words a voidRef match holds; the reference is
// searched in the sentence around one.
var voidAnchors = []string{"instructions", "instruction", "guidance", "guidelines", "directive", "directives", "directions",
	"rules", "constraints", "prompt", "ones", "told", "whatever", "preceding"}

// voidPred is what sets the referenced instructions aside.
var voidPred = lazyre.New(`(?i)\b(?:ignor(?:e|es|ed|ing)|disregard(?:s|ed|ing)?|overlook(?:s|ed|ing)?|forg(?:et|ets|etting|ot|otten)|discard(?:s|ed|ing)?|dismiss(?:es|ed|ing)?|abandon(?:s|ed|ing)?|drop(?:s|ped|ping)?|eras(?:e|es|ed|ing)|wip(?:e|es|ed|ing)|scrap(?:s|ped)?|ditch(?:es|ed)?|revok(?:e|es|ed|ing)|rescind(?:s|ed)?|cancel(?:s|led|ed|ling)?|nullif(?:y|ied|ies)|void(?:ed)?|null|invalid(?:ated)?|obsolete|outdated|supersed(?:e|es|ed|ing)|overrid(?:e|es|den|ing)|overrul(?:e|es|ed)|replaced` +
	`|let\s+go\s+of|set\s+aside|put\s+aside|throw\s+(?:out|away)|no\s+longer\s+(?:apply|applies|valid|binding|binds?|in\s+(?:effect|force)|relevant|matters?|counts?|bound|follow)` +
	`|(?:do|does|did)(?:n't|\s+not)\s+(?:apply|bind|matter|count)|not\s+(?:take|taking)\s+into\s+account|(?:were|was|is|are)\s+(?:only|just|merely)\s+a\s+test` +
	`|(?:have|has)\s+(?:changed|been\s+(?:changed|updated|replaced|lifted|removed|withdrawn))|(?:as\s+(?:though|if)\s+)?you\s+never\s+(?:received|got|had|saw)|(?:was|were)\s+never\s+there` +
	`|(?:rather|instead)\s+than\s+(?:following|obeying)|instead\s+of\s+(?:following|obeying)|not\s+bound)\b`)

// voidPredHeads finds, case-insensitively, a substring every voidPred
// match holds: a cheap test before the regular expression.
var voidPredHeads = sync.OnceValue(func() *kwMatcher {
	return newKWMatcher([]string{"ignor", "disregard", "overlook", "forg", "discard", "dismiss", "abandon", "drop", "eras", "wip",
		"scrap", "ditch", "revok", "rescind", "cancel", "nullif", "void", "null", "invalid", "obsolete", "outdated", "supersed",
		"overrid", "overrul", "replaced", "aside", "let go", "throw", "no longer", "apply", "bind", "matter", "count", "account",
		"a test", "changed", "updated", "lifted", "removed", "withdrawn", "never", "rather than", "instead", "bound"})
})

// voidAux is a copula or auxiliary between a reference and a predicate
// that follows it.
var voidAux = lazyre.New(`(?i)\b(?:are|is|were|was|be|been|being|have|has|had|hereby|now)\b`)

// voidDeclare is a verb that declares its object something ("treat … as
// void", "consider … revoked").
var voidDeclare = lazyre.New(`(?i)\b(?:treat|consider|regard|deem|declare|mark|count|view)\b`)

// voidSelfAux is a predicate that carries its own verb.
var voidSelfAux = lazyre.New(`(?i)^(?:no\s|not\s|do|does|did|have|has|were|was|is|are|never|as\s|you\s|rather|instead)`)

// findVoided matches the voided-instructions pattern at anchor t[at:].
func findVoided(t []byte, at, end int) (int, int, bool) {
	rs, re, ok := voidRef(t, at, end)
	if !ok {
		return 0, 0, false
	}
	ref := []int{rs, re}
	s, e := sentenceAround(t, at, 160)
	// The predicate: in the sentence, or at the start of the next one
	// ("… were only a test. Abandon them").
	if ne := e; ne < len(t) && t[ne] != '\n' {
		_, e2 := sentenceAround(t, min(len(t)-1, ne+2), 80)
		if e2 > ne+2 {
			e = e2
		}
	}
	if !voidPredHeads().any(t[s:e]) {
		return 0, 0, false
	}
	for _, p := range voidPred.Get().FindAllIndex(t[s:e], -1) {
		ps := s + p[0]
		if negatedBefore(t, ps) && !bytes.HasPrefix(bytes.ToLower(t[ps:]), []byte("not")) {
			continue
		}
		// After the reference, the predicate says something of it ("are
		// void", "have been superseded", "no longer apply"); right after
		// it, a bare verb-like word is a compound noun ("system prompt
		// overrides").
		if ps >= ref[1] && !voidAux.Match(t[ref[1]:ps]) && !voidSelfAux.Match(t[ps:s+p[1]]) && !voidDeclare.Match(t[s:ref[0]]) {
			continue
		}
		return min(ref[0], ps), max(ref[1], s+p[1]), true
	}
	return 0, 0, false
}

// any reports whether b holds one of m's keywords.
func (m *kwMatcher) any(b []byte) bool {
	found := false
	m.find(b, func(int, int) { found = true })
	return found
}

// lowerASCII appends b to dst with ASCII letters lower-cased.
func lowerASCII(dst, b []byte) []byte {
	for _, c := range b {
		dst = append(dst, lowerTable[c])
	}
	return dst
}

// isASCII reports whether b holds only ASCII bytes.
func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}
