package ingest

import (
	"errors"
	"time"
)

// Sentinel errors of the document loaders (PDF, DOCX, PPTX), matched with
// errors.Is.
var (
	// ErrEncrypted reports a document that needs a password.
	ErrEncrypted = errors.New("ingest: encrypted document")
	// ErrDocLimit reports a document that exceeds a limit of DocOptions:
	// too many pages, too much uncompressed content, or reading it took
	// longer than the deadline.
	ErrDocLimit = errors.New("ingest: document exceeds a limit")
	// ErrNoTextLayer reports a PDF none of whose pages has text (a scan):
	// there is nothing to ingest without OCR, which is not configured.
	ErrNoTextLayer = errors.New("ingest: no text layer, OCR not configured")
)

// Defaults for DocOptions.
const (
	DefaultMaxPages    = 2000
	DefaultDocTimeout  = 2 * time.Minute
	DefaultMaxUnzipped = 256 << 20
	// DefaultMaxZipEntries bounds the entries of a DOCX or PPTX archive.
	DefaultMaxZipEntries = 10000
)

// DocOptions bounds the reading of PDF, Word (.docx) and PowerPoint
// (.pptx) files, so that a huge or hostile file fails alone, in bounded
// time and memory, instead of taking the process down. The file size
// itself is bounded by Options.MaxFileSize. The zero value means the
// defaults below.
type DocOptions struct {
	// MaxPages refuses PDFs with more pages (ErrDocLimit); 0 means
	// DefaultMaxPages (2,000).
	MaxPages int
	// Timeout is the deadline of reading one file (ErrDocLimit when it
	// passes); 0 means DefaultDocTimeout (2 min).
	Timeout time.Duration
	// MaxUnzipped bounds the bytes decompressed from a DOCX or PPTX
	// archive, all entries together, against zip bombs (ErrDocLimit); 0
	// means DefaultMaxUnzipped (256 MiB).
	MaxUnzipped int64
	// PDF is the engine PDF files are read with; nil means the process's
	// shared engine (SharedPDFEngine).
	PDF *PDFEngine
}

func (o DocOptions) maxUnzipped() int64 {
	if o.MaxUnzipped > 0 {
		return o.MaxUnzipped
	}
	return DefaultMaxUnzipped
}

func (o DocOptions) engine() (*PDFEngine, error) {
	if o.PDF != nil {
		return o.PDF, nil
	}
	return SharedPDFEngine()
}
