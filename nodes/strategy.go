package nodes

import (
	"fmt"

	"github.com/adaptrag/adaptrag/router"
	"github.com/adaptrag/adaptrag/state"
)

// Retrieval modes of a Strategy.
const (
	ModeNone   = "none"   // no retrieval at all
	ModeDense  = "dense"  // dense vector search
	ModeHybrid = "hybrid" // dense + BM25 fused by reciprocal rank
)

// StrategyTable is the seed-002 strategy matrix: what retrieval each route
// gets. It is the one place to change how much each class of question
// costs. A fallback (low confidence or classifier failure) takes the
// Analytical row.
type StrategyTable struct {
	Chitchat   state.Strategy
	Factual    state.Strategy
	Analytical state.Strategy
}

// DefaultStrategies returns the seed's matrix: chitchat retrieves nothing,
// factual takes the dense top 3, analytical fuses 50 dense and 50 BM25
// candidates and reranks them down to 8.
func DefaultStrategies() StrategyTable {
	return StrategyTable{
		Chitchat:   state.Strategy{Mode: ModeNone},
		Factual:    state.Strategy{Mode: ModeDense, Candidates: 3, Context: 3},
		Analytical: state.Strategy{Mode: ModeHybrid, Candidates: 50, Rerank: true, Context: 8},
	}
}

// For returns the strategy of a route.
func (t StrategyTable) For(route string) state.Strategy {
	switch route {
	case router.Chitchat:
		return t.Chitchat
	case router.Factual:
		return t.Factual
	}
	return t.Analytical
}

// Validate checks that every retrieving row fetches and keeps something.
func (t StrategyTable) Validate() error {
	for name, s := range map[string]state.Strategy{"chitchat": t.Chitchat, "factual": t.Factual, "analytical": t.Analytical} {
		switch s.Mode {
		case ModeNone:
		case ModeDense, ModeHybrid:
			if s.Candidates <= 0 || s.Context <= 0 {
				return fmt.Errorf("nodes: strategy %s: %s retrieval needs candidates and context > 0", name, s.Mode)
			}
		default:
			return fmt.Errorf("nodes: strategy %s: unknown mode %q", name, s.Mode)
		}
	}
	if t.Chitchat.Mode != ModeNone {
		return fmt.Errorf("nodes: strategy chitchat must not retrieve (mode %q)", t.Chitchat.Mode)
	}
	return nil
}
