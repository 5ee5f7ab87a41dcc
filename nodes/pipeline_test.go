package nodes_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/adaptrag/adaptrag/graph"
	"github.com/adaptrag/adaptrag/kb"
	"github.com/adaptrag/adaptrag/llm"
	"github.com/adaptrag/adaptrag/llm/llmtest"
	"github.com/adaptrag/adaptrag/nodes"
	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/adaptrag/adaptrag/retrieval/embed"
	"github.com/adaptrag/adaptrag/retrieval/rerank"
	"github.com/adaptrag/adaptrag/router"
	"github.com/adaptrag/adaptrag/state"
)

// sample is the bundled handbook, built once per test binary.
var sample = sync.OnceValues(func() (*kb.KB, error) {
	return kb.Sample(context.Background(), embed.NewHashing(embed.HashingConfig{}))
})

// counting wraps a store and counts searches, to prove which routes touch it.
type counting struct {
	retrieval.Store
	dense, sparse, hybrid atomic.Int32
	fail                  error         // returned by every search when set
	delay                 time.Duration // waited (honouring ctx) before searching
}

func (c *counting) wait(ctx context.Context) error {
	if c.delay > 0 {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(c.delay):
		}
	}
	return c.fail
}

func (c *counting) SearchDense(ctx context.Context, r retrieval.Request) ([]retrieval.Hit, error) {
	c.dense.Add(1)
	if err := c.wait(ctx); err != nil {
		return nil, err
	}
	return c.Store.SearchDense(ctx, r)
}

func (c *counting) SearchSparse(ctx context.Context, r retrieval.Request) ([]retrieval.Hit, error) {
	c.sparse.Add(1)
	if err := c.wait(ctx); err != nil {
		return nil, err
	}
	return c.Store.SearchSparse(ctx, r)
}

func (c *counting) SearchHybrid(ctx context.Context, r retrieval.Request) ([]retrieval.Hit, error) {
	c.hybrid.Add(1)
	if err := c.wait(ctx); err != nil {
		return nil, err
	}
	return c.Store.SearchHybrid(ctx, r)
}

func (c *counting) total() int32 { return c.dense.Load() + c.sparse.Load() + c.hybrid.Load() }

type fixture struct {
	docs, faq *counting
	deps      nodes.Deps
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	k, err := sample()
	if err != nil {
		t.Fatal(err)
	}
	clf, err := router.NewOffline()
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{docs: &counting{Store: k.Target().Docs}, faq: &counting{Store: k.Target().FAQ}}
	f.deps = nodes.Deps{
		Docs: f.docs, FAQ: f.faq, Embedder: embed.NewHashing(embed.HashingConfig{}),
		Classifier: clf, Reranker: rerank.NewLexical(rerank.LexicalConfig{}),
	}
	return f
}

func (f *fixture) pipeline(t testing.TB, cfg nodes.Config) *nodes.Pipeline {
	t.Helper()
	p, err := nodes.New(f.deps, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func ask(t *testing.T, p *nodes.Pipeline, q string) nodes.Result {
	t.Helper()
	res, err := p.Ask(context.Background(), nodes.Request{Question: q}, nil)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return res
}

// The seed-002 acceptance: the three example questions take their routes
// with 0, 3 and 8 chunks, and a greeting followed by a question is factual.
func TestSeedExamples(t *testing.T) {
	f := newFixture(t)
	p := f.pipeline(t, nodes.Config{})
	for _, tt := range []struct {
		q      string
		route  string
		chunks int
	}{
		{"你好，你能做什么？", router.Chitchat, 0},
		{"退货要在几天内发起？", router.Factual, 3},
		{"对比一下差旅报销和招待报销的流程差异", router.Analytical, 8},
		{"你好，顺便问下电子发票多久能开好", router.Factual, 3},
	} {
		t.Run(tt.q, func(t *testing.T) {
			res := ask(t, p, tt.q)
			s := res.State
			if s.Route.QueryType != tt.route || s.Route.Fallback {
				t.Errorf("route %+v, want %s without fallback", s.Route, tt.route)
			}
			if len(s.Docs) != tt.chunks {
				t.Errorf("%d chunks, want %d", len(s.Docs), tt.chunks)
			}
			if s.Answer == "" {
				t.Error("no answer")
			}
			if tt.chunks > 0 && len(s.Citations) == 0 {
				t.Errorf("answer %q has no citations", s.Answer)
			}
		})
	}
}

func TestChitchatNeverRetrieves(t *testing.T) {
	f := newFixture(t)
	p := f.pipeline(t, nodes.Config{})
	for _, q := range []string{"你好，你能做什么？", "hello there!", "谢谢你"} {
		res := ask(t, p, q)
		if res.State.Route.QueryType != router.Chitchat {
			t.Fatalf("%s: route %s", q, res.State.Route.QueryType)
		}
	}
	if n := f.docs.total() + f.faq.total(); n != 0 {
		t.Fatalf("chitchat made %d store calls", n)
	}
}

func TestFactualAnswerIsGrounded(t *testing.T) {
	f := newFixture(t)
	res := ask(t, f.pipeline(t, nodes.Config{}), "退货要在几天内发起？")
	s := res.State
	if f.docs.dense.Load() != 1 || f.docs.hybrid.Load() != 0 {
		t.Errorf("factual searched dense %d / hybrid %d times, want 1 / 0", f.docs.dense.Load(), f.docs.hybrid.Load())
	}
	if !strings.Contains(s.Answer, "7") || !strings.Contains(s.Answer, "[") {
		t.Errorf("answer %q lacks the 7-day rule or a citation", s.Answer)
	}
	want := []string{nodes.NodeDecide, nodes.NodeClassify, nodes.NodePlan, nodes.NodeFAQ, nodes.NodeDense, nodes.NodeGenerate}
	if strings.Join(res.Path.Nodes, ",") != strings.Join(want, ",") {
		t.Errorf("path %v, want %v", res.Path.Nodes, want)
	}
	if len(s.Usage) != len(want) {
		t.Errorf("%d usage entries for %d nodes", len(s.Usage), len(want))
	}
}

func TestAnalyticalUsesHybridAndRerank(t *testing.T) {
	f := newFixture(t)
	res := ask(t, f.pipeline(t, nodes.Config{}), "对比一下差旅报销和招待报销的流程差异")
	s := res.State
	if f.docs.hybrid.Load() != 1 {
		t.Errorf("hybrid searched %d times", f.docs.hybrid.Load())
	}
	if s.Strategy.Candidates != 50 || len(s.Candidates) < 8 || s.Rerank.Reranker == "" || s.Rerank.Fallback {
		t.Errorf("strategy %+v, %d candidates, rerank %+v", s.Strategy, len(s.Candidates), s.Rerank)
	}
	var travel, hospitality bool
	for _, h := range s.Docs {
		travel = travel || strings.Contains(h.Chunk.Text, "差旅")
		hospitality = hospitality || strings.Contains(h.Chunk.Text, "招待")
	}
	if !travel || !hospitality {
		t.Errorf("context lacks one side of the comparison (travel %v, hospitality %v)", travel, hospitality)
	}
}

// failing is a classifier that always errors.
func failing(err error) router.Classifier {
	return router.ClassifierFunc(func(ctx context.Context, q string) (router.Profile, error) { return router.Profile{}, err })
}

func TestClassifierFailuresFallBackToAnalytical(t *testing.T) {
	slow := router.ClassifierFunc(func(ctx context.Context, q string) (router.Profile, error) {
		<-ctx.Done()
		return router.Profile{}, ctx.Err()
	})
	garbage := router.ClassifierFunc(func(ctx context.Context, q string) (router.Profile, error) {
		return router.Profile{QueryType: "poem", Complexity: "simple", Confidence: 3}, nil
	})
	unsure := router.ClassifierFunc(func(ctx context.Context, q string) (router.Profile, error) {
		return router.Profile{QueryType: router.Chitchat, Complexity: router.Simple, Confidence: 0.4, Reason: "unsure"}, nil
	})
	for name, tt := range map[string]struct {
		clf  router.Classifier
		kind string
	}{
		"error":          {failing(errors.New("boom")), "error"},
		"timeout":        {slow, "timeout"},
		"garbage":        {garbage, ""},
		"low confidence": {unsure, ""},
	} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t)
			f.deps.Classifier = tt.clf
			p := f.pipeline(t, nodes.Config{ClassifyTimeout: 20 * time.Millisecond})
			res := ask(t, p, "退货要在几天内发起？")
			s := res.State
			if s.Route.QueryType != router.Analytical || !s.Route.Fallback || s.Route.Cause == "" {
				t.Fatalf("route %+v, want analytical fallback with a cause", s.Route)
			}
			if len(s.Docs) != 8 || f.docs.hybrid.Load() != 1 {
				t.Errorf("fallback retrieved %d chunks with %d hybrid searches, want 8 and 1", len(s.Docs), f.docs.hybrid.Load())
			}
			if tt.kind != "" && (len(s.Errors) == 0 || s.Errors[0].Kind != tt.kind) {
				t.Errorf("errors %+v, want kind %s", s.Errors, tt.kind)
			}
		})
	}
}

func TestStoreFailures(t *testing.T) {
	t.Run("down", func(t *testing.T) {
		f := newFixture(t)
		f.docs.fail = retrieval.ErrUnavailable
		_, err := f.pipeline(t, nodes.Config{}).Ask(context.Background(), nodes.Request{Question: "退货要在几天内发起？"}, nil)
		var ne *graph.NodeError
		if !errors.Is(err, retrieval.ErrUnavailable) || !errors.As(err, &ne) || ne.Node != nodes.NodeDense {
			t.Fatalf("err = %v, want ErrUnavailable from the dense node", err)
		}
		if ne.Attempt != 2 || f.docs.dense.Load() != 2 {
			t.Errorf("%d attempts, %d searches; an unavailable store is retried once", ne.Attempt, f.docs.dense.Load())
		}
	})
	t.Run("timeout is not 'nothing found'", func(t *testing.T) {
		f := newFixture(t)
		f.docs.delay = time.Second
		res, err := f.pipeline(t, nodes.Config{RetrieveTimeout: 20 * time.Millisecond}).
			Ask(context.Background(), nodes.Request{Question: "对比一下差旅报销和招待报销的流程差异"}, nil)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want DeadlineExceeded", err)
		}
		if res.State.Answer != "" {
			t.Errorf("a timed-out run answered %q", res.State.Answer)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		f := newFixture(t)
		f.docs.delay = time.Second
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(20*time.Millisecond, cancel)
		start := time.Now()
		_, err := f.pipeline(t, nodes.Config{}).Ask(ctx, nodes.Request{Question: "退货要在几天内发起？"}, nil)
		if !errors.Is(err, context.Canceled) || time.Since(start) > 500*time.Millisecond {
			t.Fatalf("err = %v after %v, want prompt Canceled", err, time.Since(start))
		}
	})
}

type brokenReranker struct{}

func (brokenReranker) Rerank(context.Context, string, []retrieval.Hit, int) ([]retrieval.Hit, error) {
	return nil, errors.New("cross-encoder down")
}

func TestRerankFailureKeepsFusedOrder(t *testing.T) {
	f := newFixture(t)
	f.deps.Reranker = brokenReranker{}
	res := ask(t, f.pipeline(t, nodes.Config{}), "对比一下差旅报销和招待报销的流程差异")
	s := res.State
	if !s.Rerank.Fallback || len(s.Docs) != 8 || s.Docs[0].Method != "fused" {
		t.Fatalf("rerank %+v, %d docs (method %q), want the fused top 8 with a visible fallback", s.Rerank, len(s.Docs), s.Docs[0].Method)
	}
	if s.Docs[0].Chunk.ID != s.Candidates[0].Chunk.ID {
		t.Errorf("fallback changed the fused order")
	}
}

func TestBadQuestions(t *testing.T) {
	f := newFixture(t)
	p := f.pipeline(t, nodes.Config{})
	for _, tt := range []struct {
		q    string
		want error
	}{
		{"", nodes.ErrEmptyQuestion},
		{"   \n\t", nodes.ErrEmptyQuestion},
		{"退货\xff\xfe要几天", nodes.ErrInvalidUTF8},
		{strings.Repeat("报销", 2000), nodes.ErrQuestionTooLong},
	} {
		_, err := p.Ask(context.Background(), nodes.Request{Question: tt.q}, nil)
		if !errors.Is(err, tt.want) {
			t.Errorf("%.20q: err = %v, want %v", tt.q, err, tt.want)
		}
	}
	if f.docs.total() != 0 {
		t.Errorf("rejected questions reached the store")
	}
}

func TestNothingRelevantIsNotFound(t *testing.T) {
	f := newFixture(t)
	res := ask(t, f.pipeline(t, nodes.Config{}), "What is the boiling point of liquid nitrogen in kelvin?")
	if !strings.Contains(res.State.Answer, "could not find") || len(res.State.Citations) != 0 {
		t.Errorf("answer %q with %d citations, want a plain not-found", res.State.Answer, len(res.State.Citations))
	}
}

// fixedFAQ is an FAQ store whose best hit always has the given score.
type fixedFAQ struct {
	retrieval.Store
	score float64
}

func (f fixedFAQ) SearchDense(ctx context.Context, r retrieval.Request) ([]retrieval.Hit, error) {
	return []retrieval.Hit{{Score: f.score, Method: "dense", Chunk: retrieval.Chunk{
		ID: "faq:x", Source: "finance", Title: "报销审批找谁", ContentType: retrieval.ContentFAQ,
		Text: "报销审批找谁", Meta: map[string]string{"question": "报销审批找谁", "answer": "FAQ standard answer"},
	}}}, nil
}

// The plan's FAQ threshold governs the real run: a hit scoring 0.8 answers
// an ordinary FAQ question directly (threshold 0.64) but not a pricing
// question, whose guard raises the threshold to 0.84.
func TestPricingRaisesFAQThresholdInRun(t *testing.T) {
	f := newFixture(t)
	f.deps.FAQ = fixedFAQ{Store: f.faq, score: 0.8}
	p := f.pipeline(t, nodes.Config{})
	plain := ask(t, p, "异地入职材料办理时需要准备哪些资料和审批信息")
	if plain.State.AnsweredBy != nodes.NodeFAQAnswer || plain.State.Answer != "FAQ standard answer" {
		t.Errorf("ordinary question: answered by %s (threshold %.2f), want the FAQ's answer",
			plain.State.AnsweredBy, plain.State.Plan.FAQDirectThreshold)
	}
	pricing := ask(t, p, "报销费用超过5000需要谁审批")
	if pricing.State.Plan.FAQDirectThreshold != 0.84 || pricing.State.AnsweredBy == nodes.NodeFAQAnswer {
		t.Errorf("pricing question: threshold %.2f, answered by %s; want 0.84 and no direct FAQ answer",
			pricing.State.Plan.FAQDirectThreshold, pricing.State.AnsweredBy)
	}
}

func TestFAQDirectOnSampleKB(t *testing.T) {
	f := newFixture(t)
	p := f.pipeline(t, nodes.Config{})
	res := ask(t, p, "电子发票多久能开好？")
	s := res.State
	if s.AnsweredBy != nodes.NodeFAQAnswer || len(s.Citations) != 1 || s.Answer == "" {
		t.Errorf("exact FAQ question answered by %s: %q", s.AnsweredBy, s.Answer)
	}
}

func TestLLMGenerationThroughLangchaingo(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.Text("新品签收后 7 天内可发起退货 [1]。"))
	f := newFixture(t)
	gen, err := llm.NewOpenAI(llm.Config{BaseURL: srv.URL, APIKey: "test", Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	f.deps.Generator = gen
	res := ask(t, f.pipeline(t, nodes.Config{}), "退货要在几天内发起？")
	s := res.State
	if s.AnsweredBy != nodes.NodeGenerate || len(s.Citations) != 1 || s.Citations[0].N != 1 {
		t.Fatalf("answered by %s, citations %+v", s.AnsweredBy, s.Citations)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d model calls, want 1", len(reqs))
	}
	prompt := reqs[0].PromptText()
	if !strings.Contains(prompt, "[1]") || !strings.Contains(prompt, "[3]") || !strings.Contains(prompt, "never invent") {
		t.Errorf("prompt lacks numbered passages or the no-invention rule:\n%s", prompt)
	}
	in, out := s.TotalTokens()
	if in == 0 || out == 0 {
		t.Errorf("tokens %d/%d not recorded", in, out)
	}
}

func TestSpansCarryRoute(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	f := newFixture(t)
	f.deps.Classifier = failing(errors.New("model down"))
	res, err := f.pipeline(t, nodes.Config{TracerProvider: tp}).Ask(context.Background(), nodes.Request{Question: "退货要在几天内发起？"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.TraceID == "" {
		t.Error("no trace id")
	}
	found := false
	for _, s := range rec.Ended() {
		if s.Name() != nodes.NodeClassify {
			continue
		}
		found = true
		attrs := map[attribute.Key]attribute.Value{}
		for _, kv := range s.Attributes() {
			attrs[kv.Key] = kv.Value
		}
		if attrs["adaptrag.route"].AsString() != router.Analytical || !attrs["adaptrag.route.fallback"].AsBool() ||
			!strings.Contains(attrs["adaptrag.route.cause"].AsString(), "model down") || attrs["graph.route.label"].AsString() != router.Analytical {
			t.Errorf("classify span attributes %v", attrs)
		}
	}
	if !found {
		t.Fatal("no classify span")
	}
}

func TestConcurrentAsks(t *testing.T) {
	f := newFixture(t)
	p := f.pipeline(t, nodes.Config{})
	qs := []string{"你好，你能做什么？", "退货要在几天内发起？", "对比一下差旅报销和招待报销的流程差异"}
	var wg sync.WaitGroup
	for i := range 24 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := p.Ask(context.Background(), nodes.Request{Question: qs[i%3]}, nil)
			if err != nil || res.State.Answer == "" {
				t.Errorf("%s: %v", qs[i%3], err)
			}
		}()
	}
	wg.Wait()
}

func TestTenantScopeComesFromCaller(t *testing.T) {
	f := newFixture(t)
	res, err := f.pipeline(t, nodes.Config{}).Ask(context.Background(), nodes.Request{Question: "退货要在几天内发起？", Scope: retrieval.Scope{Tenant: "other"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.State.Docs) != 0 || !strings.Contains(res.State.Answer, "没有找到") {
		t.Errorf("another tenant saw %d chunks: %q", len(res.State.Docs), res.State.Answer)
	}
}

// A table question only takes an FAQ answer on an exact match, however
// high the similarity.
func TestTableQuestionNeedsExactFAQ(t *testing.T) {
	f := newFixture(t)
	f.deps.FAQ = fixedFAQ{Store: f.faq, score: 0.99}
	p := f.pipeline(t, nodes.Config{})
	res := ask(t, p, "材料清单里的付款金额字段是什么")
	if !res.State.Plan.FAQDirectExactOnly || res.State.AnsweredBy == nodes.NodeFAQAnswer {
		t.Errorf("table question: exact-only %v, answered by %s; want no direct FAQ answer for a similar entry",
			res.State.Plan.FAQDirectExactOnly, res.State.AnsweredBy)
	}
	exact := ask(t, p, "报销审批找谁")
	if exact.State.AnsweredBy != nodes.NodeFAQAnswer {
		t.Errorf("the FAQ's own question was answered by %s", exact.State.AnsweredBy)
	}
}

// The adaptive graph's diagram is pinned, and docs/architecture.md shows
// the same one.
func TestDiagramGolden(t *testing.T) {
	f := newFixture(t)
	got := f.pipeline(t, nodes.Config{}).Runnable().Diagram().Mermaid(nil)
	want, err := os.ReadFile("testdata/adaptive.mmd")
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("diagram changed; regenerate testdata/adaptive.mmd and docs/architecture.md with `go run ./cmd/adaptrag graph`:\n%s", got)
	}
	doc, err := os.ReadFile("../docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), got) {
		t.Error("docs/architecture.md does not show the current adaptive graph")
	}
}

func TestReplaceAndInsertNodes(t *testing.T) {
	f := newFixture(t)
	var guarded atomic.Int32
	p := f.pipeline(t, nodes.Config{
		Replace: map[string]nodes.NodeFuncRAG{nodes.NodeChitchat: func(_ context.Context, s state.RAG) (state.RAG, error) {
			s.Answer = "custom hello"
			return s, nil
		}},
		Insert: []nodes.Insert{{Name: "guard", Before: nodes.NodeGenerate, Fn: func(_ context.Context, s state.RAG) (state.RAG, error) {
			guarded.Add(1)
			s.Docs = s.Docs[:min(len(s.Docs), 2)]
			return s, nil
		}}},
	})
	if res := ask(t, p, "谢谢你的帮助！"); res.State.Answer != "custom hello" {
		t.Errorf("replaced chitchat answered %q", res.State.Answer)
	}
	res := ask(t, p, "对比一下差旅报销和招待报销的流程差异")
	if guarded.Load() != 1 || len(res.State.Docs) != 2 {
		t.Errorf("guard ran %d times, %d docs left", guarded.Load(), len(res.State.Docs))
	}
	if want := "rerank,guard,generate"; !strings.Contains(strings.Join(res.Path.Nodes, ","), want) {
		t.Errorf("path %v lacks %s", res.Path.Nodes, want)
	}
	last := res.State.Usage[len(res.State.Usage)-2]
	if last.Node != "guard" {
		t.Errorf("inserted node not timed: usage %+v", res.State.Usage)
	}
	if _, err := nodes.New(f.deps, nodes.Config{Replace: map[string]nodes.NodeFuncRAG{"nope": nil}}); !errors.Is(err, nodes.ErrConfig) {
		t.Errorf("replacing an unknown node: %v", err)
	}
}

func TestChitchatThroughModelForbidsKBFacts(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.Text("不客气！还有什么可以帮你？"))
	f := newFixture(t)
	gen, err := llm.NewOpenAI(llm.Config{BaseURL: srv.URL, APIKey: "test", Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	f.deps.Generator = gen
	res := ask(t, f.pipeline(t, nodes.Config{}), "谢谢你的帮助！")
	if res.State.Answer != "不客气！还有什么可以帮你？" || f.docs.total()+f.faq.total() != 0 {
		t.Fatalf("answer %q after %d store calls", res.State.Answer, f.docs.total()+f.faq.total())
	}
	reqs := srv.Requests()
	if len(reqs) != 1 || !strings.Contains(reqs[0].PromptText(), "Never state any company fact") {
		t.Errorf("chitchat prompt lacks the no-knowledge-base-facts rule: %+v", reqs)
	}
	if in, out := res.State.TotalTokens(); in == 0 || out == 0 {
		t.Errorf("chitchat tokens %d/%d not recorded", in, out)
	}
}

// countingEmbedder counts Embed calls.
type countingEmbedder struct {
	retrieval.Embedder
	calls atomic.Int32
}

func (c *countingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	c.calls.Add(1)
	return c.Embedder.Embed(ctx, texts)
}

func TestQueryEmbeddedOnce(t *testing.T) {
	f := newFixture(t)
	emb := &countingEmbedder{Embedder: f.deps.Embedder}
	f.deps.Embedder = emb
	res := ask(t, f.pipeline(t, nodes.Config{}), "退货要在几天内发起？")
	if f.faq.dense.Load() != 1 || f.docs.dense.Load() != 1 || emb.calls.Load() != 1 {
		t.Errorf("%d embeddings for %d FAQ and %d document searches, want 1 for both", emb.calls.Load(), f.faq.dense.Load(), f.docs.dense.Load())
	}
	if len(res.State.Docs) != 3 {
		t.Errorf("%d docs", len(res.State.Docs))
	}
}
