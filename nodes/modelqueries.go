package nodes

import "github.com/adaptrag/adaptrag/llm"

// newModelQueries returns the model-backed variant and HyDE writer.
func newModelQueries(llm.Generator) modelQueries { return nil }
