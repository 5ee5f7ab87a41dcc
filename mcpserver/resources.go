package mcpserver

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/adaptrag/adaptrag/retrieval"
)

// Collections a resource can belong to, as the first element of its path.
const (
	collectionDocs = "docs"
	collectionFAQ  = "faq"
)

// listPageSize is how many resources one resources/list page holds.
const listPageSize = 200

// resourceURI names a document of a collection ("docs" or "faq"):
// adaptrag://docs/ followed by its origin, each path element escaped.
func resourceURI(collection, origin string) string {
	if origin == "" {
		return ""
	}
	if collection != collectionFAQ {
		collection = collectionDocs
	}
	parts := strings.Split(origin, "/")
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	return ResourceScheme + "://" + collection + "/" + strings.Join(parts, "/")
}

// parseResourceURI is the inverse of resourceURI.
func parseResourceURI(uri string) (collection, origin string, ok bool) {
	rest, found := strings.CutPrefix(uri, ResourceScheme+"://")
	if !found {
		return "", "", false
	}
	collection, escaped, found := strings.Cut(rest, "/")
	if !found || escaped == "" || (collection != collectionDocs && collection != collectionFAQ) {
		return "", "", false
	}
	origin, err := url.PathUnescape(escaped)
	if err != nil {
		return "", "", false
	}
	return collection, origin, true
}

// addResources registers the two resource templates (so clients can read
// any document) and a resources/list that lists the caller's documents.
func (s *Server) addResources() {
	for _, c := range []struct{ collection, title, desc string }{
		{collectionDocs, "Knowledge-base document", "A document of the knowledge base, as its stored passages in order; {origin} is its path in the knowledge base."},
		{collectionFAQ, "Knowledge-base FAQ file", "An FAQ file of the knowledge base, as its entries (question and standard answer) in order."},
	} {
		s.mcp.AddResourceTemplate(&mcp.ResourceTemplate{
			Name: c.collection, Title: c.title, Description: c.desc, MIMEType: "text/plain",
			URITemplate: ResourceScheme + "://" + c.collection + "/{+origin}",
		}, s.readResource)
	}
	s.mcp.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "resources/list" {
				return next(ctx, method, req)
			}
			var cursor string
			if p, ok := req.GetParams().(*mcp.ListResourcesParams); ok && p != nil {
				cursor = p.Cursor
			}
			return s.listResources(ctx, cursor)
		}
	})
}

// listResources lists the caller's documents, then its FAQ files, by origin.
func (s *Server) listResources(ctx context.Context, cursor string) (*mcp.ListResourcesResult, error) {
	start := 0
	if cursor != "" {
		n, err := strconv.Atoi(cursor)
		if err != nil || n < 0 {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("invalid cursor %q", cursor)}
		}
		start = n
	}
	docs, faq, err := s.cfg.KB.List(ctx, s.caller(ctx).Scope)
	if err != nil {
		return nil, fmt.Errorf("mcpserver: list documents: %w", err)
	}
	all := make([]*mcp.Resource, 0, len(docs)+len(faq))
	add := func(collection string, infos []retrieval.DocInfo) {
		for _, d := range infos {
			if d.Origin == "" {
				continue
			}
			what := "passages"
			if collection == collectionFAQ {
				what = "entries"
			}
			desc := fmt.Sprintf("%d %s", d.Chunks, what)
			if d.Source != "" {
				desc += ", source " + d.Source
			}
			all = append(all, &mcp.Resource{URI: resourceURI(collection, d.Origin), Name: d.Origin, Title: cmp.Or(d.Title, d.Origin),
				Description: desc, MIMEType: "text/plain"})
		}
	}
	add(collectionDocs, docs)
	add(collectionFAQ, faq)
	res := &mcp.ListResourcesResult{Resources: []*mcp.Resource{}}
	// The list is the caller's documents: no shared cache may serve it to
	// another caller.
	res.CacheScope = "private"
	if start < len(all) {
		end := min(start+listPageSize, len(all))
		res.Resources = all[start:end]
		if end < len(all) {
			res.NextCursor = strconv.Itoa(end)
		}
	}
	return res, nil
}

// readResource returns a document's passages in order, one content item
// each, with its locator in _meta.
func (s *Server) readResource(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	collection, origin, ok := parseResourceURI(uri)
	if !ok {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	scope := s.caller(ctx).Scope
	docs, faq, err := s.cfg.KB.List(ctx, scope)
	if err != nil {
		return nil, fmt.Errorf("mcpserver: list documents: %w", err)
	}
	infos, searcher := docs, s.cfg.KB.Docs
	if collection == collectionFAQ {
		infos, searcher = faq, s.cfg.KB.FAQ
	}
	i := slices.IndexFunc(infos, func(d retrieval.DocInfo) bool { return d.Origin == origin })
	if i < 0 || searcher == nil {
		// Another tenant's document is as absent as one that never existed.
		return nil, mcp.ResourceNotFoundError(uri)
	}
	chunks, err := documentChunks(ctx, searcher, scope, infos[i])
	if err != nil {
		return nil, fmt.Errorf("mcpserver: read %s: %w", origin, err)
	}
	res := &mcp.ReadResourceResult{Contents: make([]*mcp.ResourceContents, 0, len(chunks))}
	for _, c := range chunks {
		text := chunkText(c)
		res.Contents = append(res.Contents, &mcp.ResourceContents{URI: uri, MIMEType: "text/plain", Text: text,
			Meta: mcp.Meta{"locator": c.Meta[retrieval.MetaLocator], "position": c.Position, "id": c.ID}})
	}
	return res, nil
}

// ChunkReader is implemented by stores that can return a document's chunks
// directly. Others are read through a filtered search.
type ChunkReader interface {
	// DocumentChunks returns the chunks of docID within scope, in any order.
	DocumentChunks(ctx context.Context, scope retrieval.Scope, docID string) ([]retrieval.Chunk, error)
}

// documentChunks returns the chunks of a document ordered by position. A
// store without ChunkReader is asked for the document's chunks by a dense
// search restricted to its id, with a vector every chunk is equally far
// from in rank terms: the filter selects, the vector only satisfies the
// interface.
func documentChunks(ctx context.Context, s retrieval.Searcher, scope retrieval.Scope, d retrieval.DocInfo) ([]retrieval.Chunk, error) {
	var chunks []retrieval.Chunk
	if r, ok := s.(ChunkReader); ok {
		var err error
		if chunks, err = r.DocumentChunks(ctx, scope, d.DocID); err != nil {
			return nil, err
		}
	} else {
		dim := s.Dim()
		if dim <= 0 || d.Chunks <= 0 {
			return nil, nil
		}
		vec := make([]float32, dim)
		for i := range vec {
			vec[i] = float32(1 / math.Sqrt(float64(dim)))
		}
		hits, err := s.SearchDense(ctx, retrieval.Request{Scope: scope, Vector: vec, K: d.Chunks,
			Filter: retrieval.Filter{Must: []retrieval.Condition{{Key: retrieval.KeyDocID, Values: []string{d.DocID}}}}})
		if err != nil {
			return nil, err
		}
		for _, h := range hits {
			chunks = append(chunks, h.Chunk)
		}
		if len(chunks) < d.Chunks {
			return chunks, fmt.Errorf("found %d of its %d passages: %w", len(chunks), d.Chunks, errIncomplete)
		}
	}
	slices.SortFunc(chunks, func(a, b retrieval.Chunk) int { return cmp.Compare(a.Position, b.Position) })
	return chunks, nil
}

var errIncomplete = errors.New("incomplete read")
