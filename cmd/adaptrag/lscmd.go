package main

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/adaptrag/adaptrag/kb"
	"github.com/adaptrag/adaptrag/retrieval"
)

// lsDoc is one document of ls --json.
type lsDoc struct {
	Origin      string    `json:"origin"`
	DocID       string    `json:"doc_id"`
	Source      string    `json:"source"`
	Title       string    `json:"title"`
	Chunks      int       `json:"chunks"`
	ContentHash string    `json:"content_hash"`
	IngestedAt  time.Time `json:"ingested_at,omitzero"`
}

// lsOutput is the --json shape of ls.
type lsOutput struct {
	Documents  []lsDoc `json:"documents"`
	FAQEntries int     `json:"faq_entries"`
}

// runLs lists the documents of a knowledge base, with the FAQ entries
// counted apart. The knowledge base must exist; it is opened read-only.
func runLs(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "ls")
	def := e.getenv("ADAPTRAG_STORE")
	if def == "" {
		def = "embedded:"
	}
	store := fs.String("store", def, "embedded:DIR or qdrant://host:6334/collection (default: $ADAPTRAG_STORE, else embedded: under the user's data dir)")
	tenant := fs.String("tenant", "", "tenant whose documents to list")
	asJSON := fs.Bool("json", false, "print one JSON object")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return fmt.Errorf("%w: ls takes no arguments, got %q", errUsage, pos)
	}
	k, err := kb.Open(ctx, *store, kb.Options{})
	if err != nil {
		return err
	}
	defer k.Close()
	docs, faq, err := k.List(ctx, retrieval.Scope{Tenant: *tenant})
	if err != nil {
		return err
	}
	out := lsOutput{Documents: make([]lsDoc, 0, len(docs))}
	for _, d := range docs {
		out.Documents = append(out.Documents, lsDoc{Origin: d.Origin, DocID: d.DocID, Source: d.Source, Title: d.Title,
			Chunks: d.Chunks, ContentHash: d.Hash, IngestedAt: d.IngestedAt})
	}
	for _, f := range faq {
		out.FAQEntries += f.Chunks
	}
	if *asJSON {
		return writeJSON(e.stdout, out)
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CHUNKS\tINGESTED\tHASH\tSOURCE\tORIGIN")
	chunks := 0
	for _, d := range out.Documents {
		chunks += d.Chunks
		at := "-"
		if !d.IngestedAt.IsZero() {
			at = d.IngestedAt.UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", d.Chunks, at, shortHash(d.ContentHash), clean(cmp.Or(d.Source, "-")), clean(cmp.Or(d.Origin, d.DocID)))
	}
	tw.Flush()
	fmt.Fprintf(e.stdout, "%d %s, %d chunks; %d FAQ %s", len(docs), plural(len(docs), "document", "documents"),
		chunks, out.FAQEntries, plural(out.FAQEntries, "entry", "entries"))
	var from []string
	for _, f := range faq {
		from = append(from, clean(cmp.Or(f.Origin, f.DocID)))
	}
	if len(from) > 0 {
		fmt.Fprintf(e.stdout, " from %s", strings.Join(from, ", "))
	}
	fmt.Fprintln(e.stdout)
	return nil
}

// shortHash shortens "sha256:<64 hex>" to its first 12 hex digits.
func shortHash(h string) string {
	if h == "" {
		return "-"
	}
	if alg, hex, ok := strings.Cut(h, ":"); ok && len(hex) > 12 {
		return alg + ":" + hex[:12]
	}
	return h
}
