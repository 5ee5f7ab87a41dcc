package relevance_test

import (
	"context"
	"errors"
	"math"
	"sync"
	"testing"

	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/adaptrag/adaptrag/retrieval/relevance"
)

func doc(id, title, text string) retrieval.Chunk {
	return retrieval.Chunk{ID: id, Title: title, Text: text, ContentType: retrieval.ContentText}
}

func faqChunk(id, q, a string) retrieval.Chunk {
	return retrieval.Chunk{ID: id, Title: q, Text: q, ContentType: retrieval.ContentFAQ,
		Meta: map[string]string{retrieval.MetaQuestion: q, retrieval.MetaAnswer: a}}
}

var (
	leaveEN = doc("leave-en", "Leave policy > Annual leave", "Statutory annual leave is 5 days a year with 1 to 10 years of total working experience, 10 days with 10 to 20 years, and 15 days with 20 years or more.")
	leaveZH = doc("leave-zh", "假期管理办法 > 年假", "年假天数按员工累计工作年限计算：累计工作满 1 年不满 10 年的，每年 5 天；满 10 年不满 20 年的，每年 10 天。")
	vpnEN   = doc("vpn-en", "IT > VPN", "If the SBConnect VPN client cannot connect, check your internet access and the system clock.")
	faqZH   = faqChunk("faq-015", "年假有多少天？", "累计工作满 1 年不满 10 年每年 5 天。")
	limitEN = doc("limits-en", "Expense Policy > Approval limits", "Claims are submitted in the OA system and approved according to the amount of a single claim, tax included: "+
		"below 1,000 yuan: your direct manager approves. From 1,000 to 5,000 yuan: your direct manager, then your department head. "+
		"Above 5,000 yuan: your department head and the finance director. Splitting one expense into several claims to stay under a limit is a violation of this policy.")
)

func calibrate(t *testing.T, c *relevance.Calibrator, q string, chunks ...retrieval.Chunk) []float64 {
	t.Helper()
	hits := make([]retrieval.Hit, len(chunks))
	for i, ch := range chunks {
		hits[i] = retrieval.Hit{Chunk: ch, Method: retrieval.MethodDense, Score: 0.5}
	}
	if err := c.Calibrate(context.Background(), q, hits); err != nil {
		t.Fatal(err)
	}
	out := make([]float64, len(hits))
	for i, h := range hits {
		out[i] = h.Relevance
	}
	return out
}

func TestCalibrateRanksAnswerAboveUnrelated(t *testing.T) {
	c := relevance.New(relevance.Config{})
	for _, tc := range []struct {
		q               string
		good, bad       retrieval.Chunk
		minGood, maxBad float64
	}{
		{"How many days of annual leave do I get?", leaveEN, vpnEN, relevance.DefaultMinRelevance, relevance.DefaultMinRelevance},
		{"年假有多少天？", leaveZH, vpnEN, relevance.DefaultMinRelevance, 0.05},
		{"年假有多少天？", faqZH, leaveEN, 0.9, 0.05},
		{"The VPN cannot connect", vpnEN, leaveZH, relevance.DefaultMinRelevance, 0.05},
		// Plurals and thousands separators: expenses/expense, 5000/5,000.
		{"Compare the approval chains for expenses under 1000 and over 5000", limitEN, vpnEN, relevance.DefaultMinRelevance, 0.05},
	} {
		r := calibrate(t, c, tc.q, tc.good, tc.bad)
		if r[0] < tc.minGood || r[1] > tc.maxBad || r[0] <= r[1] {
			t.Errorf("%q: %s %.3f (want >= %.2f), %s %.3f (want <= %.2f)", tc.q, tc.good.ID, r[0], tc.minGood, tc.bad.ID, r[1], tc.maxBad)
		}
	}
}

// TestCalibrateIgnoresMethod checks the promise that makes one threshold
// possible: a chunk's relevance depends on the query and the chunk only,
// not on the method, score, rank or company of the hit.
func TestCalibrateIgnoresMethod(t *testing.T) {
	c := relevance.New(relevance.Config{})
	ctx := context.Background()
	q := "How many days of annual leave do I get?"
	alone := []retrieval.Hit{{Chunk: leaveEN, Method: retrieval.MethodDense, Score: 0.71}}
	if err := c.Calibrate(ctx, q, alone); err != nil {
		t.Fatal(err)
	}
	crowd := []retrieval.Hit{
		{Chunk: vpnEN, Method: retrieval.MethodRerank, Score: 1.3},
		{Chunk: faqZH, Method: retrieval.MethodRerank, Score: 1.1},
		{Chunk: leaveEN, Method: retrieval.MethodRerank, Score: 0.9, Collection: "docs"},
	}
	for _, m := range []retrieval.Method{retrieval.MethodBM25, retrieval.MethodHybrid, retrieval.MethodRerank, retrieval.MethodFused} {
		for i := range crowd {
			crowd[i].Method = m
		}
		if err := c.Calibrate(ctx, q, crowd); err != nil {
			t.Fatal(err)
		}
		if crowd[2].Relevance != alone[0].Relevance {
			t.Errorf("method %s: relevance %v, alone with method dense %v", m, crowd[2].Relevance, alone[0].Relevance)
		}
	}
}

func TestCalibrateChangesOnlyRelevance(t *testing.T) {
	c := relevance.New(relevance.Config{})
	hits := []retrieval.Hit{{Chunk: leaveEN, Method: retrieval.MethodHybrid, Score: 0.032, Collection: "docs"}}
	want := hits[0]
	if err := c.Calibrate(context.Background(), "annual leave", hits); err != nil {
		t.Fatal(err)
	}
	got := hits[0]
	if got.Relevance <= 0 || got.Relevance > 1 {
		t.Fatalf("relevance %v", got.Relevance)
	}
	got.Relevance = 0
	if got.Score != want.Score || got.Method != want.Method || got.Collection != want.Collection || got.Chunk.Text != want.Chunk.Text {
		t.Errorf("Calibrate changed more than Relevance: %+v", got)
	}
}

func TestCalibrateEmpty(t *testing.T) {
	c := relevance.New(relevance.Config{})
	if err := c.Calibrate(context.Background(), "anything", nil); err != nil {
		t.Errorf("no hits: %v", err)
	}
	for _, q := range []string{"", "  ", "？！…", "\xff"} {
		r := calibrate(t, c, q, leaveEN, faqZH)
		if r[0] != 0 || r[1] != 0 {
			t.Errorf("query %q without terms: relevance %v, want 0", q, r)
		}
	}
	r := calibrate(t, c, "annual leave", doc("empty", "", ""))
	if r[0] < 0 || r[0] >= relevance.DefaultMinRelevance {
		t.Errorf("empty chunk: relevance %v", r[0])
	}
}

func TestCalibrateContext(t *testing.T) {
	c := relevance.New(relevance.Config{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	hits := make([]retrieval.Hit, 40)
	for i := range hits {
		hits[i].Chunk = leaveEN
	}
	err := c.Calibrate(ctx, "annual leave", hits)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled context: %v", err)
	}
	if hits[0].Relevance != 0 {
		t.Errorf("a done context calibrated hits")
	}
}

func TestMalformedModel(t *testing.T) {
	bad := relevance.DefaultModel()
	bad.FAQ.Weights = bad.FAQ.Weights[:2]
	c := relevance.New(relevance.Config{Model: &bad})
	err := c.Calibrate(context.Background(), "q", []retrieval.Hit{{Chunk: leaveEN}})
	if !errors.Is(err, relevance.ErrModel) || !errors.Is(err, retrieval.ErrInvalid) {
		t.Errorf("short weights: %v", err)
	}
	nan := relevance.DefaultModel()
	nan.Doc.Intercept = math.NaN()
	if err := nan.Check(); !errors.Is(err, relevance.ErrModel) {
		t.Errorf("NaN intercept: %v", err)
	}
	if err := relevance.DefaultModel().Check(); err != nil {
		t.Errorf("default model: %v", err)
	}
	if n := len(relevance.FeatureNames()); n != len(relevance.DefaultModel().Doc.Weights) {
		t.Errorf("%d feature names, %d weights", n, len(relevance.DefaultModel().Doc.Weights))
	}
}

// TestConfigModelIsCopied checks that a caller editing its Model after New
// cannot change a running Calibrator.
func TestConfigModelIsCopied(t *testing.T) {
	m := relevance.DefaultModel()
	c := relevance.New(relevance.Config{Model: &m})
	before := calibrate(t, c, "annual leave", leaveEN)[0]
	m.Doc.Weights[0] = -100
	m.Doc.Intercept = -100
	if after := calibrate(t, c, "annual leave", leaveEN)[0]; after != before {
		t.Errorf("relevance moved from %v to %v after the caller edited its model", before, after)
	}
	d := relevance.DefaultModel()
	d.Doc.Weights[0] = 42
	if relevance.DefaultModel().Doc.Weights[0] == 42 {
		t.Error("DefaultModel shares its slices")
	}
}

func TestExplainAgrees(t *testing.T) {
	c := relevance.New(relevance.Config{})
	for _, ch := range []retrieval.Chunk{leaveEN, leaveZH, faqZH, vpnEN} {
		q := "年假有多少天？ annual leave"
		e, err := c.Explain(q, retrieval.Hit{Chunk: ch})
		if err != nil {
			t.Fatal(err)
		}
		if r := calibrate(t, c, q, ch)[0]; r != e.Relevance {
			t.Errorf("%s: Explain %v, Calibrate %v", ch.ID, e.Relevance, r)
		}
		if e.FAQ != (ch.ContentType == retrieval.ContentFAQ) || len(e.Features) != len(relevance.FeatureNames()) {
			t.Errorf("%s: %+v", ch.ID, e)
		}
	}
}

// TestFAQTextWithAnswer checks that an FAQ hit whose text the pipeline has
// replaced by question and answer is still matched on its question.
func TestFAQTextWithAnswer(t *testing.T) {
	c := relevance.New(relevance.Config{})
	joined := faqZH
	joined.Text = faqZH.Meta[retrieval.MetaQuestion] + "\n" + faqZH.Meta[retrieval.MetaAnswer]
	r := calibrate(t, c, "年假有多少天？", faqZH, joined)
	if r[0] != r[1] {
		t.Errorf("question only %v, question and answer %v", r[0], r[1])
	}
}

func TestCalibrateConcurrent(t *testing.T) {
	c := relevance.New(relevance.Config{})
	want := calibrate(t, c, "年假有多少天？", leaveZH, faqZH, vpnEN)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 50 {
				hits := []retrieval.Hit{{Chunk: leaveZH}, {Chunk: faqZH}, {Chunk: vpnEN}}
				if err := c.Calibrate(context.Background(), "年假有多少天？", hits); err != nil {
					t.Error(err)
					return
				}
				for i, h := range hits {
					if h.Relevance != want[i] {
						t.Errorf("hit %d: %v, want %v", i, h.Relevance, want[i])
						return
					}
				}
			}
		})
	}
	wg.Wait()
}

func TestCalibrateAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes allocation counts")
	}
	c := relevance.New(relevance.Config{})
	hits := benchHits(t, 50)
	ctx := context.Background()
	n := testing.AllocsPerRun(20, func() {
		if err := c.Calibrate(ctx, "Who approves an expense claim above 5,000 yuan?", hits); err != nil {
			t.Fatal(err)
		}
	})
	// The query is prepared once per call; passages allocate nothing.
	if n > 12 {
		t.Errorf("%.0f allocations per call of 50 hits; want <= 12", n)
	}
}

// FuzzCalibrate checks that any query and chunk give a relevance in
// [0, 1], the same whichever way the hit arrives, without panicking.
func FuzzCalibrate(f *testing.F) {
	f.Add("年假有多少天？", "假期管理办法", "年假每年 5 天", "", false)
	f.Add("annual leave", "Leave", "Statutory annual leave is 5 days.", "How much leave?", true)
	f.Add("\xff\xfe\x00", "\xe4", "\x80\x80", "\xef\xbc\xa1", true)
	c := relevance.New(relevance.Config{})
	f.Fuzz(func(t *testing.T, query, title, text, question string, faq bool) {
		ch := retrieval.Chunk{ID: "x", Title: title, Text: text}
		if faq {
			ch.ContentType = retrieval.ContentFAQ
			ch.Meta = map[string]string{retrieval.MetaQuestion: question}
		}
		hits := []retrieval.Hit{{Chunk: ch, Method: retrieval.MethodDense}, {Chunk: ch, Method: retrieval.MethodRerank, Score: math.NaN()}}
		if err := c.Calibrate(context.Background(), query, hits); err != nil {
			t.Fatal(err)
		}
		r := hits[0].Relevance
		if math.IsNaN(r) || r < 0 || r > 1 || hits[1].Relevance != r {
			t.Fatalf("relevance %v and %v", r, hits[1].Relevance)
		}
	})
}
