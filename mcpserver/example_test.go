package mcpserver_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/adaptrag/adaptrag"
	"github.com/adaptrag/adaptrag/kb"
	"github.com/adaptrag/adaptrag/mcpserver"
	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/adaptrag/adaptrag/retrieval/embed"
)

// An agent connects, lists the tools and asks a question. Here client and
// server share an in-memory transport; a desktop client would run
// "adaptrag mcp" over stdio instead.
func ExampleNew() {
	ctx := context.Background()
	emb := embed.NewHashing(embed.HashingConfig{})
	k, _ := kb.Sample(ctx, emb)
	defer k.Close()
	pipe, _ := adaptrag.New(ctx, adaptrag.Deps{Docs: k.Docs, FAQ: k.FAQ, Embedder: emb}, adaptrag.Options{})

	srv, err := mcpserver.New(pipe, mcpserver.Config{KB: k})
	if err != nil {
		fmt.Println(err)
		return
	}
	st, ct := mcp.NewInMemoryTransports()
	go srv.Run(ctx, st)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "agent"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer cs.Close()

	tools, _ := cs.ListTools(ctx, nil)
	for _, t := range tools.Tools {
		fmt.Println("tool:", t.Name)
	}
	res, _ := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{"question": "退货要在几天内发起？"}})
	out := res.StructuredContent.(map[string]any)
	fmt.Println("route:", out["route"].(map[string]any)["query_type"], "cited:", len(out["citations"].([]any)) > 0)
	// Output:
	// tool: ask
	// tool: fetch
	// tool: search
	// tool: sources
	// route: factual cited: true
}

// The HTTP service mounts the handler at /mcp behind its own
// authentication; the CallerFunc turns the authenticated request into the
// tenant and actor every tool and resource acts for.
func ExampleServer_Handler() {
	var srv *mcpserver.Server                           // from mcpserver.New
	tenants := map[string]string{"key-of-acme": "acme"} // the host's API keys
	tenantOf := func(r *http.Request) (mcpserver.Caller, error) {
		tenant, ok := tenants[r.Header.Get("X-API-Key")]
		if !ok {
			return mcpserver.Caller{}, errors.New("unknown API key")
		}
		return mcpserver.Caller{Scope: retrieval.Scope{Tenant: tenant}}, nil
	}
	mux := http.NewServeMux()
	if srv != nil {
		mux.Handle("/mcp", srv.Handler(tenantOf))
	}
	fmt.Println("mounted")
	// Output: mounted
}
