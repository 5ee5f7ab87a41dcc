package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/adaptrag/adaptrag"
	"github.com/adaptrag/adaptrag/llm"
	"github.com/adaptrag/adaptrag/plan"
	"github.com/adaptrag/adaptrag/query"
	"github.com/adaptrag/adaptrag/router"
	"github.com/adaptrag/adaptrag/state"
)

// evalConversation runs the whole pipeline on conversation cases (the
// format of query/testdata/conversations.jsonl: history, question, the
// expected outcome, entities the standalone query must and must not
// mention, clarify candidates, sub-questions) and reports outcome accuracy,
// entity recall, wrong-entity rate, clarify precision and recall and
// sub-question recall. The outcome is the pipeline's: clarify when it asked
// back, chitchat when it answered without retrieval as small talk, answer
// otherwise. --kb DIR builds the knowledge base (and its vocabulary) in
// memory from a folder of documents, as the bundled sample is built.
func evalConversation(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "eval conversation")
	data := fs.String("data", "", "a JSON Lines file of conversation cases")
	store := fs.String("store", e.getenv("ADAPTRAG_STORE"), "knowledge base (default: the bundled sample)")
	kbDir := fs.String("kb", "", "a folder of documents to build an in-memory knowledge base from (instead of --store)")
	asJSON := fs.Bool("json", false, "print one JSON object")
	byRule := fs.Bool("by-rule", false, "print how many cases each rule decided and how many of them passed")
	if _, err := parse(fs, args); err != nil {
		return err
	}
	if *data == "" {
		return fmt.Errorf("%w: need --data FILE", errUsage)
	}
	cases, err := query.LoadCases(*data)
	if err != nil {
		return err
	}
	o := options{store: *store, llm: llm.ConfigFromEnv()}
	if *kbDir != "" {
		if _, err := os.Stat(*kbDir); err != nil {
			return fmt.Errorf("--kb: %w", err)
		}
		o.files = os.DirFS(*kbDir)
	}
	a, err := build(ctx, o)
	if err != nil {
		return err
	}
	defer a.Close(context.WithoutCancel(ctx))
	rep := query.Evaluate(ctx, pipelineRewriter{a.pipe, a.kb.Vocab}, cases)
	if *asJSON {
		return writeJSON(e.stdout, rep)
	}
	rep.ByRule = *byRule
	return rep.WriteText(e.stdout)
}

// pipelineRewriter reads the pipeline's understanding of a question off a
// whole run, so that the evaluation measures what the product does.
type pipelineRewriter struct {
	p     *adaptrag.Pipeline
	vocab query.Vocabulary // the knowledge base's, as the pipeline splits with
}

// SplitQuery implements query.Splitter as the understanding node splits.
func (pr pipelineRewriter) SplitQuery(_ context.Context, text string) []string {
	return query.SplitWith(pr.vocab, text)
}

func (pr pipelineRewriter) Rewrite(ctx context.Context, question string, history []query.Message) (query.Rewrite, error) {
	res, err := pr.p.Ask(ctx, adaptrag.Request{Question: question, History: history})
	if err != nil {
		return query.Rewrite{Text: question}, err
	}
	return query.Rewrite{
		Text: res.Query.Text, Rewritten: res.Query.Rewritten, FollowUp: res.Query.FollowUp,
		Resolved: res.Query.Resolved, Unresolved: res.Query.Unresolved, Entities: res.Query.Entities,
		Clarify:   res.Clarify,
		SmallTalk: res.Route.QueryType == router.Chitchat || res.AnsweredBy == state.ByChitchat || res.Decision.Action == plan.ActionDirect,
		Rule:      rewriteRule(res.SubTasks, string(res.AnsweredBy)),
	}, nil
}

// rewriteRule is the rule the understanding of a run recorded ("rewrite
// ellipsis:entity" in the sub-task log), or def when it recorded none (small
// talk answered before understanding).
func rewriteRule(ts []state.SubTask, def string) string {
	for _, t := range ts {
		if t.Kind == "rewrite" {
			if r, ok := strings.CutPrefix(t.Task, "rewrite "); ok {
				return r
			}
		}
	}
	return def
}
