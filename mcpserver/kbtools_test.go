package mcpserver_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/adaptrag/adaptrag"
	"github.com/adaptrag/adaptrag/api"
	"github.com/adaptrag/adaptrag/mcpserver"
	"github.com/adaptrag/adaptrag/retrieval"
)

func TestPassagesCarryIDsThatFetchReturns(t *testing.T) {
	cs, _ := connect(t, mcpserver.Config{})
	out := structured[api.Response](t, call(t, cs, "search", map[string]any{"query": "退货要在几天内发起？", "k": 3}))
	if len(out.Passages) == 0 {
		t.Fatal("no passages")
	}
	for _, p := range out.Passages {
		if p.ID == "" {
			t.Fatalf("passage without id: %+v", p)
		}
		res := call(t, cs, "fetch", map[string]any{"id": p.ID})
		if res.IsError {
			t.Fatalf("fetch %s: %s", p.ID, text(res))
		}
		got := structured[mcpserver.FetchOutput](t, res)
		if got.Kind != "passage" || got.Origin != p.Origin || !strings.HasPrefix(got.URI, "adaptrag://") || !strings.Contains(got.Text, firstLine(p.Text)) {
			t.Errorf("fetch %s = %+v, searched %+v", p.ID, got, p)
		}
	}
	ask := structured[api.Response](t, call(t, cs, "ask", map[string]any{"question": "退货要在几天内发起？"}))
	if len(ask.Citations) == 0 || ask.Citations[0].ID == "" {
		t.Fatalf("citations without ids: %+v", ask.Citations)
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

func TestFetchWholeDocument(t *testing.T) {
	cs, _ := connect(t, mcpserver.Config{})
	k, _ := samplePipeline(t)
	docs, _, err := k.List(context.Background(), retrieval.Scope{})
	if err != nil {
		t.Fatal(err)
	}
	var d retrieval.DocInfo
	for _, di := range docs {
		if di.Chunks > 1 {
			d = di
			break
		}
	}
	for _, id := range []string{"adaptrag://docs/" + d.Origin, d.DocID, d.Origin} {
		res := call(t, cs, "fetch", map[string]any{"id": id})
		if res.IsError {
			t.Fatalf("fetch %s: %s", id, text(res))
		}
		got := structured[mcpserver.FetchOutput](t, res)
		if got.Kind != "document" || got.Origin != d.Origin || len(got.Passages) != d.Chunks || got.Text == "" {
			t.Errorf("fetch %s: kind %s origin %s, %d passages (document has %d)", id, got.Kind, got.Origin, len(got.Passages), d.Chunks)
		}
		for _, p := range got.Passages {
			if p.ID == "" {
				t.Errorf("document passage without id")
			}
		}
	}
	for _, bad := range []string{"no-such-id", "adaptrag://docs/no/such.md", " "} {
		if res := call(t, cs, "fetch", map[string]any{"id": bad}); !res.IsError {
			t.Errorf("fetch %q: no error: %s", bad, text(res))
		}
	}
}

// Another tenant's ids do not exist for a caller.
func TestFetchIsTenantScoped(t *testing.T) {
	own, _ := connect(t, mcpserver.Config{})
	out := structured[api.Response](t, call(t, own, "search", map[string]any{"query": "退货要在几天内发起？", "k": 1}))
	if len(out.Passages) == 0 {
		t.Fatal("no passages")
	}
	other, _ := connect(t, mcpserver.Config{Caller: mcpserver.Caller{Scope: retrieval.Scope{Tenant: "other"}}})
	for _, id := range []string{out.Passages[0].ID, "adaptrag://docs/" + out.Passages[0].Origin, out.Passages[0].Origin} {
		res := call(t, other, "fetch", map[string]any{"id": id})
		if !res.IsError || strings.Contains(text(res), out.Passages[0].Text) {
			t.Errorf("another tenant fetched %s: %s", id, text(res))
		}
	}
}

func TestSourcesAndSearchBySource(t *testing.T) {
	cs, _ := connect(t, mcpserver.Config{})
	k, _ := samplePipeline(t)
	docs, faq, _ := k.List(context.Background(), retrieval.Scope{})
	src := structured[mcpserver.SourcesOutput](t, call(t, cs, "sources", map[string]any{}))
	if src.Documents != len(docs) || src.FAQFiles != len(faq) || len(src.Sources) == 0 {
		t.Fatalf("sources %+v; the knowledge base has %d documents, %d FAQ files", src, len(docs), len(faq))
	}
	total := 0
	for _, s := range src.Sources {
		total += s.Documents
		if len(s.Titles) == 0 {
			t.Errorf("source %q lists no titles", s.Source)
		}
	}
	if total != len(docs)+len(faq) {
		t.Errorf("sources count %d documents, want %d", total, len(docs)+len(faq))
	}
	// search restricted to one source finds only that source.
	var name string
	for _, s := range src.Sources {
		if s.Source != "" && s.Passages > 2 {
			name = s.Source
			break
		}
	}
	out := structured[api.Response](t, call(t, cs, "search", map[string]any{"query": "流程", "source": name, "k": 5}))
	for _, p := range out.Passages {
		if p.Source != name {
			t.Errorf("search in source %q found a passage of %q", name, p.Source)
		}
	}
	// search takes the conversation.
	res := call(t, cs, "search", map[string]any{"query": "质量问题呢？", "history": []map[string]string{
		{"role": "user", "content": "退货要在几天内发起？"}, {"role": "assistant", "content": "7 天内。"}}})
	if res.IsError {
		t.Errorf("search with history: %s", text(res))
	}
}

func TestSchemasCarryTheServersLimits(t *testing.T) {
	cs, _ := connect(t, mcpserver.Config{MaxQuestionRunes: 300, MaxHistoryTurns: 4, MaxTurnRunes: 500})
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range res.Tools {
		b, _ := json.Marshal(tool.InputSchema)
		var s struct {
			Properties map[string]struct {
				MaxLength *int `json:"maxLength"`
				MaxItems  *int `json:"maxItems"`
				Items     *struct {
					Properties map[string]struct {
						MaxLength *int `json:"maxLength"`
					} `json:"properties"`
				} `json:"items"`
			} `json:"properties"`
		}
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatal(err)
		}
		for name, p := range s.Properties {
			switch name {
			case "question", "query":
				if p.MaxLength == nil || *p.MaxLength != 300 {
					t.Errorf("%s.%s maxLength %v, want 300", tool.Name, name, p.MaxLength)
				}
			case "history":
				if p.MaxItems == nil || *p.MaxItems != 4 || p.Items.Properties["content"].MaxLength == nil || *p.Items.Properties["content"].MaxLength != 500 {
					t.Errorf("%s.history limits: %s", tool.Name, b)
				}
			case "id", "source":
				if p.MaxLength == nil {
					t.Errorf("%s.%s has no maxLength", tool.Name, name)
				}
			}
		}
	}
	long := strings.Repeat("假", 301)
	if r := call(t, cs, "ask", map[string]any{"question": long}); !r.IsError {
		t.Error("a question over the limit was taken")
	}
	hist := []map[string]string{}
	for range 5 {
		hist = append(hist, map[string]string{"role": "user", "content": "x"})
	}
	if r := call(t, cs, "search", map[string]any{"query": "x", "history": hist}); !r.IsError {
		t.Error("a history over the limit was taken")
	}
}

// The default question limit is the pipeline's: a question of that length
// is taken, one character more is refused by both.
func TestDefaultQuestionLimitIsThePipelines(t *testing.T) {
	cs, _ := connect(t, mcpserver.Config{})
	_, p := samplePipeline(t)
	at := strings.Repeat("假", mcpserver.DefaultMaxQuestionRunes)
	if r := call(t, cs, "search", map[string]any{"query": at, "k": 1}); r.IsError {
		t.Errorf("a query of %d characters: %s", mcpserver.DefaultMaxQuestionRunes, text(r))
	}
	if _, err := p.Ask(context.Background(), adaptrag.Request{Question: at + "假"}); err == nil {
		t.Errorf("the pipeline takes %d characters: the MCP default is not its limit", mcpserver.DefaultMaxQuestionRunes+1)
	}
}

func TestDescriptionsNameTheCallersKnowledgeBase(t *testing.T) {
	k, _ := samplePipeline(t)
	docs, _, _ := k.List(context.Background(), retrieval.Scope{})
	own, _ := connect(t, mcpserver.Config{})
	res, err := own.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	desc := map[string]string{}
	for _, tool := range res.Tools {
		desc[tool.Name] = tool.Description
	}
	for _, name := range []string{"ask", "search"} {
		if !strings.Contains(desc[name], docs[0].Source) || !strings.Contains(desc[name], "documents") {
			t.Errorf("%s description does not name the knowledge base's sources (%s): %s", name, docs[0].Source, desc[name])
		}
	}
	other, _ := connect(t, mcpserver.Config{Caller: mcpserver.Caller{Scope: retrieval.Scope{Tenant: "other"}}})
	res, _ = other.ListTools(context.Background(), nil)
	for _, tool := range res.Tools {
		if strings.Contains(tool.Description, docs[0].Title) || strings.Contains(tool.Description, "The knowledge base holds") {
			t.Errorf("another tenant's %s description names this tenant's documents: %s", tool.Name, tool.Description)
		}
	}
}
