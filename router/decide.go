package router

import (
	"fmt"
)

// DefaultMinConfidence is the confidence under which a profile is not
// trusted and the query takes the full analytical pipeline.
const DefaultMinConfidence = 0.7

// Decision is the route chosen for a query.
type Decision struct {
	// Profile is the classifier's profile; nil when the classifier failed.
	// It is kept on a low-confidence fallback, for the log.
	Profile *Profile
	// Route is Factual, Analytical or Chitchat.
	Route QueryType
	// Fallback reports that Route is the conservative default rather than
	// the profile's type.
	Fallback bool
	// Cause says why a fallback happened ("" otherwise).
	Cause string
	// Err is the classifier error behind a fallback (nil for a
	// low-confidence fallback).
	Err error
}

// Policy is the fallback rule. The zero value uses DefaultMinConfidence.
type Policy struct {
	// MinConfidence is the confidence under which the route falls back to
	// analytical; 0 means DefaultMinConfidence. A negative value disables
	// the confidence check (errors still fall back).
	MinConfidence float64
}

// Decide applies the policy: a classifier error, an invalid profile or a
// confidence below MinConfidence routes to analytical with Fallback set,
// because a wrong "no retrieval" answer costs more than an unneeded search.
func (pol Policy) Decide(p Profile, err error) Decision {
	minConf := pol.MinConfidence
	if minConf == 0 {
		minConf = DefaultMinConfidence
	}
	if err != nil {
		return Decision{Route: Analytical, Fallback: true, Cause: "classifier error: " + err.Error(), Err: err}
	}
	if verr := p.Validate(); verr != nil {
		return Decision{Route: Analytical, Fallback: true, Cause: verr.Error(), Err: verr}
	}
	if p.Confidence < minConf {
		return Decision{Profile: &p, Route: Analytical, Fallback: true,
			Cause: fmt.Sprintf("confidence %.2f below %.2f (classified %s)", p.Confidence, minConf, p.QueryType)}
	}
	return Decision{Profile: &p, Route: p.QueryType}
}

// Decide is Policy{MinConfidence: minConfidence}.Decide(p, err).
func Decide(p Profile, err error, minConfidence float64) Decision {
	return Policy{MinConfidence: minConfidence}.Decide(p, err)
}
