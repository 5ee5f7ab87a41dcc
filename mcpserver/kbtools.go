package mcpserver

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/adaptrag/adaptrag/retrieval"
)

// maxIDRunes bounds an id, URI or source argument.
const maxIDRunes = 2048

// FetchInput are the arguments of the fetch tool.
type FetchInput struct {
	ID string `json:"id" jsonschema:"a passage id (from search or ask), or a document's uri (adaptrag://docs/...), id or origin"`
}

// DocumentPassage is one passage of a fetched document.
type DocumentPassage struct {
	ID      string `json:"id" jsonschema:"the passage's id"`
	Locator string `json:"locator,omitempty" jsonschema:"where in the document: heading path, row or record id"`
}

// FetchOutput is the structured result of the fetch tool: one passage, or
// a whole document.
type FetchOutput struct {
	ID       string            `json:"id" jsonschema:"the id that was fetched"`
	Kind     string            `json:"kind" jsonschema:"passage or document"`
	Origin   string            `json:"origin" jsonschema:"the document: a file path relative to the knowledge base, or a URL"`
	Locator  string            `json:"locator,omitempty" jsonschema:"for a passage, where in the document it is"`
	Title    string            `json:"title,omitempty" jsonschema:"the document's title"`
	Source   string            `json:"source,omitempty" jsonschema:"the source (category) of the document"`
	URI      string            `json:"uri,omitempty" jsonschema:"the resource of the whole document"`
	Text     string            `json:"text" jsonschema:"the passage, or the document's passages in order separated by blank lines"`
	Passages []DocumentPassage `json:"passages,omitempty" jsonschema:"for a document, its passages in order"`
}

// SourcesInput are the arguments of the sources tool: none.
type SourcesInput struct{}

// SourceInfo describes one source of the knowledge base.
type SourceInfo struct {
	Source    string   `json:"source" jsonschema:"the source's name, as search and ask take it; empty for documents without one"`
	Documents int      `json:"documents" jsonschema:"how many documents it holds"`
	Passages  int      `json:"passages" jsonschema:"how many passages its documents have"`
	Titles    []string `json:"titles" jsonschema:"the titles of some of its documents"`
}

// SourcesOutput is the structured result of the sources tool.
type SourcesOutput struct {
	Sources   []SourceInfo `json:"sources" jsonschema:"the sources, by name"`
	Documents int          `json:"documents" jsonschema:"documents in the knowledge base"`
	FAQFiles  int          `json:"faq_files" jsonschema:"FAQ files in the knowledge base"`
}

// titlesPerSource is how many titles a source lists.
const titlesPerSource = 5

func (s *Server) addKBTools() error {
	if s.cfg.KB == nil {
		return nil
	}
	fetchIn, err := schemaOf[FetchInput]()
	if err != nil {
		return fmt.Errorf("mcpserver: fetch schema: %w", err)
	}
	fetchOut, err := schemaOf[FetchOutput]()
	if err != nil {
		return fmt.Errorf("mcpserver: fetch schema: %w", err)
	}
	fetchIn.Properties["id"].MinLength, fetchIn.Properties["id"].MaxLength = ptr(1), ptr(maxIDRunes)
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:  ToolFetch,
		Title: "Fetch a passage or document",
		Description: "Return one passage of the knowledge base by its id (the id of a search result or citation), " +
			"or a whole document by its uri, id or origin: its text, origin, title, source and, for a document, its passages in order. " +
			"Use it to read more around a passage before answering.",
		InputSchema:  fetchIn,
		OutputSchema: fetchOut,
		Annotations:  &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)},
	}, s.fetch)
	sourcesIn, err := schemaOf[SourcesInput]()
	if err != nil {
		return fmt.Errorf("mcpserver: sources schema: %w", err)
	}
	sourcesOut, err := schemaOf[SourcesOutput]()
	if err != nil {
		return fmt.Errorf("mcpserver: sources schema: %w", err)
	}
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:  ToolSources,
		Title: "List the knowledge base's sources",
		Description: "List the sources (categories) of the knowledge base, with how many documents and passages each holds and some of their titles. " +
			"Pass a source's name to search or ask to restrict them to it.",
		InputSchema:  sourcesIn,
		OutputSchema: sourcesOut,
		Annotations:  &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)},
	}, s.sources)
	return nil
}

// fetch runs the fetch tool. Another tenant's id is as absent as one that
// never existed.
func (s *Server) fetch(ctx context.Context, _ *mcp.CallToolRequest, in FetchInput) (*mcp.CallToolResult, FetchOutput, error) {
	id := strings.TrimSpace(in.ID)
	if id == "" {
		return nil, FetchOutput{}, fmt.Errorf("%w: id is empty", ErrInvalidArgument)
	}
	scope := s.caller(ctx).Scope
	docs, faq, err := s.cfg.KB.List(ctx, scope)
	if err != nil {
		return nil, FetchOutput{}, fmt.Errorf("fetch: list documents: %w", err)
	}
	type coll struct {
		name     string
		infos    []retrieval.DocInfo
		searcher retrieval.Searcher
	}
	colls := []coll{{collectionDocs, docs, s.cfg.KB.Docs}, {collectionFAQ, faq, s.cfg.KB.FAQ}}
	// A document, by uri, id or origin.
	wantColl, wantOrigin, isURI := parseResourceURI(id)
	for _, c := range colls {
		if c.searcher == nil || (isURI && c.name != wantColl) {
			continue
		}
		i := slices.IndexFunc(c.infos, func(d retrieval.DocInfo) bool {
			if isURI {
				return d.Origin == wantOrigin
			}
			return d.DocID == id || d.Origin == id
		})
		if i < 0 {
			continue
		}
		d := c.infos[i]
		chunks, err := documentChunks(ctx, c.searcher, scope, d)
		if err != nil {
			return nil, FetchOutput{}, fmt.Errorf("fetch %s: %w", d.Origin, err)
		}
		out := FetchOutput{ID: id, Kind: "document", Origin: d.Origin, Title: d.Title, Source: d.Source, URI: resourceURI(c.name, d.Origin),
			Passages: make([]DocumentPassage, 0, len(chunks))}
		texts := make([]string, 0, len(chunks))
		for _, ch := range chunks {
			texts = append(texts, chunkText(ch))
			out.Passages = append(out.Passages, DocumentPassage{ID: ch.ID, Locator: ch.Meta[retrieval.MetaLocator]})
		}
		out.Text = strings.Join(texts, "\n\n")
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: FetchText(out)}}}, out, nil
	}
	// A passage, by its id: the caller's documents are read until one
	// holds it.
	if !isURI {
		for _, c := range colls {
			if c.searcher == nil {
				continue
			}
			for _, d := range c.infos {
				chunks, err := documentChunks(ctx, c.searcher, scope, d)
				if err != nil {
					return nil, FetchOutput{}, fmt.Errorf("fetch: read %s: %w", d.Origin, err)
				}
				for _, ch := range chunks {
					if ch.ID != id {
						continue
					}
					out := FetchOutput{ID: id, Kind: "passage", Origin: d.Origin, Locator: ch.Meta[retrieval.MetaLocator],
						Title: cmp.Or(ch.Title, d.Title), Source: d.Source, URI: resourceURI(c.name, d.Origin), Text: chunkText(ch)}
					return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: FetchText(out)}}}, out, nil
				}
			}
		}
	}
	return nil, FetchOutput{}, fmt.Errorf("%w: no passage or document has id %q", ErrInvalidArgument, id)
}

// chunkText is a chunk as a reader sees it: an FAQ entry as its question
// and answer.
func chunkText(c retrieval.Chunk) string {
	if c.ContentType == retrieval.ContentFAQ && c.Meta[retrieval.MetaAnswer] != "" {
		return "Q: " + c.Meta[retrieval.MetaQuestion] + "\nA: " + c.Meta[retrieval.MetaAnswer]
	}
	return c.Text
}

// FetchText is the readable form of a fetch result: a heading naming the
// document (and the passage's place), then the text.
func FetchText(out FetchOutput) string {
	var b strings.Builder
	b.WriteString(out.Origin)
	if out.Title != "" && out.Title != out.Origin {
		fmt.Fprintf(&b, " (%s)", out.Title)
	}
	if out.Locator != "" {
		fmt.Fprintf(&b, " — %s", out.Locator)
	}
	b.WriteString("\n\n")
	b.WriteString(out.Text)
	return b.String()
}

// sources runs the sources tool.
func (s *Server) sources(ctx context.Context, _ *mcp.CallToolRequest, _ SourcesInput) (*mcp.CallToolResult, SourcesOutput, error) {
	out, err := s.sourcesOf(ctx)
	if err != nil {
		return nil, SourcesOutput{}, err
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: SourcesText(out)}}}, out, nil
}

// sourcesOf summarises the caller's documents by source.
func (s *Server) sourcesOf(ctx context.Context) (SourcesOutput, error) {
	docs, faq, err := s.cfg.KB.List(ctx, s.caller(ctx).Scope)
	if err != nil {
		return SourcesOutput{}, fmt.Errorf("sources: list documents: %w", err)
	}
	out := SourcesOutput{Sources: []SourceInfo{}, Documents: len(docs), FAQFiles: len(faq)}
	by := map[string]*SourceInfo{}
	for _, d := range slices.Concat(docs, faq) {
		si := by[d.Source]
		if si == nil {
			si = &SourceInfo{Source: d.Source, Titles: []string{}}
			by[d.Source] = si
		}
		si.Documents++
		si.Passages += d.Chunks
		if t := cmp.Or(d.Title, d.Origin); len(si.Titles) < titlesPerSource && t != "" && !slices.Contains(si.Titles, t) {
			si.Titles = append(si.Titles, t)
		}
	}
	for _, si := range by {
		out.Sources = append(out.Sources, *si)
	}
	slices.SortFunc(out.Sources, func(a, b SourceInfo) int { return cmp.Compare(a.Source, b.Source) })
	return out, nil
}

// SourcesText is the readable form of a sources result: one line per
// source.
func SourcesText(out SourcesOutput) string {
	if len(out.Sources) == 0 {
		return "The knowledge base holds no documents."
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s, %s.", plural(out.Documents, "document"), plural(out.FAQFiles, "FAQ file"))
	for _, si := range out.Sources {
		fmt.Fprintf(&b, "\n%s: %s, %s", cmp.Or(si.Source, "(no source)"), plural(si.Documents, "document"), plural(si.Passages, "passage"))
		if len(si.Titles) > 0 {
			fmt.Fprintf(&b, " — %s", strings.Join(si.Titles, "; "))
		}
	}
	return b.String()
}

// summary is one sentence naming what the caller's knowledge base holds,
// for the tool descriptions; "" when it cannot be listed.
func (s *Server) summary(ctx context.Context) string {
	if s.cfg.KB == nil {
		return ""
	}
	out, err := s.sourcesOf(ctx)
	if err != nil || out.Documents+out.FAQFiles == 0 {
		return ""
	}
	const maxSources, maxTitles = 8, 8
	var names, titles []string
	for _, si := range out.Sources {
		if si.Source != "" && len(names) < maxSources {
			names = append(names, fmt.Sprintf("%s (%d)", si.Source, si.Documents))
		}
	}
	// Titles round-robin over the sources, so that each is represented.
	for i := 0; i < titlesPerSource && len(titles) < maxTitles; i++ {
		for _, si := range out.Sources {
			if i < len(si.Titles) && len(titles) < maxTitles {
				titles = append(titles, si.Titles[i])
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "The knowledge base holds %s", plural(out.Documents, "document"))
	if out.FAQFiles > 0 {
		fmt.Fprintf(&b, " and %s", plural(out.FAQFiles, "FAQ file"))
	}
	if len(names) > 0 {
		fmt.Fprintf(&b, " in the sources %s", strings.Join(names, ", "))
		if n := len(out.Sources); n > len(names) {
			fmt.Fprintf(&b, " and %d more", n-len(names))
		}
	}
	if len(titles) > 0 {
		fmt.Fprintf(&b, "; among them: %s", strings.Join(titles, "; "))
	}
	b.WriteString(".")
	return b.String()
}

// describe is the receiving middleware that appends to each tool's
// description what the caller's knowledge base holds, so that an agent
// knows when to call the tools. The list is the caller's (tenant-scoped),
// hence marked private (setCacheable).
func (s *Server) describe(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		lt, ok := res.(*mcp.ListToolsResult)
		if method != "tools/list" || err != nil || !ok || lt == nil {
			return res, err
		}
		sum := s.summary(ctx)
		if sum == "" {
			return res, err
		}
		out := *lt
		out.Tools = make([]*mcp.Tool, len(lt.Tools))
		for i, t := range lt.Tools {
			switch t.Name {
			case ToolAsk, ToolSearch, ToolSources:
				c := *t
				c.Description += " " + sum
				t = &c
			}
			out.Tools[i] = t
		}
		return &out, nil
	}
}

// plural is "1 document" or "n documents".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
