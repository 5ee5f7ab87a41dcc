package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/adaptrag/adaptrag/retrieval/qdrant/qdranttest"
)

// cli runs the command in-process with captured streams and an empty
// environment for model settings (so tests are offline whatever the shell has).
func cli(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	for _, k := range []string{"OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL", "OLLAMA_HOST", "OPENAI_EMBEDDING_MODEL", "OLLAMA_EMBEDDING_MODEL", "OTEL_EXPORTER_OTLP_ENDPOINT"} {
		t.Setenv(k, "")
	}
	var out, errb bytes.Buffer
	code = run(context.Background(), &env{stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}, args)
	return out.String(), errb.String(), code
}

func TestPlanSeedExamples(t *testing.T) {
	type want map[string]any
	for _, tt := range []struct {
		args   []string
		intent want
		plan   want
	}{
		{[]string{"异地入职材料办理时需要准备哪些资料和审批信息"},
			want{"intent": "FAQ_QUERY"},
			want{"run_faq": true, "run_doc": true, "doc_top_k": 10.0, "faq_direct_threshold": 0.64, "final_context_top_n": 4.0, "use_query_variants": false, "reason": "faq_first"}},
		{[]string{"公司会议室预约规则在哪里查看以及需要遵守哪些流程要求"},
			want{"intent": "KNOWLEDGE_QUERY"},
			want{"doc_top_k": 24.0, "final_context_top_n": 5.0, "use_query_variants": true, "reason": "knowledge_doc_enriched"}},
		{[]string{"--history", "报销流程是什么", "那审批呢"},
			want{"intent": "FOLLOW_UP", "requires_rewrite": true},
			want{"faq_top_k": 24.0, "doc_top_k": 24.0, "use_query_variants": true, "reason": "history_aware_follow_up"}},
		{[]string{"报销费用超过5000需要谁审批"},
			want{},
			want{"question_category": "pricing", "doc_top_k": 24.0, "faq_direct_threshold": 0.84, "final_context_top_n": 6.0, "reason": "faq_first_short_query_guard_pricing_guard"}},
		{[]string{"材料清单里的付款金额字段是什么"},
			want{},
			want{"prefer_table": true, "faq_direct_exact_only": true, "final_context_top_n": 7.0, "reason": "faq_first_pricing_guard_table_row_preferred"}},
	} {
		t.Run(tt.args[len(tt.args)-1], func(t *testing.T) {
			out, errs, code := cli(t, append([]string{"plan", "--json"}, tt.args...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			var got struct {
				Decision map[string]any `json:"decision"`
				Intent   map[string]any `json:"intent"`
				Plan     map[string]any `json:"retrieval_plan"`
			}
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if got.Decision["action"] != "retrieval" {
				t.Errorf("decision %v", got.Decision)
			}
			for k, v := range tt.intent {
				if got.Intent[k] != v {
					t.Errorf("intent.%s = %v, want %v", k, got.Intent[k], v)
				}
			}
			for k, v := range tt.plan {
				if got.Plan[k] != v {
					t.Errorf("retrieval_plan.%s = %v, want %v", k, got.Plan[k], v)
				}
			}
		})
	}
}

func TestAskJSON(t *testing.T) {
	for _, tt := range []struct {
		q      string
		route  string
		chunks int
	}{
		{"你好，你能做什么？", "chitchat", 0},
		{"退货要在几天内发起？", "factual", 3},
		{"对比一下差旅报销和招待报销的流程差异", "analytical", 8},
		{"你好，顺便问下电子发票多久能开好", "factual", -1},
	} {
		t.Run(tt.q, func(t *testing.T) {
			out, errs, code := cli(t, "ask", "--json", tt.q)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			var got map[string]json.RawMessage
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatal(err)
			}
			for _, k := range []string{"version", "route", "path", "passages", "answer", "citations", "usage", "trace_id"} {
				if _, ok := got[k]; !ok {
					t.Errorf("missing key %q", k)
				}
			}
			var route struct {
				QueryType  string   `json:"query_type"`
				Confidence *float64 `json:"confidence"`
				Reason     *string  `json:"reason"`
				Fallback   *bool    `json:"fallback"`
			}
			var docs []struct {
				ID, Source, Text string
				Relevance        float64
			}
			var usage struct {
				Nodes []struct {
					Node      string   `json:"node"`
					Ms        *float64 `json:"ms"`
					TokensIn  *int     `json:"tokens_in"`
					TokensOut *int     `json:"tokens_out"`
				} `json:"nodes"`
			}
			var traceID string
			json.Unmarshal(got["route"], &route)
			json.Unmarshal(got["passages"], &docs)
			json.Unmarshal(got["usage"], &usage)
			json.Unmarshal(got["trace_id"], &traceID)
			if route.QueryType != tt.route || route.Confidence == nil || route.Reason == nil || route.Fallback == nil {
				t.Errorf("route %s", got["route"])
			}
			if tt.chunks == 0 && len(docs) != 0 || tt.chunks > 0 && (len(docs) == 0 || len(docs) > tt.chunks) {
				t.Errorf("%d docs, want %d at most (and some)", len(docs), tt.chunks)
			}
			for _, d := range docs {
				if d.ID == "" || d.Text == "" || d.Source == "" {
					t.Errorf("doc lacks id, source or text: %+v", d)
				}
			}
			if len(usage.Nodes) == 0 || usage.Nodes[0].Ms == nil || len(traceID) != 32 {
				t.Errorf("usage %s, trace id %q", got["usage"], traceID)
			}
		})
	}
}

func TestAskHuman(t *testing.T) {
	out, _, code := cli(t, "ask", "对比一下差旅报销和招待报销的流程差异")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, s := range []string{"route:  analytical", "path:   __start__ -> decide -> understand -> classify -> plan -> expand -> faq -> hybrid -> rerank -> evidence -> passages -> generate -> __end__", "50 candidates -> 8 passages", "evidence (", "relevance", "usage:", "rerank"} {
		if !strings.Contains(out, s) {
			t.Errorf("output lacks %q:\n%s", s, out)
		}
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{{}, {"nope"}, {"ask"}, {"ask", "a", "b"}, {"graph", "--format", "png"}, {"ask", "--classifier", "llm", "hi"}, {"eval"}, {"bench"}} {
		_, errs, code := cli(t, args...)
		if code != 2 || errs == "" {
			t.Errorf("%v: exit %d, stderr %q; want 2 with a message", args, code, errs)
		}
	}
	// A question the pipeline refuses is a usage error too.
	for _, q := range []string{"\xff\xfe", "", "  \t"} {
		_, errs, code := cli(t, "ask", q)
		if code != 2 || !strings.Contains(errs, "question") {
			t.Errorf("ask %q: exit %d, %q; want 2 naming the question", q, code, errs)
		}
	}
}

func TestGraphFormats(t *testing.T) {
	for _, f := range []string{"mermaid", "dot", "json", "text"} {
		out, errs, code := cli(t, "graph", "--format", f)
		if code != 0 || !strings.Contains(out, "classify") {
			t.Errorf("%s: exit %d %s", f, code, errs)
		}
	}
	out, _, _ := cli(t, "graph", "--format", "text", "--question", "你好，你能做什么？")
	if !strings.Contains(out, "path: __start__") {
		t.Errorf("no path highlighted:\n%s", out)
	}
	if dot, err := exec.LookPath("dot"); err == nil {
		out, _, _ := cli(t, "graph", "--format", "dot")
		cmd := exec.Command(dot, "-Tsvg")
		cmd.Stdin = strings.NewReader(out)
		if b, err := cmd.CombinedOutput(); err != nil || !bytes.Contains(b, []byte("<svg")) {
			t.Errorf("dot -Tsvg: %v %s", err, b)
		}
	}
}

func TestIngestThenAsk(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src", "hr")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(src, "pets.md"), []byte("# Pets policy\n\nDogs are allowed in the office on Fridays if they are quiet.\n"), 0o644)
	os.WriteFile(filepath.Join(src, "broken.csv"), []byte("a,b\n\"unterminated\n"), 0o644)
	store := "embedded:" + filepath.Join(dir, "kb")
	out, errs, code := cli(t, "ingest", "--store", store, filepath.Join(dir, "src"))
	if code != 1 || !strings.Contains(errs, "broken.csv") || !strings.Contains(out, "1 files") {
		t.Fatalf("ingest: exit %d\n%s\n%s", code, out, errs)
	}
	// Idempotent: a second ingest of the same files adds nothing new.
	cli(t, "ingest", "--store", store, filepath.Join(src, "pets.md"))
	out, errs, code = cli(t, "ask", "--json", "--store", store, "Are dogs allowed in the office?")
	if code != 0 || !strings.Contains(out, "Fridays") {
		t.Fatalf("ask on the ingested store: exit %d\n%s\n%s", code, out, errs)
	}
	// A faq.jsonl goes to the FAQ collection; its own question is answered
	// with its standard answer.
	faq := filepath.Join(dir, "faq.jsonl")
	os.WriteFile(faq, []byte(`{"id":"pets-1","question":"Can I bring my cat to work?","answer":"Cats are not allowed; dogs only on Fridays.","source":"hr","lang":"en"}`+"\n"), 0o644)
	if out, errs, code := cli(t, "ingest", "--store", store, faq); code != 0 || !strings.Contains(out, "1 FAQ entries") {
		t.Fatalf("faq ingest: exit %d\n%s\n%s", code, out, errs)
	}
	out, _, _ = cli(t, "ask", "--json", "--store", store, "Can I bring my cat to work?")
	if !strings.Contains(out, `"answered_by": "faq"`) || !strings.Contains(out, "Cats are not allowed") {
		t.Fatalf("FAQ question not answered from the FAQ:\n%s", out)
	}
}

func TestBenchCost(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the pipeline against a delayed loopback model")
	}
	out, errs, code := cli(t, "bench", "cost", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	dec := json.NewDecoder(strings.NewReader(out))
	for _, mode := range []string{"offline", "llm"} {
		var rep costReport
		if err := dec.Decode(&rep); err != nil {
			t.Fatal(err)
		}
		if rep.Mode != mode {
			t.Fatalf("mode %q, want %q", rep.Mode, mode)
		}
		an, ch, fa := rep.Classes["analytical"], rep.Classes["chitchat"], rep.Classes["factual"]
		if ch.Retrieved != 0 || ch.Chunks != 0 || fa.Retrieved != 3 || an.Retrieved < 8 {
			t.Errorf("%s: retrieved %v/%v/%v, want 0/3/at least 8", mode, ch.Retrieved, fa.Retrieved, an.Retrieved)
		}
		if fa.Chunks == 0 || fa.Chunks > 3 || an.Chunks == 0 || an.Chunks > 8 {
			t.Errorf("%s: kept %v/%v passages, want 1..3 / 1..8", mode, fa.Chunks, an.Chunks)
		}
		if mode == "llm" {
			// Small talk costs a fraction of a question that retrieves. (How a
			// factual question compares with an analytical one depends on
			// how many passages the relevance floor keeps for each; the
			// figures are in docs/benchmarks.md, not asserted here.)
			tok := func(c classCost) float64 { return c.TokensIn + c.TokensOut }
			if tok(ch) > 0.25*tok(an) || tok(ch) > 0.25*tok(fa) || tok(fa) == 0 || tok(an) == 0 {
				t.Errorf("tokens chitchat %.0f factual %.0f analytical %.0f: small talk over budget", tok(ch), tok(fa), tok(an))
			}
			if ch.LatencyMs > 0.5*an.LatencyMs {
				t.Errorf("latency chitchat %.1f analytical %.1f ms: small talk is not cheaper", ch.LatencyMs, an.LatencyMs)
			}
		}
	}
}

// TestHybridNeverWorseThanBetterLeg checks, on the shared evaluation sets
// when they are present, that hybrid retrieval's nDCG@10 is within 0.01 of
// the better of BM25 and dense on every set.
func TestHybridNeverWorseThanBetterLeg(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "shared", "data", "retrieval")
	if d := os.Getenv("ADAPTRAG_DATA"); d != "" {
		dir = filepath.Join(d, "retrieval")
	}
	sets, _ := filepath.Glob(filepath.Join(dir, "*", "corpus.jsonl"))
	if len(sets) == 0 {
		t.Skipf("no evaluation data under %s (set ADAPTRAG_DATA)", dir)
	}
	for _, c := range sets {
		set := filepath.Dir(c)
		t.Run(filepath.Base(set), func(t *testing.T) {
			score := map[string]float64{}
			for _, mode := range []string{"bm25", "dense", "hybrid"} {
				out, errs, code := cli(t, "eval", "retrieval", "--data", set, "--mode", mode, "--json")
				if code != 0 {
					t.Fatalf("%s: exit %d: %s", mode, code, errs)
				}
				var r map[string]any
				if err := json.Unmarshal([]byte(out), &r); err != nil {
					t.Fatal(err)
				}
				score[mode] = r["ndcg@10"].(float64)
			}
			best := max(score["bm25"], score["dense"])
			if score["hybrid"] < best-0.01 {
				t.Errorf("hybrid nDCG@10 %.4f < best leg %.4f - 0.01 (bm25 %.4f, dense %.4f)", score["hybrid"], best, score["bm25"], score["dense"])
			}
		})
	}
}

// The Qdrant path end to end: ingest into the in-process Qdrant fake through
// the real go-client, then ask through the pipeline (hybrid runs server-side).
func TestIngestThenAskQdrant(t *testing.T) {
	srv := qdranttest.Start(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "it")
	os.MkdirAll(src, 0o755)
	os.WriteFile(filepath.Join(src, "printers.md"), []byte("# Printers\n\nThe third-floor printer needs a badge tap before it releases a print job.\n"), 0o644)
	store := fmt.Sprintf("qdrant://%s/handbook", srv.Addr())
	if out, errs, code := cli(t, "ingest", "--store", store, src); code != 0 {
		t.Fatalf("ingest: exit %d\n%s\n%s", code, out, errs)
	}
	out, errs, code := cli(t, "ask", "--json", "--store", store, "Compare how the third-floor printer releases print jobs with other printers")
	if code != 0 || !strings.Contains(out, "badge tap") {
		t.Fatalf("ask: exit %d\n%s\n%s", code, out, errs)
	}
	if len(srv.Queries()) == 0 {
		t.Error("the fake Qdrant server saw no query")
	}
}
