package mcpserver_test

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/adaptrag/adaptrag"
	"github.com/adaptrag/adaptrag/api"
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
	none := session(t, p, mcpserver.Config{})
	for tool, args := range map[string]map[string]any{
		"search": {"query": "退货要在几天内发起？"},
		"ask":    {"question": "退货要在几天内发起？"},
	} {
		res := call(t, none, tool, args)
		if !res.IsError || !strings.Contains(text(res), "no tenant") {
			t.Errorf("%s without a tenant: error %v, %q", tool, res.IsError, text(res))
		}
	}
	acme := session(t, p, mcpserver.Config{Caller: mcpserver.Caller{Scope: retrieval.Scope{Tenant: "acme"}}})
	res := call(t, acme, "search", map[string]any{"query": "退货要在几天内发起？"})
	if res.IsError {
		t.Fatalf("search as acme: %q", text(res))
	}
	if out := structured[api.Response](t, res); len(out.Passages) != 0 {
		t.Fatalf("acme found %d passages of the default tenant", len(out.Passages))
	}
}

// session connects a client to a server over p on an in-memory transport.
func session(t *testing.T, p *adaptrag.Pipeline, c mcpserver.Config) *mcp.ClientSession {
	t.Helper()
	k, _ := samplePipeline(t)
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

// A node inserted at the evidence stage acts on MCP search's passages.
func TestSearchRunsEvidenceStage(t *testing.T) {
	k, _ := samplePipeline(t)
	p, err := adaptrag.New(context.Background(), adaptrag.Deps{Docs: k.Docs, FAQ: k.FAQ, Embedder: embed.NewHashing(embed.HashingConfig{})},
		adaptrag.Options{Graph: func(g *adaptrag.Graph) error {
			g.InsertBefore(adaptrag.NodePassages, "redact", func(_ context.Context, s adaptrag.State) (adaptrag.State, error) {
				for i := range s.Docs {
					s.Docs[i].Chunk.Text = "[redacted]"
				}
				return s, nil
			})
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	res := call(t, session(t, p, mcpserver.Config{}), "search", map[string]any{"query": "退货要在几天内发起？"})
	if res.IsError {
		t.Fatal(text(res))
	}
	if !strings.Contains(text(res), "[redacted]") || strings.Contains(text(res), "7 天") {
		t.Fatalf("search output not redacted: %.200q", text(res))
	}
}
