package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/adaptrag/adaptrag/ingest"
	"github.com/adaptrag/adaptrag/kb"
	"github.com/adaptrag/adaptrag/retrieval/embed"
	"github.com/adaptrag/adaptrag/samplekb"
)

// runIngest loads files into a knowledge base. A file named faq.jsonl goes
// to the FAQ collection; everything else to documents. Files that fail are
// reported and the rest continue; the exit status is 1 if any failed.
func runIngest(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "ingest")
	def := e.getenv("ADAPTRAG_STORE")
	if def == "" {
		def = "embedded:"
	}
	store := fs.String("store", def, "embedded:DIR or qdrant://host:6334/collection (default: $ADAPTRAG_STORE, else embedded: under the user's data dir)")
	tenant := fs.String("tenant", "", "tenant that owns the ingested chunks")
	source := fs.String("source", "", "source of every chunk (default: the top folder name)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return fmt.Errorf("%w: want at least one PATH", errUsage)
	}
	emb, err := embed.FromConfig(embed.ConfigFromEnv())
	if err != nil {
		return err
	}
	k, err := kb.Open(ctx, *store, emb.Dim())
	if err != nil {
		return err
	}
	defer k.Close()
	var docs []string
	var faqs int
	for _, p := range pos {
		if filepath.Base(p) != samplekb.FAQFile {
			docs = append(docs, p)
			continue
		}
		entries, err := samplekb.ReadFAQ(os.DirFS(filepath.Dir(p)), filepath.Base(p))
		if err == nil {
			err = k.IngestFAQ(ctx, emb, entries, *tenant)
		}
		if err != nil {
			fmt.Fprintf(e.stderr, "  %s: %v\n", p, err)
			return err
		}
		faqs += len(entries)
	}
	rep, err := ingest.Ingest(ctx, k.Docs, docs, ingest.Options{
		Tenant: *tenant, Source: *source, Embedder: emb, Progress: ingest.NewProgressBar(os.Stderr),
	})
	fmt.Fprintf(e.stdout, "ingested %d files, %d chunks, %d FAQ entries into %s\n", rep.Files, rep.Chunks, faqs, *store)
	for _, fe := range rep.Errors {
		fmt.Fprintf(e.stderr, "  failed: %s: %v\n", fe.Path, fe.Err)
	}
	if err != nil {
		return err
	}
	if len(rep.Errors) > 0 {
		return errors.New("some files failed (see above)")
	}
	return nil
}
