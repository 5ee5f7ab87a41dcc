package ingest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"time"

	"github.com/adaptrag/adaptrag/retrieval"
)

// Sentinel errors, matched with errors.Is.
var (
	// ErrUnsupported reports a file whose extension has no loader.
	ErrUnsupported = errors.New("ingest: unsupported file type")
	// ErrMalformed reports a file its loader could not parse.
	ErrMalformed = errors.New("ingest: malformed file")
	// ErrBinary reports a file whose content is not UTF-8 text: binary
	// data, or text in another encoding.
	ErrBinary = errors.New("ingest: not a text file")
	// ErrTooLarge reports a file above Options.MaxFileSize.
	ErrTooLarge = errors.New("ingest: file too large")
	// ErrOutsideRoot reports a symbolic link that leads outside the
	// ingested folder; Options.FollowSymlinks allows following it.
	ErrOutsideRoot = errors.New("ingest: link leads outside the ingested folder")
	// ErrEmbedding reports an embedder that returned the wrong number of
	// vectors. A vector of the wrong length matches retrieval.ErrDimension.
	ErrEmbedding = errors.New("ingest: embedder returned a bad result")
	// ErrNoFAQStore reports an FAQ file ingested into a Target without an
	// FAQ store.
	ErrNoFAQStore = errors.New("ingest: no FAQ collection to store FAQ entries in")
	// ErrNoLister reports Options.Prune with a store that cannot list its
	// documents (it does not implement retrieval.Lister).
	ErrNoLister = errors.New("ingest: store cannot list its documents")
)

// Defaults for Options.
const (
	DefaultBatchSize   = 32
	DefaultMaxFileSize = 16 << 20
)

// Target is where ingestion stores chunks: the two collections of a
// knowledge base.
type Target struct {
	// Docs receives the chunks of documents. Required.
	Docs retrieval.Store
	// FAQ receives one chunk per entry of FAQ files. Nil makes every FAQ
	// file fail with ErrNoFAQStore.
	FAQ retrieval.Store
	// Tables, when set, receives every file's tables with their schemas
	// (see TableWriter), after the file's chunks are stored; a file
	// without tables, or a pruned one, has its tables deleted.
	Tables TableWriter
}

// Options configures loading and ingestion. The zero value is usable: the
// default tenant "", sources from folder names, DefaultChunkSize and
// DefaultOverlap runes, batches of DefaultBatchSize, no progress callback,
// no embedder (chunks are stored without vectors, for sparse-only stores),
// links leading outside an ingested folder refused, and nothing pruned.
type Options struct {
	// Tenant is written into every chunk and scopes every write. It comes
	// from the caller's authority, never from file content.
	Tenant string
	// Source, when set, is the source of every chunk. When empty, a chunk's
	// source is its record's own source field (JSONL, FAQ), else the top
	// folder of the file under the ingested folder, else the name of that
	// folder itself (for files directly in it).
	Source string
	// ChunkSize and Overlap are in runes; see Splitter for the zero values.
	// The heading path written before a chunk counts towards ChunkSize.
	ChunkSize, Overlap int
	// Progress, if set, is called from the ingesting goroutine once before
	// the first file and once after each file.
	Progress func(Progress)
	// BatchSize is the number of chunks per Embed call; 0 means
	// DefaultBatchSize. A document is stored with one ReplaceDocument call
	// whatever its size.
	BatchSize int
	// Embedder computes chunk vectors (of EmbedText). Nil stores chunks
	// without vectors.
	Embedder retrieval.Embedder
	// JSONL says which record fields hold the text, id, title and source.
	JSONL JSONLOptions
	// MaxFileSize rejects larger files with ErrTooLarge; 0 means
	// DefaultMaxFileSize.
	MaxFileSize int64
	// FAQFiles are read as FAQ files whatever their content looks like (an
	// error matching ErrMalformed when they have no question and answer
	// fields). For Ingest they are paths on disk, ingested even when they
	// are not under the paths; for IngestFS and LoadFS, paths inside the
	// file system.
	FAQFiles []string
	// FollowSymlinks follows links that lead outside an ingested folder
	// (never the folders behind links). Without it such a link is an error
	// matching ErrOutsideRoot and its target is not read.
	FollowSymlinks bool
	// Prune, after a run that was not cancelled, deletes the documents of
	// the tenant, in both collections, whose file lay under an ingested
	// folder and no longer exists; a folder argument that is gone prunes
	// everything ingested from it. Both stores must implement
	// retrieval.Lister (ErrNoLister otherwise). Report.Pruned lists them.
	Prune bool
	// Now gives the time written into retrieval.MetaIngestedAt; nil means
	// time.Now.
	Now func() time.Time
	// Doc bounds the reading of PDF, DOCX and PPTX files (pages, time,
	// decompressed bytes) and names the PDF engine; see DocOptions.
	Doc DocOptions
	// Loaded, when set, is called with each document whose chunks were
	// stored, in order, on the goroutine that called Ingest: what a caller
	// derives from the documents (their vocabulary, say) comes from the
	// files as this run read them, within its limits, without reading
	// them again.
	Loaded func(Document)
}

// Progress is a snapshot of an ingestion run.
type Progress struct {
	FilesDone, FilesTotal int
	Chunks                int    // chunks produced so far, FAQ entries included
	Path                  string // the file just finished, "" before the first
	Err                   error  // that file's error, if it failed
}

// FileError is the failure of one file. Other files are still ingested.
type FileError struct {
	Path string
	Err  error
}

// Error implements error.
func (e *FileError) Error() string { return e.Path + ": " + e.Err.Error() }

// Unwrap returns the cause.
func (e *FileError) Unwrap() error { return e.Err }

// Skip is a file left out on purpose, without an error.
type Skip struct {
	Path   string
	Reason string // "no loader for this file type", "link to a folder ..."
}

// FileWarning is a note on a file that was ingested with part of its
// content left out, for example the pages of a PDF without a text layer
// ("pages 3, 7-9: no text layer, OCR not configured").
type FileWarning struct {
	Path    string
	Message string
}

// String returns "path: message".
func (w FileWarning) String() string { return w.Path + ": " + w.Message }

// Report summarises an ingestion run.
type Report struct {
	Files      int         // document files loaded (and stored, for Ingest) without error
	Chunks     int         // document chunks of those files
	FAQFiles   int         // FAQ files loaded (and stored) without error
	FAQEntries int         // FAQ entries of those files, one chunk each
	Skipped    []Skip      // files left out: no loader, links to folders
	Errors     []FileError // files that failed, in walk order
	// Warnings are notes on files that were ingested with some content
	// left out (pages without a text layer), in walk order.
	Warnings []FileWarning
	// Pruned lists the documents Options.Prune deleted (ContentType
	// retrieval.ContentFAQ for FAQ files).
	Pruned []retrieval.DocInfo
}

// Err joins the per-file errors, or returns nil when there are none.
func (r Report) Err() error {
	errs := make([]error, len(r.Errors))
	for i := range r.Errors {
		errs[i] = &r.Errors[i]
	}
	return errors.Join(errs...)
}

// LoadFS loads and splits every supported file of fsys, without embedding
// or storing: document chunks and, for FAQ files, FAQ chunks (ContentType
// retrieval.ContentFAQ). Hidden files and folders (".name") are skipped,
// and so are files without a loader (listed in Report.Skipped). A file
// that fails is recorded in Report.Errors and the others are still loaded.
// The error is non-nil only when ctx ends, wrapping ctx.Err(). A file
// system without content gives nil chunks. Options.Prune is ignored.
func LoadFS(ctx context.Context, fsys fs.FS, o Options) ([]retrieval.Chunk, Report, error) {
	var rep Report
	c := newCollector(o, &rep)
	c.fs(fsys)
	var all []retrieval.Chunk
	err := run(ctx, c.files, &rep, o, func(_ context.Context, _ Document, cs []retrieval.Chunk, _ []SchemaTable) error {
		all = append(all, cs...)
		return nil
	})
	return all, rep, err
}

// IngestFS ingests every supported file of fsys into t; see Ingest.
// Document ids are the paths inside fsys (DocID), so two file systems
// ingested into one store must not share paths. With Options.Prune, fsys
// is taken as the whole tree: documents with such ids that fsys no longer
// holds are deleted. This is how the embedded sample knowledge base is
// loaded.
func IngestFS(ctx context.Context, t Target, fsys fs.FS, o Options) (Report, error) {
	if err := check(t, o); err != nil {
		return Report{}, err
	}
	var rep Report
	c := newCollector(o, &rep)
	c.fs(fsys)
	err := run(ctx, c.files, &rep, o, storeFunc(t, o))
	if err == nil && o.Prune {
		err = prune(ctx, t, c.trees, o, &rep)
	}
	return rep, err
}

// fs lists the files of an IngestFS or LoadFS file system.
func (c *collector) fs(fsys fs.FS) {
	for _, p := range c.o.FAQFiles {
		c.faq[DocID(p)] = true
	}
	c.walk(&tree{fsys: fsys, folder: true})
}

// Ingest loads, splits, embeds and stores the given files and folders
// (walked recursively) into t: documents into t.Docs, the entries of FAQ
// files (recognised by content, see ParseFAQ, or named in
// Options.FAQFiles) into t.FAQ.
//
// A document's id is its file's resolved absolute path (FileDocID), the
// same whichever folder, subfolder or file argument reaches it, so
// ingesting a folder and then one of its subfolders adds no duplicate, and
// two files of the same name in different folders stay two documents. The
// price: moving or renaming the folder gives its files new ids; ingest the
// old location with Options.Prune to delete what was ingested from it.
// Links are followed only inside the folder being walked (see
// Options.FollowSymlinks); a link to a file of the folder is that file. A
// path given as an argument is resolved wherever its links lead: naming
// it is consent.
//
// Each file is embedded whole and then stored with one
// Store.ReplaceDocument call, so a failure or a cancellation leaves the
// stored version intact and readers never see half a file; re-ingesting
// an unchanged file leaves the same chunk ids. A file that fails
// (unreadable, not text, malformed, rejected by the embedder or the
// store) is recorded in Report.Errors and the rest continue. The returned
// error is reserved for the run as a whole: no Docs store, an embedder
// whose dimension differs from a store's, Prune without a Lister, or ctx
// ending (the error then wraps ctx.Err(), so a timeout matches
// context.DeadlineExceeded).
func Ingest(ctx context.Context, t Target, paths []string, o Options) (Report, error) {
	if err := check(t, o); err != nil {
		return Report{}, err
	}
	var rep Report
	c := newCollector(o, &rep)
	release := c.disk(paths)
	defer release()
	err := run(ctx, c.files, &rep, o, storeFunc(t, o))
	if err == nil && o.Prune {
		err = prune(ctx, t, c.trees, o, &rep)
	}
	return rep, err
}

// check validates the run-wide configuration.
func check(t Target, o Options) error {
	if t.Docs == nil {
		return fmt.Errorf("ingest: nil document store: %w", retrieval.ErrInvalid)
	}
	for _, st := range []struct {
		name string
		s    retrieval.Store
	}{{"document", t.Docs}, {"FAQ", t.FAQ}} {
		if st.s == nil {
			continue
		}
		if o.Embedder != nil {
			if sd, ed := st.s.Dim(), o.Embedder.Dim(); sd > 0 && ed > 0 && sd != ed {
				return fmt.Errorf("ingest: embedder dimension %d, %s store dimension %d: %w", ed, st.name, sd, retrieval.ErrDimension)
			}
		}
		if _, ok := st.s.(retrieval.Lister); o.Prune && !ok {
			return fmt.Errorf("%w: the %s store (%T) does not implement retrieval.Lister, so nothing can be pruned", ErrNoLister, st.name, st.s)
		}
	}
	return nil
}

// sink receives the chunks of one loaded document.
type sink func(ctx context.Context, doc Document, chunks []retrieval.Chunk, tables []SchemaTable) error

// run loads every file and hands its chunks to sink, recording per-file
// errors and reporting progress. It stops only when ctx ends.
func run(ctx context.Context, files []file, rep *Report, o Options, sink sink) error {
	// Paths that failed before the run (a missing argument) count as done.
	total := len(files) + len(rep.Errors)
	done := func() int { return rep.Files + rep.FAQFiles + len(rep.Errors) }
	progress := func(path string, err error) {
		if o.Progress != nil {
			o.Progress(Progress{FilesDone: done(), FilesTotal: total,
				Chunks: rep.Chunks + rep.FAQEntries, Path: path, Err: err})
		}
	}
	progress("", nil)
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("ingest: %w", err)
		}
		doc, n, err := ingestFile(ctx, f, o, sink)
		switch {
		case err != nil:
			if ctxErr := ctx.Err(); ctxErr != nil && isContextErr(err) {
				return fmt.Errorf("ingest: %s: %w", f.display, err)
			}
			rep.Errors = append(rep.Errors, FileError{Path: f.display, Err: err})
		case doc.FAQ:
			rep.FAQFiles++
			rep.FAQEntries += n
		default:
			rep.Files++
			rep.Chunks += n
		}
		if err == nil && o.Loaded != nil {
			o.Loaded(doc)
		}
		if err == nil {
			for _, w := range doc.Warnings {
				rep.Warnings = append(rep.Warnings, FileWarning{Path: f.display, Message: w})
			}
		}
		progress(f.display, err)
	}
	return nil
}

func isContextErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// ingestFile loads one file and passes its chunks to sink. A loader panic
// is turned into the file's error rather than crashing the run.
func ingestFile(ctx context.Context, f file, o Options, sink sink) (doc Document, n int, err error) {
	data, err := read(f, cmp.Or(o.MaxFileSize, DefaultMaxFileSize))
	if err != nil {
		return doc, 0, err
	}
	var chunks []retrieval.Chunk
	var tables []SchemaTable
	func() {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("%w: loader panic: %v", ErrMalformed, r)
			}
		}()
		doc, err = parse(ctx, f.origin, data, o, f.faq)
		if err != nil {
			return
		}
		doc.ID = f.id
		doc.Source = f.tree.src
		if top, _, ok := strings.Cut(doc.Path, "/"); ok {
			doc.Source = top
		}
		chunks = Chunks(doc, o)
		tables, err = schemaTables(doc, f.tree.fsys, f.origin)
	}()
	if err != nil {
		return doc, 0, err
	}
	if err := sink(ctx, doc, chunks, tables); err != nil {
		return doc, 0, err
	}
	return doc, len(chunks), nil
}

// read returns the content of f, refusing more than limit bytes.
func read(f file, limit int64) ([]byte, error) {
	fh, err := f.open()
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	info, err := fh.Stat()
	if err != nil {
		return nil, err
	}
	if info.IsDir() {
		return nil, fmt.Errorf("%w: a folder", ErrUnsupported)
	}
	if info.Size() > limit {
		return nil, fmt.Errorf("%w: %d bytes, limit %d", ErrTooLarge, info.Size(), limit)
	}
	data, err := io.ReadAll(io.LimitReader(fh, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%w: more than %d bytes", ErrTooLarge, limit)
	}
	return data, nil
}

// storeFunc returns the sink of Ingest and IngestFS: embed every chunk of
// the document, then replace the document in its collection with one
// ReplaceDocument call. Embedding comes first, so a failing embedder or a
// cancellation leaves the stored version intact. The document is then
// removed from the other collection, in case the file changed kind.
func storeFunc(t Target, o Options) sink {
	batch := cmp.Or(o.BatchSize, DefaultBatchSize)
	if batch < 0 {
		batch = DefaultBatchSize
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	scope := retrieval.Scope{Tenant: o.Tenant}
	return func(ctx context.Context, doc Document, chunks []retrieval.Chunk, tables []SchemaTable) error {
		dst, other := t.Docs, t.FAQ
		if doc.FAQ {
			dst, other = t.FAQ, t.Docs
			if dst == nil {
				return ErrNoFAQStore
			}
		}
		if o.Embedder != nil {
			for i := 0; i < len(chunks); i += batch {
				if err := embed(ctx, o.Embedder, chunks[i:min(i+batch, len(chunks))]); err != nil {
					return err
				}
			}
		}
		stamp := now().UTC().Format(time.RFC3339)
		for i := range chunks {
			chunks[i].Meta[retrieval.MetaIngestedAt] = stamp
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := dst.ReplaceDocument(ctx, scope, doc.ID, chunks); err != nil {
			return fmt.Errorf("store: %w", err)
		}
		if other != nil {
			err := other.DeleteDocument(ctx, scope, doc.ID)
			if err != nil && !errors.Is(err, retrieval.ErrNotFound) {
				return fmt.Errorf("remove from the other collection: %w", err)
			}
		}
		if t.Tables != nil {
			if err := t.Tables.ReplaceTables(ctx, scope, doc.ID, tables); err != nil {
				return fmt.Errorf("store tables: %w", err)
			}
		}
		return nil
	}
}

// embed sets the vectors of chunks with one Embed call.
func embed(ctx context.Context, e retrieval.Embedder, chunks []retrieval.Chunk) error {
	texts := make([]string, len(chunks))
	for i := range chunks {
		texts[i] = EmbedText(&chunks[i])
	}
	vecs, err := e.Embed(ctx, texts)
	if err != nil {
		return fmt.Errorf("embed: %w", err)
	}
	if len(vecs) != len(texts) {
		return fmt.Errorf("%w: %d vectors for %d texts", ErrEmbedding, len(vecs), len(texts))
	}
	for i, v := range vecs {
		if d := e.Dim(); d > 0 && len(v) != d || len(v) == 0 {
			return fmt.Errorf("embed: vector of length %d, want %d: %w", len(v), e.Dim(), retrieval.ErrDimension)
		}
		chunks[i].Vector = v
	}
	return nil
}
