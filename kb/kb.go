// Package kb opens knowledge bases: the bundled sample handbook (built in
// memory at start-up, the default of the CLI) and stores named by a
// location string ("embedded:DIR", "qdrant://host:6334/collection",
// "memory:"), whose scheme selects a registered opener (Register).
//
// A knowledge base has two collections: documents, and FAQ entries
// (question plus standard answer). Both are filled by package ingest, the
// sample as much as a store on disk, so the same files give the same
// chunks, ids and vectors wherever they are loaded.
package kb

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/adaptrag/adaptrag/ingest"
	"github.com/adaptrag/adaptrag/records"
	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/adaptrag/adaptrag/retrieval/memstore"
	"github.com/adaptrag/adaptrag/retrieval/qdrant"
	"github.com/adaptrag/adaptrag/samplekb"
	"github.com/adaptrag/adaptrag/vocab"
)

// ErrLocation reports a store location that cannot be parsed.
var ErrLocation = errors.New("kb: bad store location")

// KB is an opened knowledge base. Close releases it.
type KB struct {
	// Docs and FAQ are the two collections as answering questions needs
	// them; FAQ is nil when the knowledge base has no FAQ collection.
	Docs, FAQ retrieval.Searcher
	// Location is the location it was opened from ("" for one built in
	// memory).
	Location string
	// Records is the records database of an embedded knowledge base
	// (DIR/records.db: every ingested table, see package records); nil
	// when it has none (nothing with tables was ingested, or a Qdrant
	// store).
	Records *records.DB
	// Vocab is the knowledge base's vocabulary (names and their kinds,
	// see package vocab) for the default tenant: built from the files of
	// one built in memory, read from the store's folder for an embedded
	// store (empty when it has none), empty for Qdrant.
	Vocab *vocab.Vocabulary

	docs, faq retrieval.Store
	dir       string // the embedded store's folder, "" otherwise
}

// New returns a knowledge base of two stores, for an Opener: docs is
// required, faq may be nil (no FAQ collection). location is what Open was
// given. Close closes both.
func New(location string, docs, faq retrieval.Store) *KB { return newKB(location, docs, faq) }

// newKB wraps two stores; faq may be nil.
func newKB(location string, docs, faq retrieval.Store) *KB {
	k := &KB{Location: location, Docs: docs, docs: docs, faq: faq, Vocab: vocab.New(nil)}
	if faq != nil {
		k.FAQ = faq
	}
	return k
}

// Target returns the collections as ingestion writes to them. The writes
// fail (memstore.ErrReadOnly) on a knowledge base opened for reading.
func (k *KB) Target() ingest.Target {
	t := ingest.Target{Docs: k.docs, FAQ: k.faq}
	if k.Records != nil {
		t.Tables = k.Records
	}
	return t
}

// Close closes both collections and the records database.
func (k *KB) Close() error {
	var errs []error
	if k.Records != nil {
		errs = append(errs, k.Records.Close())
	}
	for _, s := range []retrieval.Store{k.docs, k.faq} {
		if s != nil {
			errs = append(errs, s.Close())
		}
	}
	return errors.Join(errs...)
}

// List returns the documents of the knowledge base within scope and the
// FAQ files (each DocInfo.Chunks being its number of entries), ordered by
// origin. It needs stores that implement retrieval.Lister; others give an
// error matching errors.ErrUnsupported.
func (k *KB) List(ctx context.Context, scope retrieval.Scope) (docs, faq []retrieval.DocInfo, err error) {
	list := func(s retrieval.Store, what string) ([]retrieval.DocInfo, error) {
		if s == nil {
			return nil, nil
		}
		l, ok := s.(retrieval.Lister)
		if !ok {
			return nil, fmt.Errorf("kb: the %s collection of %s cannot list its documents: %w", what, cmp.Or(k.Location, "this knowledge base"), errors.ErrUnsupported)
		}
		infos, err := l.Documents(ctx, scope)
		if err != nil {
			return nil, fmt.Errorf("kb: list %s: %w", what, err)
		}
		return infos, nil
	}
	if docs, err = list(k.docs, "document"); err != nil {
		return nil, nil, err
	}
	if faq, err = list(k.faq, "FAQ"); err != nil {
		return nil, nil, err
	}
	return docs, faq, nil
}

// Sample builds the bundled sample handbook in memory, embedding it with
// emb. It takes a few milliseconds with the offline embedder.
func Sample(ctx context.Context, emb retrieval.Embedder) (*KB, error) {
	return FromFS(ctx, samplekb.FS(), emb)
}

// FromFS builds an in-memory knowledge base from the files of fsys with
// ingest.IngestFS: documents, the entries of FAQ files (recognised by
// content) as the FAQ collection, which is nil when there are none, and
// the files' tables as an in-memory records database (Records, nil when
// there are none). Any
// file that fails to load fails the build.
func FromFS(ctx context.Context, files fs.FS, emb retrieval.Embedder) (*KB, error) {
	if emb == nil {
		return nil, fmt.Errorf("kb: nil embedder: %w", retrieval.ErrInvalid)
	}
	docs, err := memstore.Open(ctx, memstore.Options{})
	if err != nil {
		return nil, err
	}
	faq, err := memstore.Open(ctx, memstore.Options{})
	if err != nil {
		docs.Close()
		return nil, err
	}
	k := newKB("", docs, faq)
	if k.Records, err = records.OpenKB(ctx, "", records.Config{}); err != nil {
		k.Close()
		return nil, fmt.Errorf("kb: %w", err)
	}
	rep, err := ingest.IngestFS(ctx, k.Target(), files, ingest.Options{Embedder: emb, BatchSize: 64})
	if err == nil {
		err = rep.Err()
	}
	if err != nil {
		k.Close()
		return nil, fmt.Errorf("kb: load: %w", err)
	}
	if len(k.Records.Tables()) == 0 {
		k.Records.Close()
		k.Records = nil
	}
	if rep.FAQEntries == 0 {
		faq.Close()
		rec := k.Records
		k = newKB("", docs, nil)
		k.Records = rec
	}
	if k.Vocab, err = vocab.FromFS(ctx, files); err != nil {
		k.Close()
		return nil, fmt.Errorf("kb: %w", err)
	}
	return k, nil
}

// DefaultDir is where an embedded store lives when the location gives no
// directory: the user's data directory.
func DefaultDir() string {
	base := os.Getenv("XDG_DATA_HOME")
	if base == "" {
		if home, err := os.UserHomeDir(); err == nil {
			base = filepath.Join(home, ".local", "share")
		} else {
			base = os.TempDir()
		}
	}
	return filepath.Join(base, "adaptrag", "default")
}

// Options configures Open. The zero value opens an existing knowledge
// base for reading.
type Options struct {
	// Create opens the knowledge base for writing (ingestion), creating
	// what is missing. Without it the knowledge base must exist (an error
	// matching retrieval.ErrNotFound otherwise) and is opened read-only.
	Create bool
	// Dim is the embedder's dimension. Collections are created with it,
	// and an existing document collection of another dimension is an
	// error matching retrieval.ErrDimension. 0 takes the store's.
	Dim int
}

// Open opens the knowledge base a location names, through the opener
// registered for its scheme (the part before the first colon; see
// Register). The built-in schemes are:
//
//	embedded:DIR                    the embedded store in DIR (DIR/docs, DIR/faq)
//	embedded:                       the same in DefaultDir
//	qdrant://host:6334/collection   Qdrant; the FAQ collection is collection_faq (http:// and https:// too)
//	memory:                         a new, empty knowledge base in memory, gone when closed
//
// A knowledge base opened for reading may lack its FAQ collection (FAQ is
// then nil); one opened with Options.Create has both. An unknown scheme is
// an error matching ErrLocation.
func Open(ctx context.Context, location string, o Options) (*KB, error) {
	scheme, _, ok := strings.Cut(location, ":")
	var open Opener
	if ok {
		open = lookup(scheme)
	}
	if open == nil {
		return nil, fmt.Errorf("%w: %q (want %s)", ErrLocation, location, strings.Join(schemes(), ", "))
	}
	k, err := open(ctx, location, o)
	if err != nil {
		return nil, err
	}
	if k == nil || k.docs == nil {
		return nil, fmt.Errorf("kb: the opener of %q returned no document collection: %w", scheme, retrieval.ErrInvalid)
	}
	if d := k.docs.Dim(); o.Dim > 0 && d > 0 && d != o.Dim {
		k.Close()
		return nil, fmt.Errorf("kb: %s holds vectors of dimension %d, the embedder makes %d (use the embedder it was ingested with, or re-ingest): %w",
			location, d, o.Dim, retrieval.ErrDimension)
	}
	return k, nil
}

// hint is the remedy for a knowledge base that does not exist.
func hint(location string) string {
	return fmt.Sprintf("create it with: adaptrag ingest --store %s PATH...", location)
}

func openEmbedded(ctx context.Context, location string, o Options) (*KB, error) {
	dir := strings.TrimPrefix(location, "embedded:")
	if dir == "" {
		dir = DefaultDir()
	}
	open := func(name string) (*memstore.Store, error) {
		return memstore.Open(ctx, memstore.Options{Dir: filepath.Join(dir, name), ReadOnly: !o.Create})
	}
	docs, err := open("docs")
	if errors.Is(err, retrieval.ErrNotFound) {
		return nil, fmt.Errorf("kb: no knowledge base at %s (%s): %w", dir, hint(location), err)
	}
	if err != nil {
		return nil, fmt.Errorf("kb: %w", err)
	}
	faq, err := open("faq")
	var k *KB
	switch {
	case errors.Is(err, retrieval.ErrNotFound) && !o.Create:
		k = newKB(location, docs, nil) // documents only
	case err != nil:
		docs.Close()
		return nil, fmt.Errorf("kb: %w", err)
	default:
		k = newKB(location, docs, faq)
	}
	if o.Create || records.Exists(dir) {
		if k.Records, err = records.OpenKB(ctx, dir, records.Config{Create: o.Create}); err != nil {
			k.Close()
			return nil, fmt.Errorf("kb: %w", err)
		}
	}
	k.dir = dir
	if k.Vocab, err = vocab.Load(vocab.File(dir, "")); err != nil {
		k.Close()
		return nil, fmt.Errorf("kb: %w", err)
	}
	return k, nil
}

// VocabOf returns the vocabulary of a tenant: for an embedded store the
// one saved in its folder (empty when none was), else Vocab for the
// default tenant and an empty one for others.
func (k *KB) VocabOf(tenant string) (*vocab.Vocabulary, error) {
	if k.dir == "" {
		if tenant == "" {
			return k.Vocab, nil
		}
		return vocab.New(nil), nil
	}
	return vocab.Load(vocab.File(k.dir, tenant))
}

// AddVocab merges v into the tenant's vocabulary and, for an embedded
// store, saves it in the store's folder (ingestion calls it with the
// vocabulary of the files it ingested). A name already known keeps its
// kind.
func (k *KB) AddVocab(tenant string, v *vocab.Vocabulary) error {
	old, err := k.VocabOf(tenant)
	if err != nil {
		return err
	}
	merged := vocab.Merge(v, old)
	if k.dir != "" {
		if err := merged.Save(vocab.File(k.dir, tenant)); err != nil {
			return fmt.Errorf("kb: %w", err)
		}
	}
	if tenant == "" {
		k.Vocab = merged
	}
	return nil
}

func openQdrant(ctx context.Context, location string, o Options) (*KB, error) {
	if _, rest, _ := strings.Cut(location, ":"); !strings.HasPrefix(rest, "//") {
		return nil, fmt.Errorf("%w: %q (want qdrant://host:6334/collection)", ErrLocation, location)
	}
	cfg, err := qdrant.ParseURL(location)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrLocation, err)
	}
	// Reading never creates a collection: with Dim 0 a missing one is an
	// error, and an existing one gives its size.
	switch {
	case !o.Create:
		cfg.Dim = 0
	case o.Dim > 0:
		cfg.Dim = o.Dim
	}
	docs, err := qdrant.Open(ctx, cfg)
	if err != nil {
		if !o.Create && missingCollection(err) {
			return nil, fmt.Errorf("kb: no collection %q at %s:%d (%s): %w: %w", cfg.Collection, cfg.Host, cfg.Port, hint(location), retrieval.ErrNotFound, err)
		}
		return nil, fmt.Errorf("kb: %w", err)
	}
	cfg.Collection += "_faq"
	if cfg.Dim == 0 && o.Create {
		cfg.Dim = docs.Dim()
	}
	faq, err := qdrant.Open(ctx, cfg)
	if err != nil {
		if !o.Create && missingCollection(err) {
			return newKB(location, docs, nil), nil
		}
		docs.Close()
		return nil, fmt.Errorf("kb: %w", err)
	}
	return newKB(location, docs, faq), nil
}

// missingCollection reports the error qdrant.Open gives, without a
// dimension, for a collection that does not exist.
func missingCollection(err error) bool {
	return errors.Is(err, retrieval.ErrInvalid) && strings.Contains(err.Error(), "does not exist")
}
