package samplekb

import (
	_ "embed"

	"github.com/adaptrag/adaptrag/plan"
)

//go:embed sources.json
var sourcesJSON []byte

// PlanSources returns the sample's source table for the planner: its six
// categories (the top-level folders) with their display labels and the
// keywords that point a question to each. It drives source suggestions and
// the source-boundary reply when the sample is the knowledge base; another
// knowledge base brings its own table (see plan.ParseSources).
func PlanSources() []plan.Source {
	s, err := plan.ParseSources(sourcesJSON)
	if err != nil { // the embedded table is checked by the package's tests
		panic("samplekb: " + err.Error())
	}
	return s
}
