package feature

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/adaptrag/adaptrag/retrieval/analysis"
)

// refStem is stemCut's rules written out on strings.
func refStem(w string) string {
	if len(w) < 4 {
		return w
	}
	has := func(suffix string) bool { return strings.HasSuffix(w, suffix) }
	cut := func(n int) string { return w[:len(w)-n] }
	switch {
	case has("ss"), (has("us") || has("is")) && len(w) >= 5:
	case has("ies") && len(w) >= 5:
		return cut(3) + "y"
	case has("sses"), has("xes"), has("ches"), has("shes"):
		w = cut(2)
	case has("s"):
		w = cut(1)
	}
	vowel := func(s string) bool { return strings.ContainsAny(s, "aeiouy") }
	switch {
	case has("ied") && len(w) >= 5:
		return cut(3) + "y"
	case has("ed") && !has("eed") && len(w) >= 5 && vowel(cut(2)):
		w = cut(2)
	case has("ing") && len(w) >= 6 && vowel(cut(3)):
		w = cut(3)
	default:
		if has("e") && !has("ee") && len(w) >= 5 {
			w = cut(1)
		}
		return w
	}
	n := len(w)
	switch c := w[n-1]; {
	case n >= 4 && c == w[n-2] && !vowel(w[n-1:]) && !strings.ContainsRune("lszf", rune(c)):
		return cut(1)
	case n == 3 && !vowel(w[:1]) && vowel(w[1:2]) && !vowel(w[2:]) && !strings.ContainsRune("wx", rune(c)):
		return w + "e"
	}
	return w
}

// refStop holds the stems of the stop words.
var refStop = func() map[string]bool {
	m := map[string]bool{}
	for w := range lex.stopWords {
		m[refStem(w)] = true
	}
	return m
}()

// reference computes the features the slow, obvious way, from the project
// analyzer's tokens (analysis.Unicode, then width folding and lower-casing;
// a number's digit groups joined over thousands separators, each word
// stemmed by refStem, stop words known by their stems), with maps and
// quadratic scans. Extract must agree with it.
func reference(query string, faq bool, fields ...string) Vector {
	v := referenceOf(query, faq, fields...)
	if !faq && v[QLen] > 0 {
		// Sent: the best Cov of one sentence taken alone.
		for _, f := range fields {
			for _, sen := range refSentences(f) {
				v[Sent] = max(v[Sent], referenceOf(query, false, sen)[Cov])
			}
		}
	}
	return v
}

// refSentences cuts text after each sentence end (see Sent).
func refSentences(text string) []string {
	var out []string
	start := 0
	for i, r := range text {
		end := strings.ContainsRune("。！？；!?;\n", r)
		if r == '.' {
			end = i+1 == len(text) || strings.ContainsRune(" \n\t\r", rune(text[i+1]))
		}
		if end {
			out = append(out, text[start:i+utf8.RuneLen(r)])
			start = i + utf8.RuneLen(r)
		}
	}
	return append(out, text[start:])
}

// referenceOf is reference without Sent.
func referenceOf(query string, faq bool, fields ...string) Vector {
	type tok struct {
		term   string
		cjk    bool
		joined bool // CJK, right after the previous CJK character
	}
	an := analysis.Pipeline{Tokenizer: analysis.Unicode{}, Filters: []analysis.Filter{analysis.Width{}, analysis.Lower{}}}
	digits := func(s string, min, max int) bool {
		return len(s) >= min && len(s) <= max && strings.Trim(s, "0123456789") == ""
	}
	toks := func(text string) []tok {
		var out []tok
		ts := an.Analyze(text)
		for i := 0; i < len(ts); i++ {
			t := ts[i]
			if t.Kind == analysis.Word {
				term := t.Term
				if digits(term, 1, 3) { // 5,000 and １，０００ are 5000
					for i+1 < len(ts) && ts[i+1].Kind == analysis.Word && digits(ts[i+1].Term, 3, 3) &&
						(text[t.End:ts[i+1].Start] == "," || text[t.End:ts[i+1].Start] == "，") {
						i++
						t = ts[i]
						term += t.Term
					}
				}
				out = append(out, tok{term: refStem(term)})
				continue
			}
			first := true
			for _, r := range t.Term {
				out = append(out, tok{term: string(r), cjk: true, joined: !first})
				first = false
			}
		}
		return out
	}
	weights := func(ts []tok) []float64 {
		w := make([]float64, len(ts))
		for i, t := range ts {
			if !t.cjk {
				w[i] = WeightContent
				if refStop[t.term] {
					w[i] = WeightStop
				}
				continue
			}
			r, _ := utf8.DecodeRuneInString(t.term)
			w[i] = runeWeight(r)
			if i > 0 && t.joined {
				p, _ := utf8.DecodeRuneInString(ts[i-1].term)
				if questionBigram(p, r) {
					w[i-1], w[i] = WeightStop, WeightStop
				}
			}
		}
		return w
	}
	q := toks(query)
	if len(q) > MaxQueryTokens {
		q = q[:MaxQueryTokens]
	}
	qw := weights(q)
	var v Vector
	if len(q) == 0 {
		return v
	}
	// Units: distinct words, and CJK characters by position.
	type unit struct {
		w     float64
		found bool
	}
	var units []unit
	unitOf := make([]int, len(q))
	wordUnit := map[string]int{}
	var totalW, tokW, cjkW float64
	for i, t := range q {
		tokW += qw[i]
		if !t.cjk {
			if u, ok := wordUnit[t.term]; ok {
				unitOf[i] = u
				continue
			}
			wordUnit[t.term] = len(units)
		}
		unitOf[i] = len(units)
		units = append(units, unit{w: qw[i]})
		totalW += qw[i]
		if t.cjk {
			cjkW += qw[i]
		}
	}
	ntok := 0
	best := 0.0
	var revW, revFound float64
	qset := map[string]bool{}
	qbig := map[string]bool{}
	for i, t := range q {
		qset[t.term] = true
		if i > 0 && t.cjk && t.joined && q[i-1].cjk {
			qbig[q[i-1].term+t.term] = true
		}
	}
	for _, f := range fields {
		p := toks(f)
		ntok += len(p)
		pbig := map[string]bool{}
		for j := 1; j < len(p); j++ {
			if p[j].cjk && p[j].joined {
				pbig[p[j-1].term+p[j].term] = true
			}
		}
		for i, t := range q {
			// A character without a content character beside it in its
			// run counts by itself.
			single := t.cjk && !(t.joined && qw[i-1] == WeightContent) && !(i+1 < len(q) && q[i+1].joined && qw[i+1] == WeightContent)
			switch {
			case !t.cjk || single:
				for _, x := range p {
					if x.term == t.term && x.cjk == t.cjk {
						units[unitOf[i]].found = true
					}
				}
			default:
				if t.joined && pbig[q[i-1].term+t.term] || i+1 < len(q) && q[i+1].joined && pbig[t.term+q[i+1].term] {
					units[unitOf[i]].found = true
				}
			}
		}
		// Longest common run of tokens, by weight.
		for a := range q {
			for b := range p {
				w, k := 0.0, 0
				for a+k < len(q) && b+k < len(p) && q[a+k].term == p[b+k].term && q[a+k].cjk == p[b+k].cjk {
					w += qw[a+k]
					k++
				}
				best = max(best, w)
			}
		}
		if faq {
			pw := weights(p)
			for j, x := range p {
				w := pw[j]
				revW += w
				switch {
				case !x.cjk:
					if qset[x.term] {
						revFound += w
					}
				default:
					alone := !x.joined && (j+1 == len(p) || !p[j+1].joined)
					if alone && qset[x.term] ||
						x.joined && qbig[p[j-1].term+x.term] ||
						j+1 < len(p) && p[j+1].joined && qbig[x.term+p[j+1].term] {
						revFound += w
					}
				}
			}
		}
	}
	// Chr: CJK units not found whose character a field holds; Head: the
	// units whose word or character the first field holds.
	holds := func(f string, t tok) bool {
		for _, x := range toks(f) {
			if x.term == t.term && x.cjk == t.cjk {
				return true
			}
		}
		return false
	}
	var chars, head float64
	for i, t := range q {
		u := unitOf[i]
		// A character found at another position of the query does not
		// count again.
		twin := false
		for j, o := range q {
			if j != i && o.cjk && t.cjk && o.term == t.term && units[unitOf[j]].found {
				twin = true
			}
		}
		if !units[u].found && t.cjk && !twin && slices.ContainsFunc(fields, func(f string) bool { return holds(f, t) }) {
			chars += units[u].w
		}
		if !faq && len(fields) > 1 && holds(fields[0], t) && !slices.Contains(unitOf[:i], u) {
			head += units[u].w
		}
	}
	var found float64
	for _, u := range units {
		if u.found {
			found += u.w
		}
	}
	v[Chr] = chars / totalW
	v[Head] = head / totalW
	v[Cov] = found / totalW
	v[Run] = best / tokW
	v[Miss] = math.Log1p(totalW - found)
	v[QLen] = math.Log1p(totalW)
	v[PLen] = math.Log1p(float64(ntok))
	v[CJK] = cjkW / totalW
	if faq && revW > 0 {
		v[Rev] = revFound / revW
		v[Both] = min(v[Cov], v[Rev])
	}
	return v
}

func close(a, b Vector) bool {
	for i := range a {
		if math.Abs(a[i]-b[i]) > 1e-9 {
			return false
		}
	}
	return true
}

func TestExtractMatchesReference(t *testing.T) {
	cases := []struct {
		q      string
		faq    bool
		fields []string
	}{
		{"How many days of annual leave do I get?", false, []string{"Leave policy", "Statutory annual leave is 5 days a year."}},
		{"年假有多少天？", false, []string{"假期管理办法", "年假天数按员工累计工作年限计算：每年 5 天。"}},
		{"年假有多少天？", true, []string{"年假有几天？"}},
		{"VPN 报错 E409 是什么意思", true, []string{"VPN 报错 E409 是什么意思？"}},
		{"Ｐ－２０４ 电池", false, []string{"P-204 portable battery, 便携电池 20000mAh"}},
		{"报销 报销 审批", false, []string{"报销审批", "审批报销"}},
		{"a 的 b", false, []string{"的"}},
		{"", false, []string{"anything"}},
		{"???", false, []string{"anything"}},
		{"Café ÉCOLE naïve", false, []string{"cafe école NAÏVE"}},
		{"一", true, []string{"一 一二"}},
		{"报销流程是什么？", true, []string{"报销是什么流程，多少天"}},
		{"多少", true, []string{"多少多少 多 少"}},
		// Inflections and numbers.
		{"Compare the approval chains for expenses under 1000 and over 5000", false,
			[]string{"Approval limits", "Claims are approved by amount: below 1,000 yuan your manager; above 5,000 yuan the finance director. Splitting one expense into several claims is a violation."}},
		{"Who approves expense claims above 5,000 yuan?", true, []string{"Who approved an expense claim above 5000 yuan?"}},
		{"approving APPROVED approves approval", false, []string{"Approve, approving; Approvals."}},
		{"policies classes taxes branches wishes status basis GPUs days dies", false, []string{"policy class tax branch wish statu basi GPU day die"}},
		{"submitted planned added noted taking exceeded needs using", false, []string{"submit plan add note take exceed need use"}},
		{"5,000 1,000,000 ５，０００ 12,345,678", false, []string{"5000 1000000 5000元 12345678"}},
		{"1,2 2024,2025 5,000x 1,0000 1,000,00 x1,000", false, []string{"1 2 2024 2025 5 000x 1 0000 1000 00 x1 000"}},
		{"费用 5,000元 以上", false, []string{"费用5000元以上，１，０００元以下"}},
		{"Café NAÏVE résumés", true, []string{"café naïve résumé"}},
	}
	var s Scratch
	for _, c := range cases {
		got := Prepare(c.q).Extract(&s, c.faq, c.fields...)
		want := reference(c.q, c.faq, c.fields...)
		if !close(got, want) {
			t.Errorf("%q / %q:\n got  %v\n want %v", c.q, c.fields, got, want)
		}
	}
}

// TestExtractMatchesReferenceRandom compares Extract with the reference on
// texts drawn from pieces that exercise thousands separators, inflected
// words, width folding and CJK runs, which random bytes rarely spell.
func TestExtractMatchesReferenceRandom(t *testing.T) {
	pieces := strings.Fields("claims Claim CLAIMS expenses expense approves Approved approving approval " +
		"policies policy classes taxes status basis GPUs this is was does needs uses submitted planned added " +
		"noted note taking exceed exceeded needing string days dies 1990s café NAÏVE résumés ｃｌａｉｍｓ " +
		"5 000 5,000 1,000,000 1,2 2024,2025 5,000x 12,3456 ５，０００ ５ ０００ 5，000 , ， . - 元 报销 审批 多少 年假 的 ； 。 ? ！ 5.5 e.g.")
	seps := []string{" ", "", " ", ", ", "\n", "，", ". ", "。", ";"}
	rng := rand.New(rand.NewPCG(3, 4))
	text := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteString(pieces[rng.IntN(len(pieces))])
			b.WriteString(seps[rng.IntN(len(seps))])
		}
		return b.String()
	}
	var s Scratch
	for range 3000 {
		q, p, faq := text(1+rng.IntN(8)), text(rng.IntN(30)), rng.IntN(2) == 0
		fields := []string{p}
		if !faq && rng.IntN(2) == 0 { // a heading path and a text
			fields = []string{text(rng.IntN(4)), p}
		}
		if got, want := Prepare(q).Extract(&s, faq, fields...), reference(q, faq, fields...); !close(got, want) {
			t.Fatalf("%q / %q:\n got  %v\n want %v", q, fields, got, want)
		}
	}
}

// TestNumberKey checks that a number's thousands separators do not count.
func TestNumberKey(t *testing.T) {
	for _, w := range []string{"5,000", "５，０００", "5，000", "５０００"} {
		if wordKey(w) != wordKey("5000") {
			t.Errorf("wordKey(%q) != wordKey(5000)", w)
		}
	}
}

// TestStem checks stemCut and refStem against examples, and that wordKey
// hashes the stem.
func TestStem(t *testing.T) {
	for _, c := range []struct{ word, stem string }{
		{"claims", "claim"}, {"expenses", "expens"}, {"expense", "expens"}, {"chains", "chain"},
		{"days", "day"}, {"policies", "policy"}, {"dies", "die"}, {"classes", "class"},
		{"taxes", "tax"}, {"branches", "branch"}, {"wishes", "wish"}, {"class", "class"},
		{"status", "status"}, {"basis", "basis"}, {"gpus", "gpu"}, {"apis", "api"}, {"this", "thi"},
		{"approve", "approv"}, {"approves", "approv"}, {"approved", "approv"}, {"approving", "approv"},
		{"applied", "apply"}, {"submitted", "submit"}, {"added", "add"}, {"called", "call"},
		{"noted", "note"}, {"note", "note"}, {"taking", "take"}, {"fixed", "fix"},
		{"exceed", "exceed"}, {"exceeded", "exceed"}, {"exceeding", "exceed"}, {"need", "need"},
		{"needed", "need"}, {"string", "string"}, {"red", "red"}, {"meetings", "meet"},
		{"employee", "employee"}, {"employees", "employee"}, {"reimbursed", "reimburs"}, {"reimburse", "reimburs"},
		{"1990s", "1990"}, {"5000", "5000"}, {"Claims", "claim"}, {"APPROVED", "approv"},
	} {
		lower := strings.ToLower(c.word)
		k, extra := stemCut(c.word)
		got := lower[:k]
		if extra != 0 {
			got += string(rune(extra))
		}
		if got != c.stem {
			t.Errorf("stemCut(%q) = %q, want %q", c.word, got, c.stem)
		}
		if got := refStem(lower); got != c.stem {
			t.Errorf("refStem(%q) = %q, want %q", lower, got, c.stem)
		}
		if wordKey(c.word) != stemKey(fnvLower(c.stem), 0) {
			t.Errorf("wordKey(%q) is not the hash of %q", c.word, c.stem)
		}
	}
	// An inflected stop word is a stop word.
	for _, w := range []string{"needs", "uses", "others", "making", "Does"} {
		if wordWeight(wordKey(w)) != WeightStop {
			t.Errorf("%q is not a stop word", w)
		}
	}
}

func TestFeatureValues(t *testing.T) {
	var s Scratch
	v := Prepare("annual leave").Extract(&s, false, "", "Statutory annual leave is 5 days.")
	if v[Cov] != 1 || v[Run] != 1 {
		t.Errorf("full verbatim match: cov %v run %v, want 1 1", v[Cov], v[Run])
	}
	v = Prepare("stock options").Extract(&s, false, "", "Statutory annual leave is 5 days.")
	if v[Cov] != 0 || v[Run] != 0 {
		t.Errorf("no match: cov %v run %v, want 0 0", v[Cov], v[Run])
	}
	// The bigram 年假 is in the passage, 假有, 有多 and 多少 are not: 年 and
	// 假 are found, 有 (a stop character), 多 and 少 (a question word) are
	// not.
	v = Prepare("年假有多少").Extract(&s, false, "", "年假每年 5 天")
	want := 2.0 / (2 + 3*WeightStop)
	if math.Abs(v[Cov]-want) > 1e-12 {
		t.Errorf("cov %v, want %v", v[Cov], want)
	}
	if v[CJK] != 1 {
		t.Errorf("cjk %v, want 1", v[CJK])
	}
	// 退 stands between a question word and a stop character (可以, 吗):
	// a word of one character, found by itself although the passage holds
	// none of the query's bigrams (以退, 退吗).
	v = Prepare("可以退吗").Extract(&s, false, "", "挂号费全额退还，过时不退")
	if want := 1 / (1 + 3*WeightStop); math.Abs(v[Cov]-want) > 1e-12 || v[Chr] != 0 {
		t.Errorf("cov %v chr %v, want %v and 0", v[Cov], v[Chr], want)
	}
	// 号 is in the passage but not 家号: Cov misses it, Chr counts it.
	v = Prepare("专家号").Extract(&s, false, "", "专家门诊的号源")
	if math.Abs(v[Cov]-2.0/3) > 1e-12 || math.Abs(v[Chr]-1.0/3) > 1e-12 {
		t.Errorf("cov %v chr %v, want 2/3 and 1/3", v[Cov], v[Chr])
	}
	// The passage's 公 is that of 公司, which the query's first 公 found: it
	// is no evidence for the 公 of 办公室, which Chr does not count; 室 it
	// does.
	v = Prepare("公司办公室").Extract(&s, true, "公司会议室")
	if math.Abs(v[Cov]-2.0/5) > 1e-12 || math.Abs(v[Chr]-1.0/5) > 1e-12 {
		t.Errorf("cov %v chr %v, want 2/5 and 1/5", v[Cov], v[Chr])
	}
	// 年假 and 天数 are both in the passage, but in two sentences: Cov
	// counts both, Sent one sentence's half. The heading is a sentence of
	// its own.
	v = Prepare("年假天数").Extract(&s, false, "", "年假每年 5 天。天数按工龄计算")
	if v[Cov] != 1 || v[Sent] != 0.5 {
		t.Errorf("cov %v sent %v, want 1 and 0.5", v[Cov], v[Sent])
	}
	if v = Prepare("年假天数").Extract(&s, false, "年假", "天数按工龄计算，年假另计"); v[Sent] != 1 {
		t.Errorf("one sentence holds both: sent %v, want 1", v[Sent])
	}
	if v = Prepare("annual leave days").Extract(&s, false, "", "Annual leave is 5.5 days. Days are counted"); v[Sent] != 1 {
		t.Errorf("a decimal point ends no sentence: sent %v, want 1", v[Sent])
	}
	// The heading holds 退号, the text 规定 too: Head counts the heading only.
	v = Prepare("退号规定").Extract(&s, false, "挂号与退号", "退号规定如下")
	if v[Head] != 0.5 || v[Cov] != 1 {
		t.Errorf("head %v cov %v, want 0.5 and 1", v[Head], v[Cov])
	}
	if v = Prepare("退号规定").Extract(&s, true, "挂号与退号"); v[Head] != 0 {
		t.Errorf("an FAQ question has no heading: head %v", v[Head])
	}
	// Plurals and numbers with thousands separators match: approval,
	// expens(es) and 5000 are found; chains and the stop words for and
	// over are not.
	v = Prepare("approval chains for expenses over 5000").Extract(&s, false, "", "Approval of an expense claim above 5,000 yuan")
	want = 3.0 / (4 + 2*WeightStop)
	if math.Abs(v[Cov]-want) > 1e-12 {
		t.Errorf("cov %v, want %v", v[Cov], want)
	}
}

// FuzzExtract checks that Extract never panics, stays in range and agrees
// with the reference implementation on any input.
func FuzzExtract(f *testing.F) {
	f.Add("年假有多少天？", "年假天数按员工累计工作年限计算", false)
	f.Add("How many days of annual leave?", "annual leave is 5 days", true)
	f.Add("Ｗｉ－Ｆｉ密码", "wi-fi 密码是 5000", false)
	f.Add("\xff\xfe", "\xe4\xb8", true)
	f.Add("Approval chains for expenses under 1000", "Claims below 1,000 yuan are approved by your manager.", false)
	f.Add("submitted taxes policies 1,000,000", "Submitting tax policy: １，０００，０００ 5,000元 1,2 12,3456", true)
	f.Add(strings.Repeat("报销", 200), strings.Repeat("报销审批", 100), true)
	f.Fuzz(func(t *testing.T, query, text string, faq bool) {
		var s Scratch
		got := Prepare(query).Extract(&s, faq, text)
		for i, x := range got {
			if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
				t.Fatalf("feature %s = %v", Names[i], x)
			}
		}
		for _, i := range []int{Cov, Run, CJK, Sent, Rev, Both} {
			if got[i] > 1+1e-12 {
				t.Fatalf("feature %s = %v > 1", Names[i], got[i])
			}
		}
		if got[Sent] > got[Cov]+1e-12 {
			t.Fatalf("sent %v > cov %v", got[Sent], got[Cov])
		}
		if len(query) < 400 && len(text) < 400 { // the reference is quadratic
			if want := reference(query, faq, text); !close(got, want) {
				t.Fatalf("Extract %v\nreference %v", got, want)
			}
		}
	})
}
