package service

import (
	"io/fs"
	"mime"
	"net/http"
	"os"
	"path"
	"strings"

	"github.com/adaptrag/adaptrag/ingest"
)

// filesPrefix is where the knowledge base's files are served: a
// citation's origin appended to it names its file.
const filesPrefix = "/v1/files/"

// handleFile serves GET /v1/files/ORIGIN: the file a citation's origin
// names, from the caller's tenant's folder (Config.Files), never another
// tenant's. Only files ingest would load are served, never hidden ones,
// and links never lead out of the folder. Nothing is sent that a browser
// would run: HTML and other text go as text/plain in a sandbox, so a
// knowledge base's file cannot script the service's page.
// A PDF opens at a page with "#page=N" on the URL, in the browser.
func (s *Server) handleFile(w http.ResponseWriter, r *http.Request, c caller) {
	dir, ok := s.cfg.Files[c.Tenant]
	name := strings.TrimPrefix(r.URL.Path, filesPrefix)
	if !ok || dir == "" {
		writeError(w, newError(CodeNotFound, "this service serves no files for your tenant"))
		return
	}
	if !fs.ValidPath(name) || name == "." || hiddenPath(name) || !ingest.Supported(name) {
		writeError(w, newError(CodeNotFound, "no such file: %q", name))
		return
	}
	root, err := os.OpenRoot(dir) // confines the lookup, links included, to dir
	if err != nil {
		s.log.ErrorContext(r.Context(), "files: open folder", "err", err)
		writeError(w, newError(CodeUnavailable, "the knowledge base's folder cannot be opened"))
		return
	}
	defer root.Close()
	f, err := root.Open(name)
	if err != nil {
		writeError(w, newError(CodeNotFound, "no such file: %q", name))
		return
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() {
		writeError(w, newError(CodeNotFound, "no such file: %q", name))
		return
	}
	ctype := "application/octet-stream"
	switch ext := strings.ToLower(path.Ext(name)); ext {
	case ".pdf":
		ctype = "application/pdf"
	case ".docx", ".pptx":
		if t := mime.TypeByExtension(ext); t != "" {
			ctype = t
		}
	default: // Markdown, HTML, CSV, JSON lines, text: shown, never run
		ctype = "text/plain; charset=utf-8"
	}
	h := w.Header()
	h.Set("Content-Type", ctype)
	h.Set("X-Content-Type-Options", "nosniff")
	if ctype != "application/pdf" { // a browser's PDF viewer does not run in a sandbox
		h.Set("Content-Security-Policy", "sandbox")
	}
	h.Set("Cache-Control", "private, no-store")
	h.Set("Content-Disposition", mime.FormatMediaType("inline", map[string]string{"filename": path.Base(name)}))
	http.ServeContent(w, r, path.Base(name), info.ModTime(), f)
}

// hiddenPath reports whether a segment of the slash-separated name is
// hidden (".name"), as ingest skips such files.
func hiddenPath(name string) bool {
	for seg := range strings.SplitSeq(name, "/") {
		if strings.HasPrefix(seg, ".") {
			return true
		}
	}
	return false
}
