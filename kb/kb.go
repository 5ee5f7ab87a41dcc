// Package kb opens knowledge bases: the bundled sample handbook (built in
// memory at start-up, the default of the CLI) and stores named by a
// location string ("embedded:DIR" or "qdrant://host:6334/collection").
//
// A knowledge base has two collections, as seed 000 describes: documents
// and FAQ entries (question plus standard answer). An FAQ entry is indexed
// and embedded by its question only, so that a user's question is compared
// with questions; its answer travels in Meta["answer"].
package kb

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/adaptrag/adaptrag/ingest"
	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/adaptrag/adaptrag/retrieval/embed"
	"github.com/adaptrag/adaptrag/retrieval/memstore"
	"github.com/adaptrag/adaptrag/retrieval/qdrant"
	"github.com/adaptrag/adaptrag/samplekb"
)

// ErrLocation reports a store location that cannot be parsed.
var ErrLocation = errors.New("kb: bad store location")

// KB is an opened knowledge base.
type KB struct {
	Docs retrieval.Store
	FAQ  retrieval.Store // nil when the knowledge base has no FAQ collection
	// Chunks and FAQs count what was loaded (sample KB only).
	Chunks, FAQs int
}

// Close closes both collections.
func (k *KB) Close() error {
	var errs []error
	for _, s := range []retrieval.Store{k.Docs, k.FAQ} {
		if s != nil {
			errs = append(errs, s.Close())
		}
	}
	return errors.Join(errs...)
}

// Sample builds the bundled sample handbook in memory, embedding it with
// emb. It takes a few milliseconds with the offline embedder.
func Sample(ctx context.Context, emb retrieval.Embedder) (*KB, error) {
	return FromFS(ctx, samplekb.FS(), samplekb.FAQFile, emb)
}

// FromFS builds an in-memory knowledge base from the files of fsys; the
// JSON-lines file faqFile (if present) becomes the FAQ collection.
func FromFS(ctx context.Context, fsys fs.FS, faqFile string, emb retrieval.Embedder) (*KB, error) {
	chunks, rep, err := ingest.LoadFS(ctx, fsys, ingest.Options{})
	if err != nil {
		return nil, fmt.Errorf("kb: load: %w", err)
	}
	if err := rep.Err(); err != nil {
		return nil, fmt.Errorf("kb: load: %w", err)
	}
	var docs []retrieval.Chunk
	for _, c := range chunks {
		if c.ContentType != retrieval.ContentFAQ {
			docs = append(docs, c)
		}
	}
	entries, err := readFAQ(fsys, faqFile)
	if err != nil {
		return nil, err
	}
	k := &KB{Chunks: len(docs), FAQs: len(entries)}
	if k.Docs, err = memStore(ctx, emb, docs); err != nil {
		return nil, err
	}
	if len(entries) > 0 {
		if k.FAQ, err = memStore(ctx, emb, entries); err != nil {
			k.Docs.Close()
			return nil, err
		}
	}
	return k, nil
}

func readFAQ(fsys fs.FS, name string) ([]retrieval.Chunk, error) {
	if name == "" {
		return nil, nil
	}
	if _, err := fs.Stat(fsys, name); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	entries, err := samplekb.ReadFAQ(fsys, name)
	if err != nil {
		return nil, fmt.Errorf("kb: faq: %w", err)
	}
	return FAQChunks(entries, ""), nil
}

// FAQChunks turns FAQ entries into chunks of the FAQ collection for tenant.
func FAQChunks(entries []samplekb.FAQEntry, tenant string) []retrieval.Chunk {
	out := make([]retrieval.Chunk, 0, len(entries))
	for i, e := range entries {
		out = append(out, retrieval.Chunk{
			ID: "faq:" + e.ID, DocID: "faq", Tenant: tenant, Source: e.Source, Title: e.Question,
			ContentType: retrieval.ContentFAQ, Position: i, Text: e.Question,
			Meta: map[string]string{"question": e.Question, "answer": e.Answer, "lang": e.Lang},
		})
	}
	return out
}

func memStore(ctx context.Context, emb retrieval.Embedder, chunks []retrieval.Chunk) (retrieval.Store, error) {
	st, err := memstore.Open(ctx, memstore.Options{})
	if err != nil {
		return nil, err
	}
	if err := embedInto(ctx, st, emb, chunks); err != nil {
		st.Close()
		return nil, err
	}
	return st, nil
}

func embedInto(ctx context.Context, st retrieval.Store, emb retrieval.Embedder, chunks []retrieval.Chunk) error {
	texts := make([]string, len(chunks))
	for i, c := range chunks {
		texts[i] = c.Title + "\n" + c.Text
		if c.ContentType == retrieval.ContentFAQ {
			texts[i] = c.Text
		}
	}
	vecs, err := embed.EmbedAll(ctx, emb, texts, 64, nil)
	if err != nil {
		return fmt.Errorf("kb: embed: %w", err)
	}
	for i := range chunks {
		chunks[i].Vector = vecs[i]
	}
	if err := st.Upsert(ctx, chunks); err != nil {
		return fmt.Errorf("kb: upsert: %w", err)
	}
	return nil
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

// Open opens the store a location names:
//
//	embedded:DIR                    the embedded store in DIR (DIR/docs, DIR/faq)
//	embedded:                       the same in DefaultDir
//	qdrant://host:6334/collection   Qdrant; the FAQ collection is collection_faq
//
// dim is the embedder's dimension (Qdrant creates collections with it).
func Open(ctx context.Context, location string, dim int) (*KB, error) {
	switch {
	case strings.HasPrefix(location, "embedded:"):
		dir := strings.TrimPrefix(location, "embedded:")
		if dir == "" {
			dir = DefaultDir()
		}
		docs, err := memstore.Open(ctx, memstore.Options{Dir: filepath.Join(dir, "docs")})
		if err != nil {
			return nil, err
		}
		faq, err := memstore.Open(ctx, memstore.Options{Dir: filepath.Join(dir, "faq")})
		if err != nil {
			docs.Close()
			return nil, err
		}
		return &KB{Docs: docs, FAQ: faq}, nil
	case strings.HasPrefix(location, "qdrant://"), strings.HasPrefix(location, "http://"), strings.HasPrefix(location, "https://"):
		cfg, err := qdrant.ParseURL(location)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrLocation, err)
		}
		cfg.Dim = dim
		docs, err := qdrant.Open(ctx, cfg)
		if err != nil {
			return nil, err
		}
		cfg.Collection += "_faq"
		faq, err := qdrant.Open(ctx, cfg)
		if err != nil {
			docs.Close()
			return nil, err
		}
		return &KB{Docs: docs, FAQ: faq}, nil
	}
	return nil, fmt.Errorf("%w: %q (want embedded:DIR or qdrant://host:6334/collection)", ErrLocation, location)
}

// IngestFAQ embeds FAQ entries into k.FAQ.
func (k *KB) IngestFAQ(ctx context.Context, emb retrieval.Embedder, entries []samplekb.FAQEntry, tenant string) error {
	if k.FAQ == nil {
		return fmt.Errorf("kb: no FAQ collection: %w", retrieval.ErrInvalid)
	}
	return embedInto(ctx, k.FAQ, emb, FAQChunks(entries, tenant))
}
