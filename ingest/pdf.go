package ingest

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/klippa-app/go-pdfium"
	pdferrors "github.com/klippa-app/go-pdfium/errors"
	"github.com/klippa-app/go-pdfium/requests"
	"github.com/klippa-app/go-pdfium/responses"
	"github.com/klippa-app/go-pdfium/webassembly"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
)

// MetaPage is the chunk metadata key of the 1-based page a PDF chunk
// comes from ("3"); its locator starts with "page 3" too.
const MetaPage = "page"

// Defaults for PDFEngineConfig.
const (
	// DefaultPDFMemoryLimit bounds the memory of one PDFium instance.
	DefaultPDFMemoryLimit = 1 << 30
	// DefaultPDFInstances bounds the instances, and so the PDF files read
	// at the same time; fewer when GOMAXPROCS is smaller.
	DefaultPDFInstances = 4
)

// PDFEngineConfig configures a PDFEngine. The zero value is usable.
type PDFEngineConfig struct {
	// Instances is the number of PDFium instances, that is of PDF files
	// read at once; others wait. 0 means min(GOMAXPROCS,
	// DefaultPDFInstances).
	Instances int
	// MemoryLimit is the most memory, in bytes, one instance may use (the
	// file itself included); a file needing more fails with ErrMalformed
	// rather than taking the process down. 0 means DefaultPDFMemoryLimit.
	MemoryLimit int64
}

// PDFEngine reads PDF files with PDFium compiled to WebAssembly and run by
// wazero: pure Go, no cgo, nothing downloaded at run time. The first
// engine of a process compiles the module, which takes seconds (the
// compiled code is then kept for the process), so a process should keep
// one engine:
// Options.Doc.PDF names it, and when it is nil the process-wide engine of
// SharedPDFEngine is used. An engine is safe for concurrent use; each file
// gets an instance of its own, which cannot see the file system, and which
// is killed when the file's deadline passes.
type PDFEngine struct {
	pool pdfium.Pool
	mu   sync.Mutex
	done bool
}

// NewPDFEngine compiles PDFium and returns an engine; Close releases it.
func NewPDFEngine(ctx context.Context, cfg PDFEngineConfig) (*PDFEngine, error) {
	n := cfg.Instances
	if n <= 0 {
		n = min(runtime.GOMAXPROCS(0), DefaultPDFInstances)
	}
	limit := cfg.MemoryLimit
	if limit <= 0 {
		limit = DefaultPDFMemoryLimit
	}
	pages := uint32(min(limit>>16, 65536))
	rc := wazero.NewRuntimeConfig().
		WithCoreFeatures(api.CoreFeaturesV2 | experimental.CoreFeaturesExceptionHandling).
		WithMemoryLimitPages(pages).
		WithCloseOnContextDone(true).
		WithCompilationCache(compiled())
	pool, err := webassembly.Init(webassembly.Config{
		Context:       context.WithoutCancel(ctx),
		MinIdle:       0,
		MaxIdle:       n,
		MaxTotal:      n,
		FSConfig:      wazero.NewFSConfig(), // no file system: files are passed as bytes
		RuntimeConfig: rc,
		Stdout:        discard{},
		Stderr:        discard{},
		ReuseWorkers:  true, // instantiating a module per file costs more than reading a short one
	})
	if err != nil {
		return nil, fmt.Errorf("ingest: start PDFium: %w", err)
	}
	return &PDFEngine{pool: pool}, nil
}

// Close releases the engine's instances and compiled module. Reading with
// a closed engine fails; Close is idempotent.
func (e *PDFEngine) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.done {
		return nil
	}
	e.done = true
	if err := e.pool.Close(); err != nil {
		return fmt.Errorf("ingest: close PDFium: %w", err)
	}
	return nil
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// compiledCache keeps PDFium's compiled code for the life of the process,
// so that a second engine (a test's, a reopened service's) starts in
// milliseconds rather than seconds.
var compiledCache struct {
	once  sync.Once
	cache wazero.CompilationCache
}

func compiled() wazero.CompilationCache {
	compiledCache.once.Do(func() { compiledCache.cache = wazero.NewCompilationCache() })
	return compiledCache.cache
}

// shared is the process-wide engine of SharedPDFEngine.
var shared struct {
	once sync.Once
	e    *PDFEngine
	err  error
}

// SharedPDFEngine returns the process-wide PDFEngine, created with the
// zero PDFEngineConfig on first use and kept until the process exits. It
// is what Parse and Ingest use when Options.Doc.PDF is nil, so that a process
// compiles PDFium once. A caller that wants to release it explicitly
// should create its own engine with NewPDFEngine and set Options.Doc.PDF.
func SharedPDFEngine() (*PDFEngine, error) {
	shared.once.Do(func() {
		shared.e, shared.err = NewPDFEngine(context.Background(), PDFEngineConfig{})
	})
	return shared.e, shared.err
}

// pdfPage is the text of one page as PDFium gives it.
type pdfPage struct {
	width, height float64
	chars         []*responses.GetPageTextStructuredChar
}

// pdfFile is what readPDF extracts from a file.
type pdfFile struct {
	title   string
	outline []outlineEntry
	pages   []pdfPage
}

// outlineEntry is one bookmark: its title, depth (1 for the top level)
// and 0-based page, -1 when it points nowhere.
type outlineEntry struct {
	title string
	level int
	page  int
}

// read extracts title, outline and characters from a PDF file, within ctx
// and the limits of o. The instance is killed when ctx ends first.
func (e *PDFEngine) read(ctx context.Context, data []byte, o DocOptions) (f pdfFile, err error) {
	e.mu.Lock()
	closed := e.done
	e.mu.Unlock()
	if closed {
		return f, errors.New("ingest: the PDF engine is closed")
	}
	inst, err := e.pool.GetInstanceWithContext(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return f, fmt.Errorf("waiting for a PDF instance: %w", ctx.Err())
		}
		return f, fmt.Errorf("ingest: PDF instance: %w", err)
	}
	var (
		once   sync.Once
		killed bool
		wg     sync.WaitGroup
	)
	finished := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		select {
		case <-ctx.Done():
			once.Do(func() { killed = true; _ = inst.Kill() })
		case <-finished:
		}
	}()
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: PDFium failed: %v", ErrMalformed, r)
		}
		close(finished)
		wg.Wait()
		once.Do(func() { _ = inst.Close() })
		if killed || (err != nil && ctx.Err() != nil) {
			err = fmt.Errorf("%w: reading stopped after %v: %w", ErrDocLimit, o.timeout(), ctx.Err())
		}
	}()
	empty := ""
	doc, err := inst.OpenDocument(&requests.OpenDocument{File: &data, Password: &empty})
	if err != nil {
		return f, pdfOpenError(err)
	}
	defer inst.FPDF_CloseDocument(&requests.FPDF_CloseDocument{Document: doc.Document})
	pc, err := inst.FPDF_GetPageCount(&requests.FPDF_GetPageCount{Document: doc.Document})
	if err != nil {
		return f, fmt.Errorf("%w: page count: %w", ErrMalformed, err)
	}
	if max := o.maxPages(); pc.PageCount > max {
		return f, fmt.Errorf("%w: %d pages, limit %d (DocOptions.MaxPages)", ErrDocLimit, pc.PageCount, max)
	}
	if mt, err := inst.FPDF_GetMetaText(&requests.FPDF_GetMetaText{Document: doc.Document, Tag: "Title"}); err == nil {
		f.title = strings.TrimSpace(mt.Value)
	}
	if bm, err := inst.GetBookmarks(&requests.GetBookmarks{Document: doc.Document}); err == nil {
		f.outline = flattenOutline(bm.Bookmarks, 1, nil)
	}
	for i := 0; i < pc.PageCount; i++ {
		if err := ctx.Err(); err != nil {
			return f, err
		}
		var p pdfPage
		if sz, err := inst.FPDF_GetPageSizeByIndex(&requests.FPDF_GetPageSizeByIndex{Document: doc.Document, Index: i}); err == nil {
			p.width, p.height = sz.Width, sz.Height
		}
		st, err := inst.GetPageTextStructured(&requests.GetPageTextStructured{
			Page:                   requests.Page{ByIndex: &requests.PageByIndex{Document: doc.Document, Index: i}},
			Mode:                   requests.GetPageTextStructuredModeChars,
			CollectFontInformation: true,
		})
		if err != nil {
			if ctx.Err() != nil {
				return f, ctx.Err()
			}
			return f, fmt.Errorf("%w: page %d: %w", ErrMalformed, i+1, err)
		}
		p.chars = st.Chars
		f.pages = append(f.pages, p)
	}
	return f, nil
}

// flattenOutline lists bookmarks depth first.
func flattenOutline(bs []responses.GetBookmarksBookmark, level int, out []outlineEntry) []outlineEntry {
	if level > 16 {
		return out
	}
	for _, b := range bs {
		pg := -1
		if b.DestInfo != nil {
			pg = b.DestInfo.PageIndex
		}
		if t := strings.Join(strings.Fields(b.Title), " "); t != "" {
			out = append(out, outlineEntry{title: t, level: level, page: pg})
		}
		out = flattenOutline(b.Children, level+1, out)
	}
	return out
}

// pdfOpenError turns PDFium's open errors into the package's sentinels.
func pdfOpenError(err error) error {
	switch {
	case errors.Is(err, pdferrors.ErrPassword), errors.Is(err, pdferrors.ErrSecurity):
		return fmt.Errorf("%w: the PDF needs a password", ErrEncrypted)
	case errors.Is(err, pdferrors.ErrFormat), errors.Is(err, pdferrors.ErrFile):
		return fmt.Errorf("%w: not a readable PDF (corrupt or truncated): %w", ErrMalformed, err)
	}
	return fmt.Errorf("%w: PDFium cannot open it: %w", ErrMalformed, err)
}

// deadline bounds one document's reading by o.Timeout.
func (o DocOptions) deadline(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, o.timeout())
}

func (o DocOptions) timeout() time.Duration {
	if o.Timeout > 0 {
		return o.Timeout
	}
	return DefaultDocTimeout
}

func (o DocOptions) maxPages() int {
	if o.MaxPages > 0 {
		return o.MaxPages
	}
	return DefaultMaxPages
}
