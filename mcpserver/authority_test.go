package mcpserver_test

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/adaptrag/adaptrag"
	"github.com/adaptrag/adaptrag/mcpserver"
	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/adaptrag/adaptrag/retrieval/embed"
)

// On a pipeline that requires a tenant, the MCP tools fail closed for a
// session with no tenant and act for the session's caller otherwise.
func TestToolsOnTenantPipeline(t *testing.T) {
	k, _ := samplePipeline(t)
	p, err := adaptrag.New(context.Background(), adaptrag.Deps{Docs: k.Docs, FAQ: k.FAQ, Embedder: embed.NewHashing(embed.HashingConfig{})},
		adaptrag.Options{RequireTenant: true})
	if err != nil {
		t.Fatal(err)
	}
	session := func(c mcpserver.Config) *mcp.ClientSession {
		c.KB = k
		srv, err := mcpserver.New(p, c)
		if err != nil {
			t.Fatal(err)
		}
		st, ct := mcp.NewInMemoryTransports()
		ss, err := srv.MCP().Connect(context.Background(), st, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ss.Close() })
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).Connect(context.Background(), ct, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	none := session(mcpserver.Config{})
	for tool, args := range map[string]map[string]any{
		"search": {"query": "退货要在几天内发起？"},
		"ask":    {"question": "退货要在几天内发起？"},
	} {
		res := call(t, none, tool, args)
		if !res.IsError || !strings.Contains(text(res), "no tenant") {
			t.Errorf("%s without a tenant: error %v, %q", tool, res.IsError, text(res))
		}
	}
	acme := session(mcpserver.Config{Caller: mcpserver.Caller{Scope: retrieval.Scope{Tenant: "acme"}}})
	res := call(t, acme, "search", map[string]any{"query": "退货要在几天内发起？"})
	if res.IsError {
		t.Fatalf("search as acme: %q", text(res))
	}
	if out := structured[mcpserver.SearchOutput](t, res); len(out.Passages) != 0 {
		t.Fatalf("acme found %d passages of the default tenant", len(out.Passages))
	}
}
