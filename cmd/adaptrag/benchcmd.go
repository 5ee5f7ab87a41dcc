package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/adaptrag/adaptrag"
	"github.com/adaptrag/adaptrag/llm"
	"github.com/adaptrag/adaptrag/llm/llmtest"
	"github.com/adaptrag/adaptrag/router"
)

// costQuestions are the three example questions first, then a few more per
// class, Chinese and English.
var costQuestions = map[router.QueryType][]string{
	router.Chitchat: {
		"你好，你能做什么？", "谢谢你的帮助！", "hello, who are you?", "good morning!",
	},
	router.Factual: {
		// Questions the FAQ does not answer verbatim: an FAQ direct answer
		// would skip retrieval and generation and cost less than this row.
		"退货要在几天内发起？", "P-204 便携电池质量问题多少天内可以退？", "What is the hotel limit for tier-1 cities?", "How long does a refund take to arrive?",
	},
	router.Analytical: {
		"对比一下差旅报销和招待报销的流程差异", "分析一下年假、病假和婚假在申请流程上的区别",
		"Compare the approval chains for expenses under 1000 and over 5000", "Why do quality returns and ordinary returns differ in who pays shipping?",
	},
}

// perTokenDelay is the loopback model's service time per token (prompt
// and completion alike): 150 µs, i.e. ~6,700 tokens/s, in the range of a
// hosted small model's prefill+decode; only the ratios between classes
// matter here.
const perTokenDelay = 150 * time.Microsecond

// classCost is one row of the cost table.
type classCost struct {
	Questions int      `json:"questions"`
	Retrieved float64  `json:"retrieved"`      // document candidates retrieved (mean), before rerank and the relevance floor
	Chunks    float64  `json:"chunks"`         // passages kept as evidence (mean)
	LatencyMs float64  `json:"latency_ms"`     // mean over the class's questions, like the tokens
	P50Ms     float64  `json:"latency_p50_ms"` // median over the class's questions
	TokensIn  float64  `json:"tokens_in"`      // mean per question
	TokensOut float64  `json:"tokens_out"`     // mean per question
	Asked     []string `json:"asked"`          // the questions that took this route
}

type costReport struct {
	Mode    string                         `json:"mode"`
	Classes map[router.QueryType]classCost `json:"classes"`
}

func runBench(ctx context.Context, e *env, args []string) error {
	if len(args) > 0 && args[0] == "retrieval" {
		return runBenchRetrieval(ctx, e, args[1:])
	}
	if len(args) == 0 || args[0] != "cost" {
		return fmt.Errorf("%w: bench cost [--json] [--mode offline|llm] | %s", errUsage, benchRetrievalUsage)
	}
	fs := newFlags(e, "bench cost")
	asJSON := fs.Bool("json", false, "print JSON objects, one per mode")
	mode := fs.String("mode", "both", "offline, llm (loopback OpenAI-compatible server) or both")
	if _, err := parse(fs, args[1:]); err != nil {
		return err
	}
	var modes []string
	switch *mode {
	case "both":
		modes = []string{"offline", "llm"}
	case "offline", "llm":
		modes = []string{*mode}
	default:
		return fmt.Errorf("%w: unknown mode %q", errUsage, *mode)
	}
	for _, m := range modes {
		rep, err := measureCost(ctx, m)
		if err != nil {
			return err
		}
		if *asJSON {
			if err := writeJSON(e.stdout, rep); err != nil {
				return err
			}
			continue
		}
		printCost(e, rep)
	}
	return nil
}

// measureCost asks every cost question and groups the figures by the route
// each question actually took (a misrouted question is costed where it
// went). In llm mode the classifier is the product's default with a model,
// the cascade, so classification tokens are spent only on unsure questions.
func measureCost(ctx context.Context, mode string) (costReport, error) {
	o := options{}
	if mode == "llm" {
		srv, err := loopbackModel()
		if err != nil {
			return costReport{}, err
		}
		defer srv.Close()
		o.llm = llm.Config{BaseURL: srv.URL, APIKey: "loopback", Model: "loopback-small"}
	}
	a, err := build(ctx, o)
	if err != nil {
		return costReport{}, err
	}
	defer a.Close(context.WithoutCancel(ctx))
	// One unmeasured question first, so that no class pays for warming up
	// (first allocations, connection set-up).
	if _, err := a.pipe.Ask(ctx, adaptrag.Request{Question: "warm-up: how do I reset my password?"}); err != nil {
		return costReport{}, err
	}
	lat := map[router.QueryType][]float64{}
	sums := map[router.QueryType]*classCost{}
	for _, class := range []router.QueryType{router.Chitchat, router.Factual, router.Analytical} {
		for _, q := range costQuestions[class] {
			start := time.Now()
			res, err := a.pipe.Ask(ctx, adaptrag.Request{Question: q})
			if err != nil {
				return costReport{}, fmt.Errorf("%s: %w", q, err)
			}
			route := res.Debug.State.Route.QueryType
			in, out := res.Debug.State.TotalTokens()
			c := sums[route]
			if c == nil {
				c = &classCost{}
				sums[route] = c
			}
			lat[route] = append(lat[route], float64(time.Since(start).Microseconds())/1000)
			c.Questions++
			c.Chunks += float64(len(res.Debug.State.Docs))
			c.Retrieved += float64(len(res.Debug.State.Candidates))
			c.TokensIn += float64(in)
			c.TokensOut += float64(out)
			c.Asked = append(c.Asked, q)
		}
	}
	rep := costReport{Mode: mode, Classes: map[router.QueryType]classCost{}}
	for route, c := range sums {
		n := float64(c.Questions)
		c.Retrieved, c.Chunks, c.TokensIn, c.TokensOut = c.Retrieved/n, c.Chunks/n, c.TokensIn/n, c.TokensOut/n
		c.P50Ms = median(lat[route])
		for _, l := range lat[route] {
			c.LatencyMs += l / n
		}
		rep.Classes[route] = *c
	}
	return rep, nil
}

// loopbackModel is an OpenAI-compatible server on 127.0.0.1 that reports
// usage and answers after perTokenDelay per token. It classifies like the
// offline classifier (so both modes take the same routes) and answers
// generation requests with a short cited sentence.
func loopbackModel() (*llmtest.Server, error) {
	off, err := router.NewOffline()
	if err != nil {
		return nil, err
	}
	return llmtest.Start(func(r llmtest.Request) llmtest.Reply {
		if len(r.ResponseFormat) > 0 {
			p, _ := off.Classify(context.Background(), r.LastUser())
			return llmtest.Reply{PerTokenDelay: perTokenDelay, Content: fmt.Sprintf(
				`{"query_type":%q,"complexity":%q,"confidence":%.2f,"reason":"loopback classification"}`, p.QueryType, p.Complexity, p.Confidence)}
		}
		if strings.Contains(r.PromptText(), "Passages:") {
			return llmtest.Reply{PerTokenDelay: perTokenDelay, Content: "According to the handbook, the answer is in the cited passage [1]. The related rule is described in [2]."}
		}
		return llmtest.Reply{PerTokenDelay: perTokenDelay, Content: "Hello! I can look things up in the knowledge base for you."}
	}), nil
}

func printCost(e *env, r costReport) {
	fmt.Fprintf(e.stdout, "mode: %s\n", r.Mode)
	fmt.Fprintln(e.stdout, "| class | questions | retrieved | kept | latency mean | latency p50 | tokens in | tokens out |")
	fmt.Fprintln(e.stdout, "|---|---:|---:|---:|---:|---:|---:|---:|")
	for _, class := range []router.QueryType{router.Chitchat, router.Factual, router.Analytical} {
		c := r.Classes[class]
		fmt.Fprintf(e.stdout, "| %s | %d | %.1f | %.1f | %.2f ms | %.2f ms | %.0f | %.0f |\n", class, c.Questions, c.Retrieved, c.Chunks, c.LatencyMs, c.P50Ms, c.TokensIn, c.TokensOut)
	}
	an := r.Classes[router.Analytical]
	for _, class := range []router.QueryType{router.Chitchat, router.Factual} {
		c := r.Classes[class]
		fmt.Fprintf(e.stdout, "%s / analytical: mean latency %.0f%%, tokens %s\n", class, 100*c.LatencyMs/an.LatencyMs, pct(c.TokensIn+c.TokensOut, an.TokensIn+an.TokensOut))
	}
	fmt.Fprintln(e.stdout)
}

func pct(a, b float64) string {
	if b == 0 {
		return "n/a (no tokens offline)"
	}
	return fmt.Sprintf("%.0f%%", 100*a/b)
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
