package rerank

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/adaptrag/adaptrag/retrieval"
)

// Wire styles of rerank servers.
const (
	// StyleTEI is Hugging Face text-embeddings-inference (and the servers
	// copying it, e.g. Infinity's TEI mode): POST /rerank
	// {query, texts, raw_scores} -> [{index, score}].
	StyleTEI = "tei"
	// StyleCohere is Cohere's, also spoken by Jina, Voyage, vLLM and
	// Xinference: POST /v1/rerank {model, query, documents, top_n} ->
	// {results: [{index, relevance_score}]}.
	StyleCohere = "cohere"
)

// maxBody caps how much of a rerank answer is read: scores for a few hundred
// candidates fit in a few kilobytes, so anything near this is broken.
const maxBody = 8 << 20

// HTTPConfig configures NewHTTP.
type HTTPConfig struct {
	// URL is the server's endpoint. When its path does not end in
	// "/rerank", the style's path is appended ("/rerank" for TEI,
	// "/v1/rerank" for Cohere), so a bare "http://host:8080" works.
	URL string
	// APIKey, when set, is sent as "Authorization: Bearer <key>". String
	// redacts it.
	APIKey string
	// Model is sent in Cohere-style requests; TEI serves one model and
	// ignores it.
	Model string
	// Style is StyleTEI or StyleCohere; empty means StyleTEI.
	Style string
	// Timeout bounds each request; zero leaves only the caller's context.
	Timeout time.Duration
	// HTTPClient sends the requests; nil means a client without a timeout
	// of its own (contexts bound the calls).
	HTTPClient *http.Client
}

// String describes the configuration with the API key redacted.
func (c HTTPConfig) String() string {
	key := ""
	if c.APIKey != "" {
		key = "[redacted]"
	}
	return fmt.Sprintf("rerank.HTTPConfig{URL:%q Style:%q Model:%q Timeout:%s APIKey:%q}", c.URL, c.Style, c.Model, c.Timeout, key)
}

// HTTP reranks through a cross-encoder server. Each candidate is sent as its
// title and text; the server's scores order the hits, which come back with
// Method "rerank" and the server's score.
//
// Errors: a refused connection or a 5xx/429 answer wraps
// retrieval.ErrUnavailable, another 4xx retrieval.ErrInvalid, an answer that
// does not parse or does not score the candidates ErrBadResponse, and a
// timeout stays a wrapped context.DeadlineExceeded.
//
// An HTTP is safe for concurrent use.
type HTTP struct {
	url   string
	cfg   HTTPConfig
	style string
	hc    *http.Client
}

// NewHTTP returns a reranker for the server cfg describes. It makes no
// network call; a malformed URL or an unknown style wraps
// retrieval.ErrInvalid.
func NewHTTP(cfg HTTPConfig) (*HTTP, error) {
	style := cfg.Style
	if style == "" {
		style = StyleTEI
	}
	var path string
	switch style {
	case StyleTEI:
		path = "/rerank"
	case StyleCohere:
		path = "/v1/rerank"
	default:
		return nil, fmt.Errorf("rerank: unknown style %q (want %q or %q): %w", cfg.Style, StyleTEI, StyleCohere, retrieval.ErrInvalid)
	}
	u, err := url.Parse(cfg.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("rerank: URL %q: want http(s)://host[:port][/path]: %w", cfg.URL, retrieval.ErrInvalid)
	}
	if !strings.HasSuffix(strings.TrimSuffix(u.Path, "/"), "/rerank") {
		u.Path = strings.TrimSuffix(u.Path, "/") + path
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	return &HTTP{url: u.String(), cfg: cfg, style: style, hc: hc}, nil
}

// Name returns "http/tei" or "http/cohere".
func (h *HTTP) Name() string { return "http/" + h.style }

// Rerank sends the candidates to the server and returns the best topN
// (topN <= 0 means all). Ties keep the incoming order. No hits give nil,
// nil without a request.
func (h *HTTP) Rerank(ctx context.Context, query string, hits []retrieval.Hit, topN int) ([]retrieval.Hit, error) {
	if len(hits) == 0 {
		return nil, nil
	}
	if topN <= 0 || topN > len(hits) {
		topN = len(hits)
	}
	if h.cfg.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, h.cfg.Timeout)
		defer cancel()
	}
	docs := make([]string, len(hits))
	for i, hit := range hits {
		docs[i] = passage(hit.Chunk)
	}
	var body any
	if h.style == StyleCohere {
		body = struct {
			Model     string   `json:"model,omitempty"`
			Query     string   `json:"query"`
			Documents []string `json:"documents"`
			TopN      int      `json:"top_n"`
		}{h.cfg.Model, query, docs, topN}
	} else {
		body = struct {
			Query     string   `json:"query"`
			Texts     []string `json:"texts"`
			RawScores bool     `json:"raw_scores"`
			Truncate  bool     `json:"truncate"`
		}{query, docs, false, true}
	}
	raw, err := h.post(ctx, body)
	if err != nil {
		return nil, fmt.Errorf("rerank: %s: %w", h.Name(), err)
	}
	scores, err := h.decode(raw, len(hits))
	if err != nil {
		return nil, fmt.Errorf("rerank: %s: %w", h.Name(), err)
	}
	// Cohere-style servers return only top_n results; TEI returns all.
	if len(scores) < topN {
		return nil, fmt.Errorf("rerank: %s: %d scores for %d wanted hits: %w", h.Name(), len(scores), topN, ErrBadResponse)
	}
	return order(hits, scores, topN), nil
}

// passage is the text a cross-encoder sees for a chunk: the title adds
// context the chunk text often lacks.
func passage(c retrieval.Chunk) string {
	if c.Title == "" || strings.HasPrefix(c.Text, c.Title) {
		return c.Text
	}
	return c.Title + "\n" + c.Text
}

func (h *HTTP) post(ctx context.Context, body any) ([]byte, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("encode request: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.url, bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if h.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+h.cfg.APIKey)
	}
	resp, err := h.hc.Do(req)
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return nil, fmt.Errorf("%w (%v)", cerr, err)
		}
		return nil, fmt.Errorf("%w: %w", retrieval.ErrUnavailable, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return nil, fmt.Errorf("read answer: %w (%v)", cerr, err)
		}
		return nil, fmt.Errorf("read answer: %w: %w", retrieval.ErrUnavailable, err)
	}
	if resp.StatusCode/100 != 2 {
		kind := retrieval.ErrInvalid
		if resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests {
			kind = retrieval.ErrUnavailable
		}
		return nil, fmt.Errorf("HTTP %d: %s: %w", resp.StatusCode, snippet(raw), kind)
	}
	if len(raw) > maxBody {
		return nil, fmt.Errorf("answer larger than %d bytes: %w", maxBody, ErrBadResponse)
	}
	return raw, nil
}

// decode parses a style's answer into scores and checks every index.
func (h *HTTP) decode(raw []byte, n int) ([]scoredIdx, error) {
	type item struct {
		Index *int     `json:"index"`
		Score *float64 `json:"score"`
		Rel   *float64 `json:"relevance_score"`
	}
	var items []item
	if h.style == StyleCohere {
		var r struct {
			Results []item `json:"results"`
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			return nil, fmt.Errorf("decode answer: %v: %w", err, ErrBadResponse)
		}
		items = r.Results
	} else if err := json.Unmarshal(raw, &items); err != nil {
		return nil, fmt.Errorf("decode answer: %v: %w", err, ErrBadResponse)
	}
	seen := make([]bool, n)
	out := make([]scoredIdx, 0, len(items))
	for k, it := range items {
		s := it.Score
		if h.style == StyleCohere {
			s = it.Rel
		}
		switch {
		case it.Index == nil || s == nil:
			return nil, fmt.Errorf("result %d lacks an index or a score: %w", k, ErrBadResponse)
		case *it.Index < 0 || *it.Index >= n:
			return nil, fmt.Errorf("result %d: index %d out of range [0,%d): %w", k, *it.Index, n, ErrBadResponse)
		case seen[*it.Index]:
			return nil, fmt.Errorf("result %d: index %d scored twice: %w", k, *it.Index, ErrBadResponse)
		case math.IsNaN(*s) || math.IsInf(*s, 0):
			return nil, fmt.Errorf("result %d: score %v: %w", k, *s, ErrBadResponse)
		}
		seen[*it.Index] = true
		out = append(out, scoredIdx{idx: *it.Index, score: *s})
	}
	return out, nil
}

// snippet shortens a server's error body for an error message.
func snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	if s == "" {
		return "(empty body)"
	}
	return s
}
