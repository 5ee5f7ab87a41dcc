package router

import (
	"context"
	_ "embed"
	"fmt"
	"strings"
	"sync"

	"github.com/adaptrag/adaptrag/router/internal/feat"
)

// The shipped model: multinomial logistic regression over hashed character
// n-grams, word uni/bigrams and hand-written cues, fitted by
// router/internal/train (see router/model/README.md for data, licences and
// the reproducible command).
//
//go:embed model/router.bin.gz
var modelBlob []byte

// Offline is the default classifier: no network, a few tens of microseconds
// per query, Chinese and English. Confidence is the calibrated probability
// of the predicted class (temperature-scaled on a held-out split), so a
// value under 0.7 really flags a likely error. It is safe for concurrent
// use.
//
// Text is normalized (lower case, full-width folded, punctuation removed)
// before features are taken, so casing and a trailing "?" never matter.
// Leading greetings and fillers ("你好，顺便问下", "hi, quick question:") are
// stripped and the rest is classified, so a greeting followed by a real
// question is judged on the question. The chitchat score carries a fixed
// penalty (a bias against skipping retrieval for anything substantive).
//
// Chitchat needs positive evidence, from the small-talk lexicon that
// DetectSmallTalk reads: a text that is only small talk is chitchat (with
// at least the lexicon's measured precision as confidence), and a text with
// no evidence of conversation at all — no small-talk phrase, no function
// word (pronoun, particle, article, auxiliary, preposition, question word),
// no word of social talk, or an identifier such as an error code — is never
// chitchat. Keyword queries ("NIST 800-88", "北京 住宿 标准", "VPN",
// "CrashLoopBackOff") are thus always retrieved for.
//
// A question that asks outright to compare subjects ("Compare laptop and
// server backups", "对比笔记本备份和服务器备份", "How do X and Y differ?") is
// analytical even when the model says factual: it needs evidence about each
// side, which a factual top 3 rarely holds. (The public training pools hold
// few such questions, so the model alone does not learn it.) Its
// confidence is then the model's probability that the question is
// substantive (factual plus analytical).
//
// Complexity is rule-based: chitchat is always simple; a query is deep when
// it is analytical, compares things, joins several clauses, or is long
// (about 25 words or 40 Han characters).
type Offline struct {
	m    *feat.Model
	pool sync.Pool // *feat.Appender
}

var (
	defaultOnce    sync.Once
	defaultOffline *Offline
	defaultErr     error
)

// NewOffline returns the offline classifier with the shipped model. The
// model is decoded once and shared (it is read-only).
func NewOffline() (*Offline, error) {
	defaultOnce.Do(func() {
		m, err := feat.Decode(modelBlob)
		if err != nil {
			defaultErr = fmt.Errorf("router: shipped model: %w", err)
			return
		}
		defaultOffline = newOffline(m)
	})
	return defaultOffline, defaultErr
}

func newOffline(m *feat.Model) *Offline {
	o := &Offline{m: m}
	o.pool.New = func() any { return &feat.Appender{Buf: make([]uint32, 0, 256)} }
	return o
}

// Classify implements Classifier. It never fails on text; an empty query is
// chitchat with low confidence (and so falls back to analytical under the
// default policy). It honours an already-cancelled ctx.
func (o *Offline) Classify(ctx context.Context, query string) (Profile, error) {
	r, err := o.ClassifyWithUsage(ctx, query)
	return r.Profile, err
}

// ClassifyWithUsage implements UsageClassifier; Usage is always zero.
func (o *Offline) ClassifyWithUsage(ctx context.Context, query string) (Result, error) {
	if err := ctx.Err(); err != nil {
		return Result{Source: "offline"}, fmt.Errorf("%w: offline: %w", ErrNoProfile, err)
	}
	ap := o.pool.Get().(*feat.Appender)
	an := ap.Query(query)
	probs := o.m.Probs(ap.Buf, an.Gate())
	o.pool.Put(ap)

	best := 0
	for c := 1; c < feat.K; c++ {
		if probs[c] > probs[best] {
			best = c
		}
	}
	p := Profile{QueryType: QueryType(feat.Classes[best]), Confidence: probs[best]}
	contrast := p.QueryType == Factual && an.Contrast && !an.Talk.Only
	if contrast {
		p = Profile{QueryType: Analytical, Confidence: min(1, probs[0]+probs[1])} // feat.Classes: factual, analytical
	}
	if an.Norm == "" && !an.Talk.Only { // nothing to read (an emoji such as 👍 is small talk)
		p = Profile{QueryType: Chitchat, Confidence: 0.34}
	}
	p.Complexity = complexity(p.QueryType, an)
	p.Reason = reason(p, an)
	if contrast {
		p.Reason += "; asks to compare: analytical"
	}
	return Result{Profile: p, Source: "offline"}, nil
}

func complexity(qtype QueryType, an feat.Analysis) string {
	switch {
	case qtype == Chitchat:
		return Simple
	case qtype == Analytical, an.Compare, an.Clauses >= 2:
		return Deep
	case an.Counts.Words >= 25 || an.Counts.Han >= 40:
		return Deep
	}
	return Simple
}

func reason(p Profile, an feat.Analysis) string {
	var b strings.Builder
	fmt.Fprintf(&b, "offline model: %s p=%.2f", p.QueryType, p.Confidence)
	switch {
	case an.Talk.Only:
		b.WriteString("; only small talk")
	case !an.Chat:
		b.WriteString("; no evidence of conversation: not chitchat")
	}
	if len(an.Cues) > 0 {
		b.WriteString("; cues: ")
		b.WriteString(strings.Join(an.Cues, ","))
	}
	return b.String()
}
