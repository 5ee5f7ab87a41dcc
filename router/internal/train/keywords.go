package main

// Keyword queries: what an agent's tool call or a search box sends instead of
// a sentence ("copay specialist visit", "错误代码 0x80070057", "TKT-118
// status", a bare noun). The public pools have none, and their short texts
// are almost all chitchat, so a model fitted on them alone answers a
// two-word query without retrieval. The examples here are generated from
// vocabulary lists (data/keywords.tsv), codes made up at random, and the
// content words of the pool's own questions; all are labelled factual (a
// look-up).

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/adaptrag/adaptrag/router/internal/feat"
)

// keywordExamples generates n English and n Chinese keyword queries from the
// vocabulary of c.
func keywordExamples(c *corpus, rng *rand.Rand, n int) []example {
	pick := func(xs []string) string { return xs[rng.IntN(len(xs))] }
	kw := func(slot, lang string) []string { return c.keywords[slotKey{slot, lang}] }
	kwEnNouns, kwEnMods, kwPlaces := kw("noun", "en"), kw("mod", "en"), kw("place", "en")
	kwZhNouns, kwZhMods, kwZhPlaces := kw("noun", "zh"), kw("mod", "zh"), kw("place", "zh")
	kwCodePrefixes, kwStandards, kwCliErrors := kw("code-prefix", "en"), kw("standard", "en"), kw("cli-error", "en")
	kwCamelParts, kwSnakeParts := kw("camel-part", "en"), kw("snake-part", "en")
	code := func() string {
		switch rng.IntN(9) {
		case 0:
			return fmt.Sprintf("0x%08X", rng.Uint32())
		case 1:
			return fmt.Sprintf("error %d", 100+rng.IntN(99900))
		case 2:
			return fmt.Sprintf("%s-%d", pick(kwCodePrefixes), 1+rng.IntN(9999))
		case 3:
			return fmt.Sprintf("%c%d", 'A'+rune(rng.IntN(26)), 1+rng.IntN(999))
		case 4:
			return fmt.Sprintf("%s %d", pick(kwStandards), 100+rng.IntN(60000))
		case 5:
			return fmt.Sprintf("v%d.%d.%d", rng.IntN(10), rng.IntN(30), rng.IntN(50))
		case 6:
			return pick(kwSnakeParts) + "_" + pick(kwSnakeParts)
		case 7:
			return strings.ToUpper(pick(kwSnakeParts) + "_" + pick(kwSnakeParts))
		}
		return pick(kwCamelParts) + pick(kwCamelParts) + pick(kwCamelParts)
	}
	var out []example
	add := func(s string) { out = append(out, example{s, "factual"}) }
	for range n {
		switch rng.IntN(8) {
		case 0:
			add(pick(kwEnNouns))
		case 1:
			add(pick(kwEnNouns) + " " + pick(kwEnMods))
		case 2:
			add(pick(kwPlaces) + " " + pick(kwEnNouns) + " " + pick(kwEnMods))
		case 3:
			add(code())
		case 4:
			add(code() + " " + pick(kwEnNouns))
		case 5:
			add(pick(kwEnNouns) + " " + pick(kwCliErrors))
		case 6:
			add(pick(kwEnNouns) + " " + code())
		default:
			add(pick(kwEnMods) + " " + pick(kwEnNouns) + " " + pick(kwEnNouns))
		}
	}
	for range n {
		switch rng.IntN(8) {
		case 0:
			add(pick(kwZhNouns))
		case 1:
			add(pick(kwZhNouns) + " " + pick(kwZhMods))
		case 2:
			add(pick(kwZhPlaces) + " " + pick(kwZhNouns) + " " + pick(kwZhMods))
		case 3:
			add(pick(kwZhNouns) + pick(kwZhMods))
		case 4:
			add(code() + " " + pick(kwZhNouns))
		case 5:
			add(pick(kwZhNouns) + " " + code())
		case 6:
			add(pick(kwZhNouns) + " " + pick(kwZhMods) + " " + fmt.Sprint(rng.IntN(20000)))
		default:
			add(pick(kwZhNouns) + " " + pick(kwZhNouns) + " " + pick(kwZhMods))
		}
	}
	// Wrapped in small talk, or elliptical follow-ups: still a look-up.
	for i := range n / 4 {
		k := out[rng.IntN(len(out))].text
		switch i % 6 {
		case 0:
			k = pick([]string{"hi ", "hello, ", "hey ", "你好，", "您好 "}) + k
		case 1:
			k += pick([]string{" thanks", " thx", " 谢谢", "，谢谢", " pls"})
		case 2:
			k = "那" + pick(kwZhNouns) + "呢"
		case 3:
			k = pick(kwZhPlaces) + "的呢"
		case 4:
			k = pick([]string{"what about ", "and for ", "how about "}) + pick(kwEnNouns)
		default:
			k = pick(kwEnNouns) + " too?"
		}
		add(k)
	}
	return out
}

// poolKeywords turns questions into keyword queries: one to four adjacent
// content words of an English question, or one to three content fragments
// of a Chinese one.
func poolKeywords(rng *rand.Rand, questions []string, n int) []example {
	var out []example
	for _, i := range rng.Perm(len(questions)) {
		if len(out) == n {
			break
		}
		q := feat.Normalize(questions[i])
		var parts []string
		if hanShare(q) {
			parts = hanFragments(q)
		} else {
			for _, w := range strings.Fields(q) {
				if !stopWord(w) {
					parts = append(parts, w)
				}
			}
		}
		if len(parts) == 0 {
			continue
		}
		k := 1 + rng.IntN(min(4, len(parts)))
		if hanShare(q) {
			k = 1 + rng.IntN(min(3, len(parts)))
		}
		start := rng.IntN(len(parts) - k + 1)
		out = append(out, example{strings.Join(parts[start:start+k], " "), "factual"})
	}
	return out
}

// stopWord reports the function words and question words that a keyword
// query drops.
func stopWord(w string) bool {
	an := feat.FindTalk(w)
	return an.Conv || an.Kinds != 0 || len(w) < 2
}

// hanFragments splits Chinese text at function characters and question
// words, keeping fragments of two to eight characters.
func hanFragments(q string) []string {
	var out []string
	cut := func(r rune) bool {
		return r == ' ' || strings.ContainsRune("的了是在有吗呢吧啊什么哪谁几多少怎样为何和与及或被把将从对于这那个", r)
	}
	for _, f := range strings.FieldsFunc(q, cut) {
		if n := len([]rune(f)); n >= 2 && n <= 8 {
			out = append(out, f)
		}
	}
	return out
}
