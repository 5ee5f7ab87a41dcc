package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"

	"go.opentelemetry.io/otel/trace"

	"github.com/adaptrag/adaptrag"
	"github.com/adaptrag/adaptrag/kb"
	"github.com/adaptrag/adaptrag/llm"
	"github.com/adaptrag/adaptrag/lookup"
	"github.com/adaptrag/adaptrag/query"
	"github.com/adaptrag/adaptrag/records"
	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/adaptrag/adaptrag/retrieval/embed"
	"github.com/adaptrag/adaptrag/router"
	"github.com/adaptrag/adaptrag/samplekb"
	"github.com/adaptrag/adaptrag/telemetry"
)

// options are the flags shared by commands that run the pipeline.
type options struct {
	classifier string // offline, llm, cascade; "" picks cascade with a model, offline without
	store      string // "" for the bundled sample handbook
	records    recordsFlags
	// files, when not nil, is a folder of documents built into an
	// in-memory knowledge base instead of store (eval conversation --kb).
	files fs.FS
	llm   llm.Config
	tp    trace.TracerProvider
	// tune adjusts the pipeline's options before it is built (the
	// service's meter provider and limits, say).
	tune func(*adaptrag.Options)
	// threads is the URL of the thread store ("": none).
	threads string
}

// app is an assembled pipeline and what it owns.
type app struct {
	pipe     *adaptrag.Pipeline
	kb       *kb.KB
	embedder retrieval.Embedder
	tp       trace.TracerProvider
	shutdown func(context.Context) error
	lookup   *lookup.Records            // closed by Close when it owns its database
	threads  interface{ Close() error } // the thread store; nil without one
}

func (a *app) Close(ctx context.Context) error {
	var errs []error
	if a.lookup != nil {
		errs = append(errs, a.lookup.Close())
	}
	if a.threads != nil {
		errs = append(errs, a.threads.Close())
	}
	return errors.Join(append(errs, a.kb.Close(), a.shutdown(ctx))...)
}

// recordsFlags are --records and --records-schema: the user's own
// database for look-ups, chains and totals.
type recordsFlags struct {
	url, schema *string
}

// addRecordsFlags registers --records and --records-schema on fs.
func addRecordsFlags(fs *flag.FlagSet) recordsFlags {
	return recordsFlags{
		url:    fs.String("records", "", "your own database for look-ups and totals: sqlite:PATH or postgres://USER@HOST/DB (read-only; needs --records-schema)"),
		schema: fs.String("records-schema", "", `the declared schema of --records: {"tables": [{"table", "key", "owner", "tenant", "columns": [{"name", "role", "filter", "sum", "aliases", "unit"}]}]}`),
	}
}

// lookupOf returns the look-up of a run: the user's database (--records),
// else the knowledge base's own tables, else the bundled sample's orders
// and products; nil when there is none.
func lookupOf(ctx context.Context, o options, k *kb.KB) (*lookup.Records, error) {
	url, schema := "", ""
	if o.records.url != nil {
		url, schema = *o.records.url, *o.records.schema
	}
	switch {
	case url == "" && schema != "":
		return nil, fmt.Errorf("%w: --records-schema without --records", errUsage)
	case url != "":
		if schema == "" {
			return nil, fmt.Errorf("%w: --records needs --records-schema FILE (the tables and columns that may be read)", errUsage)
		}
		f, err := os.Open(schema)
		if err != nil {
			return nil, fmt.Errorf("%w: --records-schema: %w", errUsage, err)
		}
		tables, err := records.ParseSchemaFile(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%w: --records-schema %s: %w", errUsage, schema, err)
		}
		db, err := records.Open(ctx, url, records.Config{Tables: tables})
		if err != nil {
			return nil, err
		}
		l, err := lookup.NewRecords(ctx, db)
		if err != nil {
			return nil, errors.Join(err, db.Close())
		}
		return l, nil
	case o.store == "" && o.files == nil:
		return samplekb.Lookup(), nil // the sample's orders and products
	case k.Records != nil:
		return lookup.NewRecords(ctx, k.Records) // closed with the knowledge base
	}
	return nil, nil
}

// classifier builds the classifier a flag names.
func classifier(name string, cfg llm.Config) (router.Classifier, error) {
	off, err := router.NewOffline()
	if err != nil {
		return nil, err
	}
	if name == "" {
		name = "offline"
		if cfg.Configured() {
			name = "cascade"
		}
	}
	switch name {
	case "offline":
		return off, nil
	case "llm", "cascade":
		if !cfg.Configured() {
			return nil, fmt.Errorf("%w: --classifier %s needs a model (set OPENAI_API_KEY / OPENAI_BASE_URL or OLLAMA_HOST)", errUsage, name)
		}
		l, err := router.NewLLM(cfg, router.LLMConfig{})
		if err != nil {
			return nil, err
		}
		if name == "llm" {
			return l, nil
		}
		return router.NewCascade(off, l, router.DefaultMinConfidence), nil
	}
	return nil, fmt.Errorf("%w: unknown classifier %q (offline, llm or cascade)", errUsage, name)
}

// policy returns the pipeline options for a knowledge base: the bundled
// sample brings its source table; other knowledge bases bring none.
func policy(store string) adaptrag.Options {
	var o adaptrag.Options
	if store == "" {
		o.Plan.Sources = samplekb.PlanSources()
	}
	return o
}

func build(ctx context.Context, o options) (*app, error) {
	emb, err := embed.FromConfig(embed.ConfigFromEnv())
	if err != nil {
		return nil, err
	}
	clf, err := classifier(o.classifier, o.llm)
	if err != nil {
		return nil, err
	}
	var gen llm.Generator
	if o.llm.Configured() {
		if gen, err = llm.New(o.llm); err != nil {
			return nil, err
		}
	}
	a := &app{embedder: emb, shutdown: func(context.Context) error { return nil }}
	tp := o.tp
	if tp == nil {
		var shutdown func(context.Context) error
		if tp, shutdown, err = telemetry.Setup(ctx, "adaptrag"); err != nil {
			return nil, err
		}
		a.shutdown = shutdown
	}
	switch {
	case o.files != nil:
		a.kb, err = kb.FromFS(ctx, o.files, emb)
	case o.store == "":
		a.kb, err = kb.Sample(ctx, emb)
	default:
		a.kb, err = kb.Open(ctx, o.store, kb.Options{Dim: emb.Dim()})
	}
	if err != nil {
		return nil, errors.Join(err, a.shutdown(ctx))
	}
	a.tp = tp
	sample := o.store == "" && o.files == nil
	var opts adaptrag.Options
	if sample {
		opts = policy("")
	}
	opts.TracerProvider = tp
	if o.tune != nil {
		o.tune(&opts)
	}
	if o.threads != "" {
		ts, err := openThreads(ctx, o.threads)
		if err != nil {
			return nil, errors.Join(err, a.Close(ctx))
		}
		a.threads, opts.Threads = ts, ts
	}
	deps := adaptrag.Deps{Docs: a.kb.Docs, FAQ: a.kb.FAQ, Embedder: emb, Classifier: clf, Generator: gen}
	// Follow-ups are understood with the knowledge base's own names.
	// Each tenant's own, loaded on its first question (cached).
	tenants := query.NewVocabularies(func(_ context.Context, tenant string) (query.Vocabulary, error) {
		v, err := a.kb.VocabOf(tenant)
		if err != nil {
			return nil, err
		}
		return v, nil
	})
	deps.Rewriter = query.Offline{Vocab: a.kb.Vocab, Tenants: tenants}
	if gen != nil {
		// Follow-ups are rewritten by the model (checked against the
		// conversation; the offline rules stand in when it fails).
		deps.Rewriter = query.NewLLM(gen, query.LLMConfig{Vocab: a.kb.Vocab, Tenants: tenants})
	}
	lk, err := lookupOf(ctx, o, a.kb)
	if err != nil {
		return nil, errors.Join(err, a.Close(ctx))
	}
	if lk != nil {
		deps.Lookup = lk
		if sample || o.records.url != nil && *o.records.url != "" {
			a.lookup = lk // a database of its own, closed with the app
		}
	}
	a.pipe, err = adaptrag.New(ctx, deps, opts)
	if err != nil {
		return nil, errors.Join(err, a.Close(ctx))
	}
	return a, nil
}
