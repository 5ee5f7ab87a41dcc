package graph

import (
	"errors"
	"fmt"
	"strings"
)

// Build errors, reported by Compile wrapped in a *BuildError that names the
// node or edge. Compile joins all of them, so one call shows every problem.
var (
	ErrReservedName  = errors.New("graph: empty or reserved node name")
	ErrNilFunc       = errors.New("graph: nil function")
	ErrDuplicateNode = errors.New("graph: duplicate node name")
	ErrUnknownNode   = errors.New("graph: edge refers to an unknown node")
	ErrNoEntry       = errors.New("graph: no entry edge from Start")
	ErrUnreachable   = errors.New("graph: node is unreachable from Start")
	ErrNoPathToEnd   = errors.New("graph: node has no path to End")
	ErrAmbiguousEdge = errors.New("graph: node has more than one kind or copy of outgoing edge")
	ErrFanOut        = errors.New("graph: invalid fan-out")
)

// Run errors.
var (
	// ErrStepLimit is matched (errors.Is) by every *StepLimitError.
	ErrStepLimit = errors.New("graph: step limit reached")
	// ErrUnknownLabel reports a router that returned an undeclared label.
	ErrUnknownLabel = errors.New("graph: route returned an undeclared label")
	// ErrPanic is matched by errors from nodes that panicked.
	ErrPanic = errors.New("graph: node panicked")
)

// BuildError is one problem found while compiling, naming where it is.
type BuildError struct {
	Node string // the node concerned, or the source of the edge; "" for Config
	Edge string // "from -> to" when the problem is an edge
	Err  error  // one of the Err* build sentinels
}

// Error states the problem, then the edge or node it concerns.
func (e *BuildError) Error() string {
	switch {
	case e.Edge != "":
		return fmt.Sprintf("%v: edge %s", e.Err, e.Edge)
	}
	return fmt.Sprintf("%v: %q", e.Err, e.Node)
}

// Unwrap returns Err, so that errors.Is matches the build sentinels.
func (e *BuildError) Unwrap() error { return e.Err }

// NodeError is the error of a run that failed in a node. It names the graph,
// the node and the step; Err is the node's error (or a *PanicError).
//
// A node's error is always wrapped for the graph it ran in, even when it
// already holds a *NodeError: a graph run as a node of another (see
// Subgraph) fails with the outer graph's NodeError wrapping the inner one.
// errors.As finds the outermost; the message names both, outer first.
type NodeError struct {
	Graph   string
	Node    string // the node; for a merge, the fan-out's source; Start or End outside nodes
	Step    int    // 1-based step of the node; 0 for a merge, Start or End
	Attempt int    // attempts made, 1 without retries
	Err     error
}

// Error names the graph, node, step and attempt, then the node's error.
func (e *NodeError) Error() string {
	return fmt.Sprintf("graph %s: node %q (step %d, attempt %d): %v", e.Graph, e.Node, e.Step, e.Attempt, e.Err)
}

// Unwrap returns the node's error.
func (e *NodeError) Unwrap() error { return e.Err }

// PanicError carries a recovered panic and the stack where it happened.
type PanicError struct {
	Value any
	Stack []byte
}

// Error reports the panic value.
func (e *PanicError) Error() string { return fmt.Sprintf("panic: %v", e.Value) }

// Is makes a *PanicError match ErrPanic.
func (e *PanicError) Is(target error) bool { return target == ErrPanic }

// Unwrap returns the panic value when it is itself an error.
func (e *PanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}

// StepLimitError reports a run that executed more node steps than allowed.
// Loop holds the nodes of the cycle the run was caught in, in order.
type StepLimitError struct {
	Graph string
	Limit int
	Loop  []string
	Trail []string // the last steps taken, oldest first
}

// Error names the limit and the loop, and says how to fix it.
func (e *StepLimitError) Error() string {
	loop := "no cycle detected in the last steps"
	if len(e.Loop) > 0 {
		loop = "looping through " + strings.Join(e.Loop, " -> ") + " -> " + e.Loop[0]
	}
	return fmt.Sprintf("graph %s: step limit of %d reached, %s; give the cycle an exit condition or raise Config.MaxSteps", e.Graph, e.Limit, loop)
}

// Is makes a *StepLimitError match ErrStepLimit.
func (e *StepLimitError) Is(target error) bool { return target == ErrStepLimit }

// RouteError reports a router label that was not declared.
type RouteError struct {
	Node  string
	Label string
}

// Error names the node and the undeclared label.
func (e *RouteError) Error() string {
	return fmt.Sprintf("graph: node %q routed to undeclared label %q", e.Node, e.Label)
}

// Is makes a *RouteError match ErrUnknownLabel.
func (e *RouteError) Is(target error) bool { return target == ErrUnknownLabel }

type retryable struct{ err error }

func (r retryable) Error() string { return r.err.Error() }
func (r retryable) Unwrap() error { return r.err }

// Retryable marks err as worth retrying: a node with WithRetry retries only
// errors marked this way (anywhere in their chain). Retryable(nil) is nil.
func Retryable(err error) error {
	if err == nil {
		return nil
	}
	return retryable{err}
}

// IsRetryable reports whether err was marked with Retryable.
func IsRetryable(err error) bool {
	var r retryable
	return errors.As(err, &r)
}
