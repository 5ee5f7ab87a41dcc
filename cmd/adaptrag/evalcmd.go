package main

import (
	"context"
	"fmt"
	"slices"

	"github.com/adaptrag/adaptrag/llm"
	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/adaptrag/adaptrag/retrieval/embed"
	"github.com/adaptrag/adaptrag/retrieval/eval"
	"github.com/adaptrag/adaptrag/retrieval/memstore"
	"github.com/adaptrag/adaptrag/retrieval/rerank"
	"github.com/adaptrag/adaptrag/router"
)

func runEval(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("%w: eval retrieval|router|conversation|kb", errUsage)
	}
	switch args[0] {
	case "retrieval":
		return evalRetrieval(ctx, e, args[1:])
	case "router":
		return evalRouter(ctx, e, args[1:])
	case "conversation":
		return evalConversation(ctx, e, args[1:])
	case "kb":
		return evalKB(ctx, e, args[1:])
	}
	return fmt.Errorf("%w: unknown eval %q (retrieval, router, conversation or kb)", errUsage, args[0])
}

// evalRetrieval indexes a BEIR-layout corpus in an in-memory embedded store
// and scores one retrieval mode on its queries.
func evalRetrieval(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "eval retrieval")
	data := fs.String("data", "", "BEIR directory (corpus.jsonl, queries.jsonl, qrels/test.tsv)")
	mode := fs.String("mode", "hybrid", "bm25, dense, hybrid or rerank")
	k := fs.Int("k", 50, "hits ranked per query (recall@50 needs 50); rerank reorders the hybrid top k")
	denseWeight := fs.Float64("dense-weight", 0, "weight of the dense leg in hybrid fusion (0: the embedder's own, else 1)")
	rrfK := fs.Int("rrf-k", 0, "k of reciprocal-rank fusion (0: the default, 60)")
	asJSON := fs.Bool("json", false, "print one JSON object")
	if _, err := parse(fs, args); err != nil {
		return err
	}
	if *data == "" || !slices.Contains([]string{"bm25", "dense", "hybrid", "rerank"}, *mode) || *k < 1 {
		return fmt.Errorf("%w: need --data DIR, --mode bm25|dense|hybrid|rerank and --k >= 1", errUsage)
	}
	ds, err := eval.LoadBEIR(*data)
	if err != nil {
		return err
	}
	emb, err := embed.FromConfig(embed.ConfigFromEnv())
	if err != nil {
		return err
	}
	st, err := memstore.Open(ctx, memstore.Options{})
	if err != nil {
		return err
	}
	defer st.Close()
	chunks := make([]retrieval.Chunk, len(ds.Corpus))
	texts := make([]string, len(ds.Corpus))
	for i, d := range ds.Corpus {
		chunks[i] = retrieval.Chunk{ID: d.ID, DocID: d.ID, Title: d.Title, Text: d.Text, ContentType: retrieval.ContentText}
		texts[i] = d.Title + "\n" + d.Text
	}
	// The store keeps both indexes, so every mode embeds the corpus.
	vecs, err := embed.EmbedAll(ctx, emb, texts, 64, nil)
	if err != nil {
		return err
	}
	for i := range chunks {
		chunks[i].Vector = vecs[i]
	}
	if err := st.Upsert(ctx, chunks); err != nil {
		return err
	}
	rr := rerank.NewLexical(rerank.LexicalConfig{})
	search := func(ctx context.Context, q eval.Query) ([]string, error) {
		req := retrieval.Request{Text: q.Text, K: *k, Candidates: max(*k, retrieval.DefaultCandidates), DenseWeight: *denseWeight, RRFK: *rrfK}
		if req.DenseWeight == 0 {
			req.DenseWeight = retrieval.DenseWeightOf(emb)
		}
		if *mode != "bm25" {
			v, err := emb.Embed(ctx, []string{q.Text})
			if err != nil {
				return nil, err
			}
			req.Vector = v[0]
		}
		var hits []retrieval.Hit
		switch *mode {
		case "bm25":
			hits, err = st.SearchSparse(ctx, req)
		case "dense":
			hits, err = st.SearchDense(ctx, req)
		default:
			hits, err = st.SearchHybrid(ctx, req)
		}
		if err != nil {
			return nil, err
		}
		if *mode == "rerank" {
			out := rerank.Safe(ctx, rr, q.Text, hits, len(hits))
			if out.Fallback {
				return nil, out.Cause
			}
			hits = out.Hits
		}
		ids := make([]string, len(hits))
		for i, h := range hits {
			ids[i] = h.Chunk.ID
		}
		return ids, nil
	}
	rep, err := eval.Run(ctx, ds, *mode, search)
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(e.stdout, rep)
	}
	return rep.WriteText(e.stdout)
}

func evalRouter(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "eval router")
	data := fs.String("data", "", "JSON lines of {text, label}")
	clfName := fs.String("classifier", "offline", "offline, llm or cascade")
	asJSON := fs.Bool("json", false, "print one JSON object")
	if _, err := parse(fs, args); err != nil {
		return err
	}
	if *data == "" {
		return fmt.Errorf("%w: need --data FILE.jsonl", errUsage)
	}
	items, err := router.LoadJSONL(*data)
	if err != nil {
		return err
	}
	clf, err := classifier(*clfName, llm.ConfigFromEnv())
	if err != nil {
		return err
	}
	rep := router.Evaluate(ctx, clf, items)
	if *asJSON {
		return writeJSON(e.stdout, rep)
	}
	return rep.WriteText(e.stdout)
}
