package main

import (
	"context"
	"fmt"

	"github.com/adaptrag/adaptrag"
	"github.com/adaptrag/adaptrag/graph"
	"github.com/adaptrag/adaptrag/llm"
)

func runGraph(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "graph")
	format := fs.String("format", "mermaid", "mermaid, dot, json or text")
	question := fs.String("question", "", "run this question and highlight the path it took")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, pos[0])
	}
	switch *format {
	case "mermaid", "dot", "json", "text":
	default:
		return fmt.Errorf("%w: unknown format %q", errUsage, *format)
	}
	a, err := build(ctx, options{llm: llm.ConfigFromEnv()})
	if err != nil {
		return err
	}
	defer a.Close(context.WithoutCancel(ctx))
	var path *graph.Path
	if *question != "" {
		if err := checkQuestionArg(*question); err != nil {
			return err
		}
		res, err := a.pipe.Ask(ctx, adaptrag.Request{Question: *question})
		if err != nil {
			return err
		}
		path = &res.Debug.Steps
	}
	d := a.pipe.Diagram()
	switch *format {
	case "dot":
		_, err = fmt.Fprint(e.stdout, d.DOT(path))
	case "json":
		var b []byte
		if b, err = d.JSON(path); err == nil {
			_, err = fmt.Fprintln(e.stdout, string(b))
		}
	case "text":
		_, err = fmt.Fprint(e.stdout, d.Text(path))
	default:
		_, err = fmt.Fprint(e.stdout, d.Mermaid(path))
	}
	return err
}
