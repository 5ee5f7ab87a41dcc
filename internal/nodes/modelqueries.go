package nodes

import (
	"github.com/adaptrag/adaptrag/llm"
	"github.com/adaptrag/adaptrag/query"
)

// newModelQueries returns the model-backed writer of query variants and
// hypothetical passages (both checked against the question by package
// query).
func newModelQueries(g llm.Generator) modelQueries { return query.NewLLM(g, query.LLMConfig{}) }
