package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/adaptrag/adaptrag/ingest"
	"github.com/adaptrag/adaptrag/kb"
	"github.com/adaptrag/adaptrag/retrieval/embed"
	"github.com/adaptrag/adaptrag/vocab"
)

// skippedShown is how many skipped files ingest names without --verbose.
const skippedShown = 5

// runIngest loads files into a knowledge base, creating it if needed.
// Documents go to its document collection; FAQ files (recognised by
// content, or named with --faq) to its FAQ collection. Files that fail are
// reported once each and the rest continue; the exit status is 1 if any
// failed or if nothing could be ingested.
func runIngest(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "ingest")
	def := e.getenv("ADAPTRAG_STORE")
	if def == "" {
		def = "embedded:"
	}
	store := fs.String("store", def, "embedded:DIR or qdrant://host:6334/collection (default: $ADAPTRAG_STORE, else embedded: under the user's data dir)")
	tenant := fs.String("tenant", "", "tenant that owns the ingested chunks")
	source := fs.String("source", "", "source of every chunk (default: the top folder name)")
	var faqs multi
	fs.Var(&faqs, "faq", "read `FILE` (.jsonl or .csv) as an FAQ file whatever its fields look like (repeatable)")
	prune := fs.Bool("prune", false, "delete documents whose file under an ingested folder no longer exists")
	follow := fs.Bool("follow-symlinks", false, "follow links to files outside the ingested folders")
	verbose := fs.Bool("verbose", false, "name every skipped file")
	asJSON := fs.Bool("json", false, "print the report as one JSON object (files, chunks, skipped, errors, warnings, pruned)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 && len(faqs) == 0 {
		return fmt.Errorf("%w: want at least one PATH (or --faq FILE)", errUsage)
	}
	if !*prune {
		// Not one PATH to read (a mistyped folder): fail before a
		// knowledge base is created. (With --prune a folder that is gone
		// is meaningful: its documents are deleted.)
		var rep ingest.Report
		for _, p := range append(slices.Clone(pos), faqs...) {
			if _, err := os.Stat(p); err != nil {
				rep.Errors = append(rep.Errors, ingest.FileError{Path: p, Err: err})
			}
		}
		if len(rep.Errors) == len(pos)+len(faqs) {
			printReport(e, rep, *store, *verbose, *asJSON)
			return fmt.Errorf("nothing ingested: %s", whyNothing(rep))
		}
	}
	emb, err := embed.FromConfig(embed.ConfigFromEnv())
	if err != nil {
		return err
	}
	k, err := kb.Open(ctx, *store, kb.Options{Create: true, Dim: emb.Dim()})
	if err != nil {
		return err
	}
	defer k.Close()
	// The knowledge base's names and their kinds come from the documents
	// as ingestion read them (their tables and headings; the text is not
	// kept), so a refused file adds nothing and no file is read twice.
	var loaded []ingest.Document
	rep, err := ingest.Ingest(ctx, k.Target(), pos, ingest.Options{
		Tenant: *tenant, Source: *source, Embedder: emb, Progress: ingest.NewProgressBar(os.Stderr),
		FAQFiles: faqs, Prune: *prune, FollowSymlinks: *follow,
		Loaded: func(d ingest.Document) { loaded = append(loaded, outline(d)) },
	})
	printReport(e, rep, *store, *verbose, *asJSON)
	if err != nil {
		return err
	}
	// Kept beside the knowledge base for the rewriting of follow-ups.
	if verr := k.AddVocab(*tenant, vocab.FromDocuments(loaded)); verr != nil {
		fmt.Fprintf(e.stderr, "vocabulary not saved: %v\n", verr)
	}
	if rep.Files+rep.FAQFiles == 0 && len(rep.Pruned) == 0 {
		return fmt.Errorf("nothing ingested: %s", whyNothing(rep))
	}
	if len(rep.Errors) > 0 {
		return fmt.Errorf("%d of %d files failed (see above)", len(rep.Errors), len(rep.Errors)+rep.Files+rep.FAQFiles)
	}
	return nil
}

// ingestOutput is the --json shape of the ingest report.
type ingestOutput struct {
	Store      string          `json:"store"`
	Files      int             `json:"files"`
	Chunks     int             `json:"chunks"`
	FAQFiles   int             `json:"faq_files"`
	FAQEntries int             `json:"faq_entries"`
	Skipped    []ingestProblem `json:"skipped"`
	Errors     []ingestProblem `json:"errors"`
	Warnings   []ingestProblem `json:"warnings"`
	Pruned     []ingestPruned  `json:"pruned"`
}

// ingestProblem is a skipped, failed or partly ingested file of
// ingest --json.
type ingestProblem struct {
	Path    string `json:"path"`
	Message string `json:"message"`
}

// ingestPruned is a document ingest --prune deleted.
type ingestPruned struct {
	Origin string `json:"origin"`
	DocID  string `json:"doc_id"`
	Chunks int    `json:"chunks"`
}

// jsonReport converts rep to its --json shape; every list is present,
// empty when there is nothing in it.
func jsonReport(rep ingest.Report, store string) ingestOutput {
	out := ingestOutput{Store: store, Files: rep.Files, Chunks: rep.Chunks, FAQFiles: rep.FAQFiles, FAQEntries: rep.FAQEntries,
		Skipped: []ingestProblem{}, Errors: []ingestProblem{}, Warnings: []ingestProblem{}, Pruned: []ingestPruned{}}
	for _, s := range rep.Skipped {
		out.Skipped = append(out.Skipped, ingestProblem{Path: s.Path, Message: s.Reason})
	}
	for _, fe := range rep.Errors {
		out.Errors = append(out.Errors, ingestProblem{Path: fe.Path, Message: fe.Err.Error()})
	}
	for _, w := range rep.Warnings {
		out.Warnings = append(out.Warnings, ingestProblem{Path: w.Path, Message: w.Message})
	}
	for _, d := range rep.Pruned {
		out.Pruned = append(out.Pruned, ingestPruned{Origin: d.Origin, DocID: d.DocID, Chunks: d.Chunks})
	}
	return out
}

// printReport writes the summary to stdout and the problems to stderr, or
// with asJSON the whole report to stdout as one JSON object. File names
// are cleaned of terminal control sequences.
func printReport(e *env, rep ingest.Report, store string, verbose, asJSON bool) {
	if asJSON {
		if err := writeJSON(e.stdout, jsonReport(rep, store)); err != nil {
			fmt.Fprintf(e.stderr, "writing the report: %v\n", err)
		}
		return
	}
	fmt.Fprintf(e.stdout, "ingested %d files, %d chunks, %d FAQ entries into %s\n", rep.Files, rep.Chunks, rep.FAQEntries, store)
	if n := len(rep.Pruned); n > 0 {
		fmt.Fprintf(e.stdout, "pruned %d %s whose file is gone:\n", n, plural(n, "document", "documents"))
		for _, d := range rep.Pruned {
			fmt.Fprintf(e.stdout, "  %s (%d chunks)\n", clean(cmp.Or(d.Origin, d.DocID)), d.Chunks)
		}
	}
	if n := len(rep.Skipped); n > 0 {
		fmt.Fprintf(e.stderr, "skipped %d %s:\n", n, plural(n, "file", "files"))
		shown := rep.Skipped
		if !verbose && n > skippedShown {
			shown = shown[:skippedShown]
		}
		for _, s := range shown {
			fmt.Fprintf(e.stderr, "  %s: %s\n", clean(s.Path), clean(s.Reason))
		}
		if len(shown) < n {
			fmt.Fprintf(e.stderr, "  ... and %d more (--verbose names them all)\n", n-len(shown))
		}
	}
	for _, w := range rep.Warnings {
		fmt.Fprintf(e.stderr, "  warning: %s: %s\n", clean(w.Path), clean(w.Message))
	}
	outside := false
	for _, fe := range rep.Errors {
		fmt.Fprintf(e.stderr, "  failed: %s: %s\n", clean(fe.Path), clean(fe.Err.Error()))
		outside = outside || errors.Is(fe.Err, ingest.ErrOutsideRoot)
	}
	if outside {
		fmt.Fprintln(e.stderr, "  (links that lead outside an ingested folder are not followed; --follow-symlinks allows them)")
	}
}

// whyNothing says why a run stored nothing.
func whyNothing(rep ingest.Report) string {
	switch {
	case len(rep.Errors) > 0 && len(rep.Skipped) > 0:
		return fmt.Sprintf("%d %s failed and %d had no loader", len(rep.Errors), plural(len(rep.Errors), "file", "files"), len(rep.Skipped))
	case len(rep.Errors) > 0:
		return fmt.Sprintf("every file failed (%d)", len(rep.Errors))
	case len(rep.Skipped) > 0:
		return fmt.Sprintf("no supported file (%d skipped, listed above; supported: .md .markdown .txt .csv .tsv .xlsx .jsonl .html .htm .pdf .docx .pptx)", len(rep.Skipped))
	}
	return "no files found (hidden files and folders are left out)"
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// outline is what the vocabulary reads of a document: its tables and the
// heading paths of its blocks, without their text.
func outline(d ingest.Document) ingest.Document {
	blocks := make([]ingest.Block, len(d.Blocks))
	for i, b := range d.Blocks {
		blocks[i] = ingest.Block{Headings: b.Headings, ContentType: b.ContentType}
	}
	return ingest.Document{ID: d.ID, Path: d.Path, Title: d.Title, Tables: d.Tables, Blocks: blocks}
}
