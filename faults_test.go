package adaptrag_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/adaptrag/adaptrag"
	"github.com/adaptrag/adaptrag/graph"
	"github.com/adaptrag/adaptrag/internal/faults"
	"github.com/adaptrag/adaptrag/llm"
	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/adaptrag/adaptrag/retrieval/relevance"
	"github.com/adaptrag/adaptrag/retrieval/rerank"
	"github.com/adaptrag/adaptrag/router"
	"github.com/adaptrag/adaptrag/samplekb"
	"github.com/adaptrag/adaptrag/state"
)

// Questions of the fault matrix, each reaching the seam it is asked with.
const (
	fqFactual    = "退货要在几天内发起？"              // dense, FAQ, calibrator, model
	fqAnalytical = "对比一下差旅报销和招待报销的流程差异"      // hybrid and the reranker
	fqChain      = "订单 A100 的产品适用哪份特殊规则？"    // the look-up, record by record
	fqTotal      = "这个月所有 P-204 订单的退款总额是多少？" // the look-up's totals
	modelAnswer  = "无理由退货须在签收后 7 天内发起 [1]。"  // what the healthy model answers
)

// outcome is what a faulted run must end with, as docs/architecture.md's
// failure table says.
type outcome int

const (
	// answered: the run succeeds as if nothing happened (a slow seam, a
	// store that finds less).
	answered outcome = iota + 1
	// failed: an error naming the node (*graph.NodeError) and matching the
	// case's sentinel; never an answer, never "not found".
	failed
	// routeFallback: the classifier failed; the analytical route is taken
	// and the cause recorded.
	routeFallback
	// rerankFallback: the reranker failed; the fused order is kept and the
	// fallback recorded.
	rerankFallback
	// extractive: the model failed; the extractive answer from the same
	// evidence, with a warning of the failure's kind.
	extractive
	// noFloor: the calibrator failed; the passages are kept without a
	// relevance floor, with a warning.
	noFloor
)

func (o outcome) String() string {
	return [...]string{"?", "answered", "failed", "route fallback", "rerank fallback", "extractive", "no floor"}[o]
}

// faultCase is one seam × fault × question of the matrix.
type faultCase struct {
	seam     string // faults.Seam*, or "faq store"
	kind     faults.Kind
	question string
	actor    string
	want     outcome
	nodes    []string        // failed: the node the error may name
	sentinel error           // failed: what the error matches; else the warning's kind when warn is set
	warn     state.ErrorKind // the kind of the warning the run must record ("" : none required)
}

// faultCases builds the matrix: every kind each seam's wrapper injects.
func faultCases() []faultCase {
	var cs []faultCase
	add := func(seam, q, actor string, k faults.Kind, want outcome, warn state.ErrorKind, sentinel error, nodes ...string) {
		cs = append(cs, faultCase{seam: seam, kind: k, question: q, actor: actor, want: want, warn: warn, sentinel: sentinel, nodes: nodes})
	}
	// A failing seam whose failure fails the run: the sentinel each kind
	// must match.
	failures := map[faults.Kind]error{
		faults.Error: faults.ErrInjected, faults.Unavailable: retrieval.ErrUnavailable, faults.Timeout: context.DeadlineExceeded,
		faults.Panic: graph.ErrPanic, faults.Partial: retrieval.ErrInvalid, faults.Empty: retrieval.ErrInvalid,
		faults.WrongCount: retrieval.ErrInvalid, faults.WrongLength: retrieval.ErrDimension, faults.NaN: retrieval.ErrInvalid,
		faults.Garbage: retrieval.ErrInvalid,
	}
	kinds := map[faults.Kind]state.ErrorKind{
		faults.Error: state.KindError, faults.Unavailable: state.KindUnavailable, faults.Timeout: state.KindTimeout,
		faults.Refused: state.KindRefused, faults.Empty: state.KindRefused,
	}

	// The model: a failure is answered extractively, with a warning of its
	// kind; a panic fails the run (keeping the evidence).
	for _, k := range faults.KindsOf(faults.SeamModel) {
		switch k {
		case faults.Slow, faults.Partial, faults.Garbage:
			add(faults.SeamModel, fqFactual, "", k, answered, "", nil)
		case faults.Panic:
			add(faults.SeamModel, fqFactual, "", k, failed, "", graph.ErrPanic, adaptrag.NodeGenerate)
		default:
			add(faults.SeamModel, fqFactual, "", k, extractive, kinds[k], nil)
		}
	}
	// The embedder: any failure fails the search node that needed the
	// vector, as a typed error.
	for _, k := range faults.KindsOf(faults.SeamEmbedder) {
		if k == faults.Slow {
			add(faults.SeamEmbedder, fqFactual, "", k, answered, "", nil)
			continue
		}
		add(faults.SeamEmbedder, fqFactual, "", k, failed, "", failures[k], adaptrag.NodeFAQ, adaptrag.NodeDense)
	}
	// The stores (documents on both retrieval routes, and the FAQ): a
	// store that fails fails its node; one that finds less is not an error.
	for _, st := range []struct{ seam, q, node string }{
		{faults.SeamStore, fqFactual, adaptrag.NodeDense},
		{faults.SeamStore, fqAnalytical, adaptrag.NodeHybrid},
		{"faq store", fqFactual, adaptrag.NodeFAQ},
	} {
		for _, k := range faults.KindsOf(faults.SeamStore) {
			switch k {
			case faults.Slow, faults.Partial, faults.Empty, faults.Unknown:
				add(st.seam, st.q, "", k, answered, "", nil)
			default:
				add(st.seam, st.q, "", k, failed, "", failures[k], st.node)
			}
		}
	}
	// The reranker fails open: the fused order, flagged.
	for _, k := range faults.KindsOf(faults.SeamReranker) {
		if k == faults.Slow {
			add(faults.SeamReranker, fqAnalytical, "", k, answered, "", nil)
			continue
		}
		warn := state.KindError // a malformed answer
		if k == faults.Unavailable || k == faults.Timeout {
			warn = kinds[k]
		}
		add(faults.SeamReranker, fqAnalytical, "", k, rerankFallback, warn, nil)
	}
	// The look-up, record by record and for totals: a failure fails the
	// node; a record that is not the one asked for is refused.
	for _, lk := range []struct{ q, actor, node string }{
		{fqChain, "u1", adaptrag.NodeHops},
		{fqTotal, "u2", adaptrag.NodeAggregate},
	} {
		for _, k := range faults.KindsOf(faults.SeamLookup) {
			switch {
			case k == faults.Slow, k == faults.Empty && lk.node == adaptrag.NodeAggregate:
				add(faults.SeamLookup, lk.q, lk.actor, k, answered, "", nil)
			default:
				add(faults.SeamLookup, lk.q, lk.actor, k, failed, "", failures[k], lk.node)
			}
		}
	}
	// The calibrator: a failure or an answer outside [0, 1] keeps the
	// passages without a floor; it has no time limit of its own, so a hang
	// ends with the caller's deadline, as a timeout.
	for _, k := range faults.KindsOf(faults.SeamCalibrator) {
		switch k {
		case faults.Slow, faults.Partial:
			add(faults.SeamCalibrator, fqFactual, "", k, answered, "", nil)
		case faults.Timeout, faults.Panic:
			add(faults.SeamCalibrator, fqFactual, "", k, failed, "", failures[k], adaptrag.NodeEvidence)
		case faults.NaN, faults.OutOfRange:
			add(faults.SeamCalibrator, fqFactual, "", k, noFloor, state.KindInvalid, nil)
		default:
			add(faults.SeamCalibrator, fqFactual, "", k, noFloor, kinds[k], nil)
		}
	}
	// The classifier: any failure or unusable profile takes the analytical
	// route, recorded; a panic fails the run like any node's.
	for _, k := range faults.KindsOf(faults.SeamClassifier) {
		switch k {
		case faults.Slow:
			add(faults.SeamClassifier, fqFactual, "", k, answered, "", nil)
		case faults.Panic:
			add(faults.SeamClassifier, fqFactual, "", k, failed, "", graph.ErrPanic, adaptrag.NodeClassify)
		case faults.Error, faults.Unavailable, faults.Timeout:
			add(faults.SeamClassifier, fqFactual, "", k, routeFallback, kinds[k], nil)
		default:
			add(faults.SeamClassifier, fqFactual, "", k, routeFallback, "", nil)
		}
	}
	return cs
}

// The fault matrix: every seam of the pipeline (model, embedder, document
// and FAQ stores, reranker, look-up, calibrator, classifier) × every kind
// of fault its wrapper injects (errors, outages, timeouts, slowness,
// malformed payloads, partial results, panics), asked through Ask on the
// bundled sample. Each run must end as the failure table of
// docs/architecture.md says, with no panic escaping, no hang, no timeout
// taken for "not found", and output that still encodes as JSON.
func TestFaultMatrix(t *testing.T) {
	cases := faultCases()
	outcomes := map[outcome]int{}
	for _, tc := range cases {
		name := fmt.Sprintf("%s/%s/%s", tc.seam, tc.kind, tc.question)
		outcomes[tc.want]++
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			runFaultCase(t, tc)
		})
	}
	t.Cleanup(func() {
		t.Logf("fault matrix: %d cases over 8 seams (%v)", len(cases), outcomes)
	})
}

// faultPipeline builds the sample's pipeline with tc's seam wrapped.
func faultPipeline(t *testing.T, tc faultCase, in *faults.Injector) *adaptrag.Pipeline {
	f := newFixture(t)
	d := faultStageTimeout(tc.kind)
	f.opts.ClassifyTimeout = d
	f.opts.RetrieveTimeout = d
	f.opts.RerankTimeout = d
	f.opts.GenerateTimeout = d
	f.deps.Lookup = samplekb.Lookup()
	switch tc.seam {
	case faults.SeamModel:
		f.deps.Generator = faults.Model(llm.GeneratorFunc(func(context.Context, llm.Request) (llm.Response, error) {
			return llm.Response{Text: modelAnswer}, nil
		}), in)
	case faults.SeamEmbedder:
		f.deps.Embedder = faults.Embedder(f.deps.Embedder, in)
	case faults.SeamStore:
		f.deps.Docs = faults.Searcher(f.deps.Docs, in)
	case "faq store":
		f.deps.FAQ = faults.Searcher(f.deps.FAQ, in)
	case faults.SeamReranker:
		f.deps.Reranker = faults.Reranker(rerank.NewLexical(rerank.LexicalConfig{}), in)
	case faults.SeamLookup:
		f.deps.Lookup = faults.Lookup(f.deps.Lookup, in)
	case faults.SeamCalibrator:
		f.deps.Calibrator = faults.Calibrator(relevance.New(relevance.Config{}), in)
	case faults.SeamClassifier:
		off, err := router.NewOffline()
		if err != nil {
			t.Fatal(err)
		}
		f.deps.Classifier = faults.Classifier(off, in)
	default:
		t.Fatalf("unknown seam %q", tc.seam)
	}
	return f.pipeline(t)
}

// faultStageTimeout is the per-stage timeout of a case: short where the
// case is about a seam that never answers (the timeout must fire), and
// generous elsewhere, so that a loaded machine does not turn a 5 ms slow
// seam into a timeout (CI failed so at a load average of 26).
func faultStageTimeout(k faults.Kind) time.Duration {
	if k == faults.Timeout {
		return 50 * time.Millisecond
	}
	return 2 * time.Second
}

func runFaultCase(t *testing.T, tc faultCase) {
	in := &faults.Injector{Kind: tc.kind, Delay: 5 * time.Millisecond}
	p := faultPipeline(t, tc, in)
	// The caller's deadline: the only bound on a seam without one of its own.
	ctx, cancel := context.WithTimeout(context.Background(), 10*faultStageTimeout(tc.kind))
	defer cancel()
	start := time.Now()
	var res *adaptrag.Result
	var err error
	func() {
		defer func() {
			if p := recover(); p != nil {
				t.Fatalf("a panic escaped Ask: %v", p)
			}
		}()
		res, err = p.Ask(ctx, adaptrag.Request{Question: tc.question, Actor: tc.actor})
	}()
	took := time.Since(start)
	if in.Faulted() == 0 {
		t.Fatalf("the %s seam was never called (%d calls): the question does not reach it", tc.seam, in.Calls())
	}
	if limit := 4 * faultStageTimeout(tc.kind); took > max(limit, 2*time.Second) {
		t.Errorf("the run took %v (limit %v)", took, max(limit, 2*time.Second))
	}
	if res == nil {
		t.Fatalf("no result (err %v): a run that started must report how far it got", err)
	}
	if _, jerr := json.Marshal(res); jerr != nil {
		t.Errorf("the result does not encode as JSON (ask --json, the service): %v", jerr)
	}
	// Citations point into the evidence; no passage is there twice.
	for _, c := range res.Citations {
		if c.N < 1 || c.N > len(res.Docs) {
			t.Errorf("citation [%d] of %d passages", c.N, len(res.Docs))
		}
	}
	seen := map[string]bool{}
	for _, d := range res.Docs {
		if seen[d.ID] {
			t.Errorf("passage %s is in the evidence twice", d.ID)
		}
		seen[d.ID] = true
	}
	if tc.want != failed && err != nil {
		t.Fatalf("err = %v, want %s", err, tc.want)
	}
	warned := func(node string, kind state.ErrorKind) {
		t.Helper()
		if !slices.ContainsFunc(res.Warnings, func(w state.Warning) bool { return w.Node == node && (kind == "" || w.Kind == kind) }) {
			t.Errorf("warnings %+v, want one from %s of kind %q", res.Warnings, node, kind)
		}
	}
	switch tc.want {
	case answered:
		if res.Answer == "" || res.AnsweredBy == "" {
			t.Errorf("no answer: %q (%s)", res.Answer, res.AnsweredBy)
		}
		if res.Route.Fallback || res.Rerank != nil && res.Rerank.Fallback {
			t.Errorf("a healthy run fell back: route %+v, rerank %+v", res.Route, res.Rerank)
		}
	case failed:
		var ne *graph.NodeError
		if !errors.As(err, &ne) || !slices.Contains(tc.nodes, ne.Node) {
			t.Fatalf("err = %v, want a *graph.NodeError from %v", err, tc.nodes)
		}
		if !errors.Is(err, tc.sentinel) {
			t.Errorf("err = %v, want it to match %v", err, tc.sentinel)
		}
		if tc.sentinel == context.DeadlineExceeded && !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("a timeout reported as %v", err)
		}
		if res.Answer != "" || res.AnsweredBy == state.ByNotFound {
			t.Errorf("a failed run answered %q (%s)", res.Answer, res.AnsweredBy)
		}
		if !slices.Contains(res.Path, ne.Node) {
			t.Errorf("path %v does not reach the failed node %s", res.Path, ne.Node)
		}
		if errors.Is(err, retrieval.ErrUnavailable) && slices.Contains([]string{adaptrag.NodeFAQ, adaptrag.NodeDense, adaptrag.NodeHybrid}, ne.Node) && ne.Attempt != 2 {
			t.Errorf("an unavailable store or embedder is retried once: %d attempts", ne.Attempt)
		}
		if tc.seam == faults.SeamModel && len(res.Docs) == 0 {
			t.Errorf("the evidence was lost with the model")
		}
	case routeFallback:
		if res.Route.QueryType != router.Analytical || !res.Route.Fallback || res.Route.Cause == "" {
			t.Errorf("route %+v, want the analytical fallback with its cause", res.Route)
		}
		if tc.warn != "" {
			warned(adaptrag.NodeClassify, tc.warn)
		}
	case rerankFallback:
		if res.Rerank == nil || !res.Rerank.Fallback || res.Rerank.Cause == "" || len(res.Docs) == 0 {
			t.Fatalf("rerank %+v with %d passages, want the fused order, flagged", res.Rerank, len(res.Docs))
		}
		// The passages keep the fused order; the relevance floor may have
		// dropped some of the fused candidates in between.
		cands := res.Debug.State.Candidates
		next := 0
		for i, d := range res.Docs {
			for next < len(cands) && cands[next].Chunk.ID != d.ID {
				next++
			}
			if d.Method != retrieval.MethodFused || next == len(cands) {
				t.Errorf("passage %d is %s (%s), not the fused order", i+1, d.ID, d.Method)
			}
			next++
		}
		warned(adaptrag.NodeRerank, tc.warn)
	case extractive:
		if res.AnsweredBy != state.ByExtractive || len(res.Docs) == 0 || len(res.Citations) == 0 {
			t.Errorf("answered by %s with %d passages, want the extractive answer with its evidence", res.AnsweredBy, len(res.Docs))
		}
		warned(adaptrag.NodeGenerate, tc.warn)
	case noFloor:
		if len(res.Docs) == 0 || res.Answer == "" {
			t.Errorf("%d passages, answer %q: the passages must be kept", len(res.Docs), res.Answer)
		}
		for _, d := range res.Docs {
			if d.Relevance != 0 {
				t.Errorf("passage %s keeps relevance %v from a calibrator that failed", d.ID, d.Relevance)
			}
		}
		warned(adaptrag.NodeEvidence, tc.warn)
	}
	if tc.kind == faults.Timeout && res.AnsweredBy == state.ByNotFound {
		t.Errorf("a timeout answered as not found")
	}
	if strings.Contains(res.Answer, "\x1b") && res.AnsweredBy != state.ByModel {
		t.Errorf("control characters in an answer the pipeline wrote: %q", res.Answer)
	}
}
