package service

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"net/http"
	"path"
	"strings"
	"sync"

	"github.com/adaptrag/adaptrag/api"
)

// The web page and the code it loads, all served from the binary.
//
//go:embed web/index.html web/vendor/mermaid.tiny.js
var webFS embed.FS

// pageCSP lets the page run its own inline script and the vendored files,
// talk only to this server, and never be framed.
const pageCSP = "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; " +
	"img-src 'self' data:; font-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

func (s *Server) handleIndex(w http.ResponseWriter, r *http.Request) {
	b, err := webFS.ReadFile("web/index.html")
	if err != nil {
		writeError(w, newError(CodeInternal, "the page is missing from this build"))
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", pageCSP)
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cache-Control", "no-cache")
	_, _ = w.Write(b)
}

// uiConfig tells the page how this server is set up.
type uiConfig struct {
	Auth     bool       `json:"auth"`      // the page must send an API key
	JaegerUI string     `json:"jaeger_ui"` // base URL for trace links; "" for none
	Limits   api.Limits `json:"limits"`    // the page's question box takes no more than the server
	Threads  bool       `json:"threads"`   // the server keeps threads: the page sends "thread", not "history"
}

func (s *Server) handleUIConfig(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, uiConfig{Auth: s.keys != nil, JaegerUI: s.cfg.JaegerUI, Limits: s.limits(),
		Threads: s.cfg.Pipeline.HasThreads()})
}

// asset is a vendored file, with its gzip form made once.
type asset struct {
	plain, gz []byte
	etag      string
	ctype     string
}

var assets = sync.OnceValue(func() map[string]*asset {
	m := map[string]*asset{}
	for _, name := range []string{"mermaid.tiny.js"} {
		b, err := webFS.ReadFile("web/vendor/" + name)
		if err != nil {
			continue
		}
		var gz bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
		_, _ = zw.Write(b)
		_ = zw.Close()
		sum := sha256.Sum256(b)
		ctype := "application/octet-stream"
		if strings.HasSuffix(name, ".js") {
			ctype = "text/javascript; charset=utf-8"
		}
		m[name] = &asset{plain: b, gz: gz.Bytes(), etag: `"` + hex.EncodeToString(sum[:12]) + `"`, ctype: ctype}
	}
	return m
})

func (s *Server) handleAsset(w http.ResponseWriter, r *http.Request) {
	a, ok := assets()[path.Base(r.URL.Path)]
	if !ok || path.Dir(r.URL.Path) != "/assets" {
		writeError(w, newError(CodeNotFound, "no such asset: %s", r.URL.Path))
		return
	}
	h := w.Header()
	h.Set("Content-Type", a.ctype)
	h.Set("Cache-Control", "public, max-age=86400")
	h.Set("Vary", "Accept-Encoding")
	h.Set("ETag", a.etag)
	if r.Header.Get("If-None-Match") == a.etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	body := a.plain
	if strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
		h.Set("Content-Encoding", "gzip")
		body = a.gz
	}
	if r.Method == http.MethodHead {
		return
	}
	_, _ = w.Write(body)
}
