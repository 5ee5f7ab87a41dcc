package router

import "github.com/adaptrag/adaptrag/router/internal/feat"

// SmallTalkKind is a kind of small talk.
type SmallTalkKind string

// Small-talk kinds.
const (
	// NoSmallTalk: no small-talk phrase.
	NoSmallTalk SmallTalkKind = ""
	// SmallTalkGreeting: hello, 你好, good morning, how are you, 在吗.
	SmallTalkGreeting SmallTalkKind = "greeting"
	// SmallTalkThanks: thanks, 谢谢, much appreciated, 辛苦了.
	SmallTalkThanks SmallTalkKind = "thanks"
	// SmallTalkFarewell: bye, 再见, good night, take care.
	SmallTalkFarewell SmallTalkKind = "farewell"
	// SmallTalkCapability: a question about the assistant itself: what can
	// you do, 你能做什么, who are you, are you a bot.
	SmallTalkCapability SmallTalkKind = "capability"
	// SmallTalkAck: an acknowledgement or reaction: ok, got it, 好的, 收到,
	// haha, 👍.
	SmallTalkAck SmallTalkKind = "acknowledgement"
)

var talkKinds = [...]SmallTalkKind{
	feat.TalkNone: NoSmallTalk, feat.TalkGreeting: SmallTalkGreeting, feat.TalkThanks: SmallTalkThanks,
	feat.TalkFarewell: SmallTalkFarewell, feat.TalkCapability: SmallTalkCapability, feat.TalkAck: SmallTalkAck,
}

// SmallTalk is what DetectSmallTalk finds in a text.
type SmallTalk struct {
	// Kind is the kind of the first small-talk phrase, NoSmallTalk if the
	// text has none.
	Kind SmallTalkKind
	// Only reports that the text is small talk and nothing else: it has at
	// least one small-talk phrase, and nothing substantive remains once the
	// small-talk phrases, their fillers ("a lot", "朋友", "啊"), openers
	// ("请问", "by the way"), punctuation and emoji are removed — no other
	// word, no Han character, no number. "谢谢，再见" and "hiii 👋" are only
	// small talk; "你好，顺便问下电子发票多久能开好", "thanks, P-204?" and
	// "VPN" are not.
	Only bool

	kinds uint8
}

// Has reports whether the text has a phrase of kind k (k != NoSmallTalk).
func (s SmallTalk) Has(k SmallTalkKind) bool {
	for i, tk := range talkKinds {
		if tk == k && i != int(feat.TalkNone) {
			return s.kinds&(1<<i) != 0
		}
	}
	return false
}

// DetectSmallTalk finds greetings, thanks, farewells, questions about the
// assistant and acknowledgements in text, Chinese or English, with the one
// small-talk lexicon of the product: the one the offline classifier reads.
// Casing, full-width forms, punctuation, emoji and stretched words ("byeee",
// "thanksss") do not matter.
//
// The offline classifier routes every text that is only small talk to
// chitchat, and answers chitchat only for texts that show some evidence of
// conversation; callers that need a yes/no greeting test should use Only.
// It is cheap (about a microsecond, a few small allocations) and safe for
// concurrent use.
func DetectSmallTalk(text string) SmallTalk {
	t := feat.FindTalk(text)
	return SmallTalk{Kind: talkKinds[t.Kind], Only: t.Only, kinds: t.Kinds}
}

// LexiconEntry is one line of the offline router's lexicon
// (router/internal/feat/lexicon/*.tsv): a class, a language and an entry.
type LexiconEntry struct {
	Class, Lang, Entry string
}

// LexiconEntries returns the offline router's lexicon: the cue and
// small-talk lists its features and DetectSmallTalk read. They are data,
// general language only; a test checks that none names the bundled
// sample's domain.
func LexiconEntries() []LexiconEntry {
	es := feat.Lexicon()
	out := make([]LexiconEntry, len(es))
	for i, e := range es {
		out[i] = LexiconEntry(e)
	}
	return out
}
