package ingest

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/adaptrag/adaptrag/retrieval"
)

// Sentinel errors, matched with errors.Is.
var (
	// ErrUnsupported reports a file whose extension has no loader.
	ErrUnsupported = errors.New("ingest: unsupported file type")
	// ErrMalformed reports a file its loader could not parse.
	ErrMalformed = errors.New("ingest: malformed file")
	// ErrTooLarge reports a file above Options.MaxFileSize.
	ErrTooLarge = errors.New("ingest: file too large")
	// ErrEmbedding reports an embedder that returned the wrong number of
	// vectors. A vector of the wrong length matches retrieval.ErrDimension.
	ErrEmbedding = errors.New("ingest: embedder returned a bad result")
)

// Defaults for Options.
const (
	DefaultBatchSize   = 32
	DefaultMaxFileSize = 16 << 20
)

// Options configures loading and ingestion. The zero value is usable: the
// default tenant "", sources from folder names, DefaultChunkSize and
// DefaultOverlap runes, batches of DefaultBatchSize, no progress callback
// and no embedder (chunks are stored without vectors, for sparse-only
// stores).
type Options struct {
	// Tenant is written into every chunk and scopes DeleteDocument. It comes
	// from the caller's authority, never from file content.
	Tenant string
	// Source, when set, is the source of every chunk. When empty, a chunk's
	// source is its record's own source field (JSONL), else the top folder
	// of the file under the ingestion root, else the name of the root
	// folder itself (for files directly in it).
	Source string
	// ChunkSize and Overlap are in runes; see Splitter for the zero values.
	// The heading path written before a chunk counts towards ChunkSize.
	ChunkSize, Overlap int
	// Progress, if set, is called from the ingesting goroutine once before
	// the first file and once after each file.
	Progress func(Progress)
	// BatchSize is the number of chunks per Embed and Upsert call; 0 means
	// DefaultBatchSize.
	BatchSize int
	// Embedder computes chunk vectors. Nil stores chunks without vectors.
	Embedder retrieval.Embedder
	// JSONL says which record fields hold the text, id, title and source.
	JSONL JSONLOptions
	// MaxFileSize rejects larger files with ErrTooLarge; 0 means
	// DefaultMaxFileSize.
	MaxFileSize int64
}

// Progress is a snapshot of an ingestion run.
type Progress struct {
	FilesDone, FilesTotal int
	Chunks                int    // chunks produced so far
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

// Report summarises an ingestion run.
type Report struct {
	Files   int         // files loaded (and stored, for Ingest) without error
	Chunks  int         // chunks produced by those files
	Skipped int         // files in walked folders without a loader
	Errors  []FileError // files that failed, in walk order
}

// Err joins the per-file errors, or returns nil when there are none.
func (r Report) Err() error {
	errs := make([]error, len(r.Errors))
	for i := range r.Errors {
		errs[i] = &r.Errors[i]
	}
	return errors.Join(errs...)
}

// DocID returns the stable document id of a file: a hash of its
// slash-separated path relative to the ingestion root. The same file
// ingested again from the same root gets the same id, so its old chunks can
// be removed with Store.DeleteDocument before the new ones are upserted.
func DocID(relPath string) string {
	sum := sha256.Sum256([]byte("adaptrag/doc\x00" + path.Clean(filepath.ToSlash(relPath))))
	return hex.EncodeToString(sum[:16])
}

// chunkID returns a chunk's stable id: a hash of tenant, document, the
// chunk's key inside the document (its record id, or its position) and its
// text, laid out as an RFC 9562 version 8 UUID so that stores requiring
// UUID point ids accept it as is. Identical content re-ingested gets the
// same id, making Upsert idempotent; changed content gets a new id.
func chunkID(tenant, docID, key, text string) string {
	h := sha256.New()
	for _, s := range []string{tenant, docID, key, text} {
		h.Write([]byte(strconv.Itoa(len(s))))
		h.Write([]byte{':'})
		h.Write([]byte(s))
	}
	var u [16]byte
	copy(u[:], h.Sum(nil))
	u[6] = u[6]&0x0f | 0x80 // version 8
	u[8] = u[8]&0x3f | 0x80 // RFC 9562 variant
	x := hex.EncodeToString(u[:])
	return x[:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:]
}

// Chunks splits a loaded document into retrieval chunks, in order, with
// stable ids, the tenant and source of o, Meta["path"] set to the
// document's path, and no vectors. Each chunk's text starts with its
// heading path ("Handbook > Leave > Sick leave") on a line of its own.
func Chunks(doc Document, o Options) []retrieval.Chunk {
	var out []retrieval.Chunk
	for _, b := range doc.Blocks {
		prefix := strings.Join(b.Headings, " > ")
		sp := Splitter{ChunkSize: o.ChunkSize, Overlap: o.Overlap}
		size, _ := sp.sizes()
		if prefix != "" {
			// Leave room for the prefix, but never less than half the size.
			sp.ChunkSize = max(size-utf8.RuneCountInString(prefix)-1, size/2)
		}
		pieces := []string{strings.TrimSpace(b.Text)}
		if b.ContentType == retrieval.ContentText || utf8.RuneCountInString(b.Text) > sp.ChunkSize {
			pieces = sp.Split(b.Text)
		}
		source := cmp.Or(o.Source, b.Source, doc.Source)
		title := cmp.Or(b.Title, prefix, doc.Title)
		for i, p := range pieces {
			if p == "" {
				continue
			}
			text := p
			if prefix != "" {
				text = prefix + "\n" + p
			}
			key := "pos:" + strconv.Itoa(len(out))
			if b.RecordID != "" {
				key = "rec:" + b.RecordID + "#" + strconv.Itoa(i)
			}
			meta := maps.Clone(b.Meta)
			if meta == nil {
				meta = map[string]string{}
			}
			meta["path"] = doc.Path
			out = append(out, retrieval.Chunk{
				ID:          chunkID(o.Tenant, doc.ID, key, text),
				DocID:       doc.ID,
				Tenant:      o.Tenant,
				Source:      source,
				Title:       title,
				ContentType: cmp.Or(b.ContentType, retrieval.ContentText),
				Position:    len(out),
				Text:        text,
				Meta:        meta,
			})
		}
	}
	return out
}

// file is one file to ingest.
type file struct {
	fsys    fs.FS
	rel     string // path inside fsys, slash-separated
	display string // path reported to the caller
	rootSrc string // default source for files directly under the root
}

// LoadFS loads and splits every supported file of fsys, without embedding
// or storing. Hidden files and folders (".name") are skipped, and so are
// files without a loader (counted in Report.Skipped). A file that fails is
// recorded in Report.Errors and the others are still loaded. The error is
// non-nil only when ctx ends, wrapping ctx.Err(). A filesystem without
// content gives nil chunks.
func LoadFS(ctx context.Context, fsys fs.FS, o Options) ([]retrieval.Chunk, Report, error) {
	files, rep := walkFS(fsys, ".", "", "")
	var all []retrieval.Chunk
	err := run(ctx, files, &rep, o, func(_ context.Context, _ Document, cs []retrieval.Chunk) error {
		all = append(all, cs...)
		return nil
	})
	return all, rep, err
}

// IngestFS ingests every supported file of fsys into store; see Ingest.
// This is how the embedded sample knowledge base (samplekb.FS) is loaded.
func IngestFS(ctx context.Context, store retrieval.Store, fsys fs.FS, o Options) (Report, error) {
	if err := check(store, o); err != nil {
		return Report{}, err
	}
	files, rep := walkFS(fsys, ".", "", "")
	err := run(ctx, files, &rep, o, storeFunc(store, o))
	return rep, err
}

// Ingest loads, splits, embeds and stores the given files and folders
// (walked recursively). For each file it embeds all chunks in batches, then
// removes the document's previous chunks with DeleteDocument and upserts
// the new ones, so re-ingesting a changed file leaves no stale chunk and
// re-ingesting an unchanged one changes nothing. Ids are relative to each
// argument: a folder argument is the root of its files, and a file
// argument's root is its own folder.
//
// A file that fails (unreadable, malformed, rejected by the embedder or the
// store) is recorded in Report.Errors and the rest continue. The returned
// error is reserved for the run as a whole: a nil store, an embedder whose
// dimension differs from the store's, or ctx ending (the error then wraps
// ctx.Err(), so a timeout matches context.DeadlineExceeded).
func Ingest(ctx context.Context, store retrieval.Store, paths []string, o Options) (Report, error) {
	if err := check(store, o); err != nil {
		return Report{}, err
	}
	var files []file
	var rep Report
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			rep.Errors = append(rep.Errors, FileError{Path: p, Err: err})
			continue
		}
		if st.IsDir() {
			found, r := walkFS(os.DirFS(p), ".", p, rootName(p))
			files = append(files, found...)
			rep.Skipped += r.Skipped
			rep.Errors = append(rep.Errors, r.Errors...)
			continue
		}
		dir := filepath.Dir(p)
		files = append(files, file{fsys: os.DirFS(dir), rel: filepath.Base(p), display: p, rootSrc: rootName(dir)})
	}
	err := run(ctx, files, &rep, o, storeFunc(store, o))
	return rep, err
}

// rootName is the base name of a folder, resolving "." and "..".
func rootName(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	b := filepath.Base(dir)
	if b == string(filepath.Separator) || b == "." {
		return ""
	}
	return b
}

// check validates the run-wide configuration.
func check(store retrieval.Store, o Options) error {
	if store == nil {
		return fmt.Errorf("ingest: nil store: %w", retrieval.ErrInvalid)
	}
	if o.Embedder != nil {
		if sd, ed := store.Dim(), o.Embedder.Dim(); sd > 0 && ed > 0 && sd != ed {
			return fmt.Errorf("ingest: embedder dimension %d, store dimension %d: %w", ed, sd, retrieval.ErrDimension)
		}
	}
	return nil
}

// walkFS lists the supported files under dir in lexical order. display is
// the prefix of reported paths; rootSrc the source of files directly in
// the root.
func walkFS(fsys fs.FS, dir, display, rootSrc string) ([]file, Report) {
	var files []file
	var rep Report
	err := fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			rep.Errors = append(rep.Errors, FileError{Path: joinDisplay(display, p), Err: err})
			return nil
		}
		if p != dir && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() || !d.Type().IsRegular() && d.Type()&fs.ModeSymlink == 0 {
			return nil
		}
		if !Supported(p) {
			rep.Skipped++
			return nil
		}
		files = append(files, file{fsys: fsys, rel: p, display: joinDisplay(display, p), rootSrc: rootSrc})
		return nil
	})
	if err != nil { // only a root that cannot be read at all
		rep.Errors = append(rep.Errors, FileError{Path: joinDisplay(display, dir), Err: err})
	}
	return files, rep
}

func joinDisplay(prefix, rel string) string {
	if prefix == "" {
		return rel
	}
	return filepath.Join(prefix, filepath.FromSlash(rel))
}

// sink receives the chunks of one loaded document.
type sink func(ctx context.Context, doc Document, chunks []retrieval.Chunk) error

// run loads every file and hands its chunks to sink, recording per-file
// errors and reporting progress. It stops only when ctx ends.
func run(ctx context.Context, files []file, rep *Report, o Options, sink sink) error {
	// Paths that failed before the run (a missing argument) count as done.
	total := len(files) + len(rep.Errors)
	progress := func(path string, err error) {
		if o.Progress != nil {
			o.Progress(Progress{FilesDone: rep.Files + len(rep.Errors), FilesTotal: total,
				Chunks: rep.Chunks, Path: path, Err: err})
		}
	}
	progress("", nil)
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("ingest: %w", err)
		}
		n, err := ingestFile(ctx, f, o, sink)
		if err != nil {
			if ctxErr := ctx.Err(); ctxErr != nil && isContextErr(err) {
				return fmt.Errorf("ingest: %s: %w", f.display, err)
			}
			rep.Errors = append(rep.Errors, FileError{Path: f.display, Err: err})
		} else {
			rep.Files++
			rep.Chunks += n
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
func ingestFile(ctx context.Context, f file, o Options, sink sink) (n int, err error) {
	info, err := fs.Stat(f.fsys, f.rel)
	if err != nil {
		return 0, err
	}
	if limit := cmp.Or(o.MaxFileSize, DefaultMaxFileSize); info.Size() > limit {
		return 0, fmt.Errorf("%w: %d bytes, limit %d", ErrTooLarge, info.Size(), limit)
	}
	data, err := fs.ReadFile(f.fsys, f.rel)
	if err != nil {
		return 0, err
	}
	var chunks []retrieval.Chunk
	var doc Document
	func() {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("%w: loader panic: %v", ErrMalformed, r)
			}
		}()
		doc, err = Parse(f.rel, data, o)
		if err != nil {
			return
		}
		doc.Source = f.rootSrc
		if top, _, ok := strings.Cut(doc.Path, "/"); ok {
			doc.Source = top
		}
		chunks = Chunks(doc, o)
	}()
	if err != nil {
		return 0, err
	}
	if err := sink(ctx, doc, chunks); err != nil {
		return 0, err
	}
	return len(chunks), nil
}

// storeFunc returns the sink of Ingest: embed every chunk of the document,
// then replace the document's chunks in the store. Embedding comes first so
// that a failing embedder leaves the previously stored version intact.
func storeFunc(store retrieval.Store, o Options) sink {
	batch := cmp.Or(o.BatchSize, DefaultBatchSize)
	if batch < 0 {
		batch = DefaultBatchSize
	}
	return func(ctx context.Context, doc Document, chunks []retrieval.Chunk) error {
		if o.Embedder != nil {
			for i := 0; i < len(chunks); i += batch {
				part := chunks[i:min(i+batch, len(chunks))]
				if err := embed(ctx, o.Embedder, part); err != nil {
					return err
				}
			}
		}
		err := store.DeleteDocument(ctx, retrieval.Scope{Tenant: o.Tenant}, doc.ID)
		if err != nil && !errors.Is(err, retrieval.ErrNotFound) {
			return fmt.Errorf("delete previous chunks: %w", err)
		}
		for i := 0; i < len(chunks); i += batch {
			if err := store.Upsert(ctx, chunks[i:min(i+batch, len(chunks))]); err != nil {
				return fmt.Errorf("upsert: %w", err)
			}
		}
		return nil
	}
}

// embed sets the vectors of chunks with one Embed call.
func embed(ctx context.Context, e retrieval.Embedder, chunks []retrieval.Chunk) error {
	texts := make([]string, len(chunks))
	for i := range chunks {
		texts[i] = chunks[i].Text
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
