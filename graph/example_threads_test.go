package graph_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/adaptrag/adaptrag/graph"
)

type order struct {
	Item     string
	Approved bool
	Log      []string
}

func orderGraph(cp graph.Checkpointer) *graph.Runnable[order] {
	approve := func(ctx context.Context, o order) (order, error) {
		v, err := graph.Interrupt(ctx, "approve "+o.Item+"?")
		if err != nil {
			return o, err // the run stops here until Resume answers
		}
		o.Approved, _ = graph.ResumeValue[bool](v)
		o.Log = append(o.Log, "approve")
		return o, nil
	}
	ship := func(_ context.Context, o order) (order, error) {
		o.Log = append(o.Log, "ship")
		return o, nil
	}
	r, err := graph.New[order]("order").AddNode("approve", approve).AddNode("ship", ship).
		AddEdge(graph.Start, "approve").AddEdge("approve", "ship").AddEdge("ship", graph.End).
		Compile(graph.Config[order]{Checkpointer: cp})
	if err != nil {
		panic(err)
	}
	return r
}

// A node asks a person and the run waits: Invoke returns an
// *InterruptedError with the question and an id; Resume answers it by id,
// in this process or another one sharing the checkpointer.
func ExampleInterrupt() {
	ctx := context.Background()
	cp := graph.NewMemoryCheckpointer()
	_, err := orderGraph(cp).Invoke(ctx, order{Item: "laptop"}, graph.WithThread("order-7"))
	var ie *graph.InterruptedError
	if errors.As(err, &ie) {
		fmt.Println("waiting for:", ie.Interrupts[0].Payload)
	}
	// Later, maybe after a restart: a new Runnable on the same store.
	out, err := orderGraph(cp).Resume(ctx, "order-7", map[string]any{ie.Interrupts[0].ID: true})
	fmt.Println(out.Approved, out.Log, err)
	// Output:
	// waiting for: approve laptop?
	// true [approve ship] <nil>
}

// Every step of a run on a thread is a checkpoint; a run can go on again
// from any of them, with the state changed: time travel, as a fork of the
// thread.
func ExampleWithCheckpoint() {
	ctx := context.Background()
	cp := graph.NewMemoryCheckpointer()
	r := orderGraph(cp)
	_, err := r.Invoke(ctx, order{Item: "laptop"}, graph.WithThread("t"))
	var ie *graph.InterruptedError
	errors.As(err, &ie)
	if _, err := r.Resume(ctx, "t", map[string]any{ie.Interrupts[0].ID: false}); err != nil {
		panic(err)
	}
	hist, _ := r.History(ctx, "t") // newest first
	for _, c := range hist {
		fmt.Println(c.Status, c.Next)
	}
	// Go back to before the approval, for another item.
	first := hist[len(hist)-1]
	_, err = r.Resume(ctx, "t", nil, graph.WithCheckpoint(first.ID),
		graph.WithEdit(func(o order) order { o.Item = "phone"; return o }))
	errors.As(err, &ie)
	fmt.Println("fork waits for:", ie.Interrupts[0].Payload)
	// Output:
	// done []
	// running [ship]
	// interrupted [approve]
	// running [approve]
	// fork waits for: approve phone?
}
