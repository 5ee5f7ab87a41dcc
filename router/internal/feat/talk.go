package feat

import (
	"sort"
	"strings"
	"unicode/utf8"
)

// TalkKind is the kind of a small-talk phrase.
type TalkKind uint8

// Small-talk kinds. TalkNone means no small-talk phrase.
const (
	TalkNone       TalkKind = iota
	TalkGreeting            // hello, 你好, good morning, how are you
	TalkThanks              // thanks, 谢谢, much appreciated
	TalkFarewell            // bye, 再见, good night, take care
	TalkCapability          // about the assistant itself: what can you do, 你是谁
	TalkAck                 // acknowledgements and reactions: ok, got it, 好的, haha
	numTalkKinds
)

// talkGroup is a list of phrases of one kind. Phrases are written as a user
// types them and normalized when the index is built. Latin phrases match
// whole words; Han phrases match anywhere in a Han run, longest first.
type talkGroup struct {
	kind TalkKind
	// lead: the group's phrases are openers that StripGreeting removes in
	// front of a question (Han phrases of one character only when listed
	// in leadSingles).
	lead    bool
	phrases []string
}

// talkLexicon is the one small-talk lexicon of the product: the offline
// router's greeting stripping, its small-talk cues and chitchat gate, and
// router.DetectSmallTalk all read it. A phrase must be small talk wherever
// it appears; words that also name things (a "morning shift", "great wall")
// are fine only because a text is small talk as a whole just when nothing
// else remains.
var talkLexicon = []talkGroup{
	{TalkGreeting, true, []string{
		"你好呀", "你好啊", "你好", "您好", "嗨", "哈喽", "哈啰", "早上好", "上午好", "中午好", "下午好", "晚上好",
		"在吗", "在不在", "喂",
		"hi there", "hello there", "hey there", "hi", "hello", "hey", "hiya", "howdy", "yo",
		"good morning", "good afternoon", "good evening", "greetings", "morning", "evening",
	}},
	{TalkGreeting, false, []string{
		"你们好", "大家好", "各位好", "哈罗", "嘿", "早", "早安", "午安", "在么", "有人吗", "有人在吗", "你在吗", "你好吗",
		"最近好吗", "最近怎么样", "好久不见", "很高兴认识你", "认识你很高兴", "幸会", "新年快乐", "节日快乐", "春节快乐",
		"中秋快乐", "生日快乐", "圣诞快乐",
		"good day", "hullo", "heya", "sup", "what is up", "how are you", "how are you doing", "how are you today",
		"how do you do", "how is it going", "how is everything", "how have you been",
		"how's it going", "how's the day going", "how is the day going", "how's your day going", "how is your day going",
		"how's your day", "how is your day", "how was your day", "how's your day been", "how has your day been", "are you there", "anyone there",
		"is anyone there", "r u there", "nice to meet you", "pleased to meet you", "long time no see",
		"happy new year", "happy holidays", "merry christmas", "happy friday", "happy birthday",
		"hola", "bonjour", "salut", "hallo", "aloha", "namaste", "konnichiwa", "guten morgen", "guten tag",
		"buenos dias", "buongiorno", "enchante", "good morrow", "mornin",
	}},
	{TalkThanks, true, []string{
		"谢谢你", "谢谢您", "谢谢", "多谢", "感谢", "非常感谢", "十分感谢", "万分感谢", "太感谢了", "太谢谢了",
		"thanks", "thank you", "thank u", "thank ya", "thx", "thnx", "thanx", "tks", "ty", "tysm", "cheers",
		"many thanks", "much appreciated",
	}},
	{TalkThanks, false, []string{
		"谢啦", "谢了", "感恩", "辛苦了", "辛苦啦", "辛苦", "麻烦了", "麻烦你了",
		"appreciate it", "appreciated", "that helps", "that helped", "that was helpful", "very helpful",
		"跪谢", "gracias", "merci", "danke", "kthx",
	}},
	{TalkFarewell, false, []string{
		"再见", "拜拜", "拜", "回见", "回头见", "明天见", "下次见", "改天见", "晚安", "先这样", "先走了", "周末愉快",
		"bye", "bye bye", "byebye", "goodbye", "good bye", "see you", "see ya", "cya", "see you later", "see you soon",
		"see you tomorrow", "later", "talk later", "talk to you later", "talk to you soon", "ttyl", "take care",
		"good night", "night night", "nighty night", "have a good one", "have a nice day", "have a good day",
		"have a great day", "have a nice weekend", "have a good weekend", "have a great weekend", "gtg", "g2g",
		"got to go", "gotta go", "farewell", "peace out", "signing off", "adios", "ciao", "sayonara", "adieu",
		"晚上愉快", "l8r", "au revoir", "auf wiedersehen", "hasta la vista", "toodles",
	}},
	{TalkCapability, false, []string{
		"你能做什么", "能做什么", "能做些什么", "能干什么", "能干些什么", "会干什么", "会做什么", "会做些什么", "可以做什么",
		"可以做些什么", "会什么", "能帮我做什么", "可以帮我做什么", "能帮我什么", "能帮我干什么", "有什么功能",
		"有哪些功能", "你是谁", "你叫什么", "你叫什么名字", "你是机器人吗", "你是真人吗", "你是人吗",
		"what can you do", "what do you do", "what can you help me with", "what can you help with",
		"how can you help", "how can you help me", "who are you", "what are you", "what is your name",
		"are you a bot", "are you a robot", "are you human", "are you real", "are you a real person",
		"are you a person", "are you an ai", "r u a bot",
	}},
	{TalkAck, true, []string{"嗯", "哦", "ok", "okay"}},
	{TalkAck, false, []string{
		"好的", "好滴", "好哒", "好吧", "好", "行", "行吧", "嗯嗯", "哦哦", "噢", "收到", "明白", "明白了", "知道了",
		"了解", "了解了", "晓得了", "懂了", "没事了", "没事", "没问题", "不客气", "不用谢", "哈哈", "哈", "呵呵", "嘿嘿",
		"嘻嘻", "笑死", "太棒了", "真棒", "对", "对的", "可以", "当然", "当然可以", "确定", "知道", "知道啦", "同意", "赞",
		"点赞", "别客气", "客气客气", "举手之劳", "何足挂齿", "小事一桩",
		"k", "kk", "okey", "okie", "cool", "great", "nice", "awesome", "perfect", "sure", "alright", "all right",
		"fine", "got it", "gotcha", "noted", "understood", "i see", "makes sense", "sounds good", "no problem",
		"no worries", "never mind", "nevermind", "that is all", "that is it", "you are welcome", "yes", "yeah",
		"yep", "yup", "no", "nope", "wow", "oh", "ah", "oops", "lol", "lmao", "rofl", "xd", "haha", "hehe",
		"good job", "well done", "great stuff", "nice one", "ha", "hah", "heh", "ha ha", "tee hee", "teehee",
		"jk", "anytime", "any time", "de nada", "whatever", "嚯嚯",
	}},
	// Openers: no small talk by themselves, stripped before a question.
	{TalkNone, true, []string{
		"打扰一下", "打扰了", "不好意思", "麻烦问下", "麻烦问一下", "顺便问下", "顺便问一下", "顺便问问", "顺便", "问一下",
		"问下", "想问下", "想问一下", "我想问一下", "我想问下", "请问一下", "请问", "请教一下", "请教下", "另外", "还有",
		"对了", "那个",
		"quick question", "a quick question", "one question", "one more question", "i have a question", "question",
		"by the way", "btw", "excuse me", "sorry to bother you", "sorry", "also", "so", "um", "please", "pls",
		"can i ask", "may i ask", "just wondering",
	}},
	// Fillers: allowed around small talk, no small talk by themselves.
	{TalkNone, false, []string{
		"啊", "呀", "呢", "吧", "嘛", "啦", "哇", "哟", "咯", "喔", "呗", "了", "哦", "么", "你", "您", "我", "大家", "各位",
		"朋友", "亲", "小助手", "助手", "机器人", "真是", "真", "非常", "太", "都", "也", "那", "就", "先", "祝", "祝你",
		"there", "much", "so much", "very", "very much", "a lot", "a ton", "a bunch", "a million", "heaps", "kindly",
		"really", "again", "all", "everyone", "everybody", "team", "guys", "folks", "and you", "you too", "bot",
		"assistant", "my", "friend", "pal", "buddy", "mate", "dude", "amigo", "for now", "for everything",
		"for your help", "for the help", "for that", "for this", "exactly", "then", "today", "stuff", "you",
		"so far", "been",
	}},
}

// leadSingles are the one-character Han openers that StripGreeting removes;
// other one-character phrases ("早", "好") begin too many real questions.
var leadSingles = map[string]bool{"嗨": true, "喂": true, "嘿": true, "嗯": true, "哦": true}

// convWords are function words: pronouns, articles and determiners,
// auxiliaries, prepositions, conjunctions, question words and a few
// adverbs. A sentence has some; a keyword query ("expense limit travel",
// "NIST 800-88", "VPN") has none.
var convWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`i me my mine myself you your yours yourself u ur ya we us our ours lets
		he him his she her hers it its they them their someone somebody anyone anybody something anything
		everything nothing everyone
		a an the this that these those some any another every each no
		am is are was were be been being do does did have has had will would can could should shall may
		might must
		to of in on at for with about from by into onto over after before like than as
		and or but if because so not too very really just also then there here now again still ever never
		always only well please
		what who whom whose which when where why how`) {
		convWords[w] = true
	}
}

// convHan are Han pronouns, particles, question words and other function
// characters of a sentence. 么 counts only at the end (it also ends 什么,
// 怎么, which 什 and 怎 cover). Characters that often start nouns (个税,
// 成都, 还款, 地址) are left out.
var convHan = map[rune]bool{}

func init() {
	for _, r := range "你您我咱俺他她它们谁什怎哪几吗呢吧啊呀啦嘛哦噢哇呗咯喔嘿哟耶哈唉哎嗯的了是不没很也这那些" {
		convHan[r] = true
	}
}

// talkEmoji are the emoji that say something by themselves; others are
// decoration.
var talkEmoji = map[rune]TalkKind{
	0x1F44B: TalkGreeting, // waving hand
	0x1F64F: TalkThanks,   // folded hands
	0x1F44D: TalkAck,      // thumbs up
	0x1F44C: TalkAck,      // OK hand
}

type talkEntry struct{ kind TalkKind }

var (
	talkIndex     = map[uint64]talkEntry{}
	talkVocab     = map[string]bool{} // Latin words of the lexicon
	talkMaxWords  int
	talkMaxRunes  int
	greetPrefixes []string // lead phrases, longest first
)

func init() {
	for _, g := range talkLexicon {
		for _, p := range g.phrases {
			n := Normalize(p)
			if n == "" {
				continue
			}
			// A phrase listed under a kind and as a filler keeps its kind.
			if old, ok := talkIndex[hash64(n)]; !ok || old.kind == TalkNone {
				talkIndex[hash64(n)] = talkEntry{kind: g.kind}
			}
			if n[0] < 0x80 {
				ws := strings.Split(n, " ")
				talkMaxWords = max(talkMaxWords, len(ws))
				for _, w := range ws {
					talkVocab[w] = true
				}
			} else {
				talkMaxRunes = max(talkMaxRunes, utf8.RuneCountInString(n))
			}
			if g.lead && (n[0] < 0x80 || utf8.RuneCountInString(n) > 1 || leadSingles[n]) {
				greetPrefixes = append(greetPrefixes, n)
			}
		}
	}
	sort.SliceStable(greetPrefixes, func(i, j int) bool { return len(greetPrefixes[i]) > len(greetPrefixes[j]) })
}

// FNV-1a, 64 bit, for lexicon keys (words joined by one space, or a Han
// string); hashing lets the scan look phrases up without building strings.
const (
	offset64 = 14695981039346656037
	prime64  = 1099511628211
)

func hash64(s string) uint64 { return hadd(offset64, s) }

func hadd(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= prime64
	}
	return h
}

// Talk is what the small-talk lexicon finds in a text.
type Talk struct {
	// Kind is the kind of the first small-talk phrase (TalkNone if none).
	Kind TalkKind
	// Kinds has bit 1<<k set for every kind k found.
	Kinds uint8
	// Only: at least one small-talk phrase, and nothing is left once the
	// small-talk phrases, fillers, openers, punctuation and emoji are
	// removed (no other word, no Han character, no number).
	Only bool
	// Conv: the part from the scan's body offset on has a function word
	// (see convWords, convHan) outside the small-talk phrases.
	Conv bool
	// Ident: the text has an identifier-shaped token: a digit, or letters
	// joined by "_", "." or "@" (error codes, ids, config keys, hosts).
	Ident bool
	// restUnits measures what is not small talk: 3 a Latin word, 1 a Han
	// character.
	restUnits int
}

// Mostly reports small talk with at most one other word (a name: "hi
// Alexa", "你好天猫精灵"): a small-talk phrase, and besides it at most one
// Latin word or four Han characters.
func (t Talk) Mostly() bool { return t.Kinds != 0 && t.restUnits <= 4 }

// Has reports whether a phrase of kind k was found.
func (t Talk) Has(k TalkKind) bool { return t.Kinds&(1<<k) != 0 }

// FindTalk scans text (as typed) for small talk. It normalizes text itself.
func FindTalk(text string) Talk { return findTalk(text, Normalize(text), 0) }

// findTalk scans norm (Normalize(text)); Conv looks only at norm[body:].
func findTalk(text, norm string, body int) Talk {
	var t Talk
	emoji, first := raw(text, &t)
	rest := 0
	found := func(e talkEntry) {
		if e.kind == TalkNone {
			return
		}
		if t.Kind == TalkNone {
			t.Kind = e.kind
		}
		t.Kinds |= 1 << e.kind
	}
	restHan := 0
	var words [16]string
	var starts [16]int
	for i := 0; i < len(norm); {
		if norm[i] == ' ' {
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(norm[i:])
		if IsHan(r) {
			j := i + size
			for j < len(norm) {
				r2, s2 := utf8.DecodeRuneInString(norm[j:])
				if !IsHan(r2) {
					break
				}
				j += s2
			}
			n := scanHan(norm, i, j, body, &t, found)
			rest += n
			restHan += n
			i = j
			continue
		}
		// A run of Latin words (letters and digits), up to len(words).
		n := 0
		for i < len(norm) && n < len(words) {
			j := i
			for j < len(norm) && norm[j] != ' ' {
				r2, s2 := utf8.DecodeRuneInString(norm[j:])
				if IsHan(r2) {
					break
				}
				j += s2
			}
			words[n], starts[n] = canonWord(norm[i:j]), i
			n++
			i = j
			if i < len(norm) && norm[i] == ' ' && i+1 < len(norm) {
				if r2, _ := utf8.DecodeRuneInString(norm[i+1:]); !IsHan(r2) {
					i++
					continue
				}
			}
			break
		}
		rest += scanWords(words[:n], starts[:n], body, &t, found)
	}
	t.Only = rest == 0 && t.Kinds != 0 || norm == "" && emoji != 0
	t.restUnits = 3*(rest-restHan) + restHan
	if t.Kind == TalkNone {
		t.Kind = first
	}
	t.Kinds |= emoji
	return t
}

// scanWords consumes Latin words by the longest lexicon phrase at each
// position and returns how many words are left over.
func scanWords(ws []string, starts []int, body int, t *Talk, found func(talkEntry)) int {
	rest := 0
	for p := 0; p < len(ws); {
		best, be := 0, talkEntry{}
		h := uint64(offset64)
		for q := p; q < len(ws) && q-p < talkMaxWords; q++ {
			if q > p {
				h = hadd(h, " ")
			}
			h = hadd(h, ws[q])
			if e, ok := talkIndex[h]; ok {
				best, be = q-p+1, e
			}
		}
		if best > 0 {
			found(be)
			if be.kind == TalkNone && starts[p] >= body {
				// fillers and openers hold function words ("for your help")
				for _, w := range ws[p : p+best] {
					t.Conv = t.Conv || convWords[w]
				}
			}
			p += best
			continue
		}
		if starts[p] >= body && convWords[ws[p]] {
			t.Conv = true
		}
		rest++
		p++
	}
	return rest
}

// scanHan consumes the Han run norm[i:j] by the longest lexicon phrase at
// each character and returns how many characters are left over.
func scanHan(norm string, i, j, body int, t *Talk, found func(talkEntry)) int {
	rest := 0
	// A one-character phrase (早, 好, 对, 拜) counts only when the whole run
	// is small talk: 早餐 and 好评 are not. The openers 嗨, 喂, 嘿, 嗯, 哦 always
	// count.
	var singles [8]talkEntry
	nsingles := 0
	for p := i; p < j; {
		best, be := 0, talkEntry{}
		h := uint64(offset64)
		q, n := p, 0
		for q < j && n < talkMaxRunes {
			_, s := utf8.DecodeRuneInString(norm[q:])
			h = hadd(h, norm[q:q+s])
			q += s
			n++
			if e, ok := talkIndex[h]; ok {
				best, be = q-p, e
			}
		}
		r, s := utf8.DecodeRuneInString(norm[p:])
		if best > 0 {
			switch {
			case best > s || leadSingles[norm[p:p+s]]:
				found(be)
			case nsingles < len(singles):
				singles[nsingles] = be
				nsingles++
			}
			if be.kind == TalkNone && p >= body {
				// a filler such as 你 or 啊 is a conversational word
				for k := p; k < p+best; {
					r2, s2 := utf8.DecodeRuneInString(norm[k:])
					if convChar(r2, k+s2 == len(norm)) {
						t.Conv = true
					}
					k += s2
				}
			}
			p += best
			continue
		}
		if p >= body && convChar(r, p+s == len(norm)) {
			t.Conv = true
		}
		rest++
		p += s
	}
	if rest == 0 {
		for _, e := range singles[:nsingles] {
			found(e)
		}
	}
	return rest
}

func convChar(r rune, last bool) bool { return convHan[r] || r == '么' && last }

// canonWord maps a stretched or laughing word to its lexicon form: "hiii"
// -> "hi", "thanksss" -> "thanks", "goood" -> "good", "hahaha" -> "haha".
// Words already in the lexicon, and words with digits, are returned as
// they are.
func canonWord(w string) string {
	if talkVocab[w] || convWords[w] || !isDigitFree(w) {
		return w
	}
	if isLaugh(w) {
		return "haha"
	}
	if !hasRun3(w) {
		return w
	}
	if s := squeeze(w, 2); talkVocab[s] {
		return s
	}
	if s := squeeze(w, 1); talkVocab[s] {
		return s
	}
	return w
}

func hasRun3(w string) bool {
	for i := 2; i < len(w); i++ {
		if w[i] == w[i-1] && w[i] == w[i-2] {
			return true
		}
	}
	return false
}

// squeeze shortens every run of a repeated byte to at most n.
func squeeze(w string, n int) string {
	b := make([]byte, 0, len(w))
	run := 0
	for i := 0; i < len(w); i++ {
		if i > 0 && w[i] == w[i-1] {
			run++
		} else {
			run = 1
		}
		if run <= n {
			b = append(b, w[i])
		}
	}
	return string(b)
}

// isLaugh reports "haha", "hehehe", "hahah", "lolol", "lmaooo", "hhhh".
func isLaugh(w string) bool {
	if len(w) < 3 {
		return false
	}
	switch {
	case strings.Trim(w, "h") == "":
		return true
	case strings.HasPrefix(w, "lmao") && strings.Trim(w[4:], "o") == "":
		return true
	case strings.HasPrefix(w, "lol") && strings.Trim(w[3:], "ol") == "":
		return true
	}
	pairs := 0
	for i := 0; i+1 < len(w); i += 2 {
		if w[i] != 'h' || !strings.ContainsRune("aeio", rune(w[i+1])) {
			return false
		}
		pairs++
	}
	if len(w)%2 == 1 && w[len(w)-1] != 'h' {
		return false
	}
	return pairs >= 2
}

// contracted are the words that an apostrophe contraction ("I'd", "we'll",
// "let's") starts with; normalization erases the apostrophe ("id", "well").
var contracted = map[string]bool{"i": true, "you": true, "we": true, "they": true, "he": true, "she": true, "let": true, "it": true, "that": true, "there": true}

// raw scans the text as typed for identifier shapes, apostrophe
// contractions and meaningful emoji (which normalization erases); it
// returns the emoji kinds as a bit set and the first one.
func raw(text string, t *Talk) (emoji uint8, first TalkKind) {
	prevAlnum := false
	joiner := false
	word := -1 // start of the current run of ASCII letters
	for i, r := range text {
		if r == '\'' || r == '’' {
			if word >= 0 && contracted[strings.ToLower(text[word:i])] {
				t.Conv = true
			}
		}
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			if word < 0 {
				word = i
			}
		} else {
			word = -1
		}
		if r >= 0xFF01 && r <= 0xFF5E {
			r -= 0xFEE0
		}
		alnum := r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
		switch {
		case r >= '0' && r <= '9':
			t.Ident = true
		case alnum && joiner:
			t.Ident = true
		}
		joiner = prevAlnum && (r == '_' || r == '.' || r == '@')
		if !joiner {
			prevAlnum = alnum
		}
		if r >= 0x1F000 {
			if k, ok := talkEmoji[r]; ok {
				if first == TalkNone {
					first = k
				}
				emoji |= 1 << k
			}
		}
	}
	return emoji, first
}
