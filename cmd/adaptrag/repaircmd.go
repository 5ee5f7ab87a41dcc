package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/adaptrag/adaptrag/kb"
	"github.com/adaptrag/adaptrag/retrieval/memstore"
)

// repairResult is one store's outcome, as printed.
type repairResult struct {
	Store string `json:"store"`
	memstore.RepairReport
	Error string `json:"error,omitempty"`
}

// errLost reports that a repair could not keep everything (exit status 1).
var errLost = errors.New("some data could not be salvaged")

// runRepair salvages the embedded stores of a knowledge base: DIR/docs and
// DIR/faq when present, or DIR itself when it is one store. The exit
// status is 0 when nothing was lost (including when there was nothing to
// repair), 1 when something was lost or a store could not be repaired,
// and 2 on usage errors.
func runRepair(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "repair")
	store := fs.String("store", e.getenv("ADAPTRAG_STORE"), "embedded:DIR, a knowledge base (DIR/docs, DIR/faq) or one store directory (default: $ADAPTRAG_STORE)")
	asJSON := fs.Bool("json", false, "print the reports as JSON")
	dryRun := fs.Bool("dry-run", false, "report what would be kept and lost without changing anything")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, pos[0])
	}
	if *store == "" {
		return fmt.Errorf("%w: want --store embedded:DIR", errUsage)
	}
	dir, ok := strings.CutPrefix(*store, "embedded:")
	if !ok {
		return fmt.Errorf("%w: repair works on embedded stores (embedded:DIR), not %q", errUsage, *store)
	}
	if dir == "" {
		dir = kb.DefaultDir()
	}
	stores, err := storeDirs(dir)
	if err != nil {
		return err
	}
	var results []repairResult
	failed := false
	for _, s := range stores {
		rep, err := memstore.Repair(ctx, s.dir, memstore.RepairOptions{DryRun: *dryRun})
		r := repairResult{Store: s.name, RepairReport: rep}
		if err != nil {
			r.Error = err.Error()
			failed = true
		}
		results = append(results, r)
	}
	if *asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(map[string]any{"stores": results}); err != nil {
			return err
		}
	} else {
		for _, r := range results {
			printRepair(e.stdout, r)
		}
	}
	lost := false
	for _, r := range results {
		lost = lost || !r.Clean()
	}
	switch {
	case failed:
		return errors.New("a store could not be repaired (see above)")
	case lost:
		return errLost
	}
	return nil
}

type storeDir struct{ name, dir string }

// storeDirs finds the stores to repair: a knowledge base's docs and faq,
// or dir itself when it holds a store's files.
func storeDirs(dir string) ([]storeDir, error) {
	var out []storeDir
	for _, name := range []string{"docs", "faq"} {
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			out = append(out, storeDir{name, p})
		}
	}
	if len(out) > 0 {
		return out, nil
	}
	for _, f := range []string{"MANIFEST", "store.wal", "store.snap"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			return []storeDir{{filepath.Base(dir), dir}}, nil
		}
	}
	return nil, fmt.Errorf("no embedded store in %s (neither docs/ nor faq/ nor a store's files): %w", dir, memstore.ErrNoStore)
}

func printRepair(w io.Writer, r repairResult) {
	fmt.Fprintf(w, "%s (%s): ", r.Store, r.Dir)
	switch {
	case r.Error != "":
		fmt.Fprintf(w, "not repaired: %s\n", r.Error)
		return
	case len(r.Problems) == 0 && len(r.Lost) == 0:
		fmt.Fprintf(w, "healthy, nothing to repair (%d chunks)", r.Chunks)
		if r.TornTail > 0 {
			fmt.Fprintf(w, "; a torn last write of %d bytes, which never completed, will be dropped when it is opened", r.TornTail)
		}
		fmt.Fprintln(w)
		return
	case r.DryRun:
		fmt.Fprint(w, "would be repaired: ")
	default:
		fmt.Fprint(w, "repaired: ")
	}
	fmt.Fprintf(w, "%d chunks kept (%d read from the snapshot, then %d log records)", r.Chunks, r.SnapshotChunks, r.RecordsKept)
	if r.Clean() {
		fmt.Fprintln(w, "; nothing lost")
	} else {
		fmt.Fprintf(w, "; lost: %s, %s, %s\n", count(r.LostRecords, "log record"), count(r.LostChunks, "snapshot chunk"), count(uint64(r.LostBytes), "damaged byte"))
	}
	for _, p := range r.Problems {
		fmt.Fprintf(w, "  found: %s\n", p)
	}
	for _, l := range r.Lost {
		fmt.Fprintf(w, "  lost: %s", l.File)
		if l.Offset >= 0 {
			fmt.Fprintf(w, " at offset %d, %d bytes", l.Offset, l.Bytes)
		}
		switch {
		case l.FirstRecord > 0 && l.FirstRecord == l.LastRecord:
			fmt.Fprintf(w, ", record %d", l.FirstRecord)
		case l.FirstRecord > 0:
			fmt.Fprintf(w, ", records %d to %d", l.FirstRecord, l.LastRecord)
		}
		fmt.Fprintf(w, ": %s\n", l.Reason)
	}
	for _, name := range slices.Sorted(maps.Keys(r.SetAside)) {
		fmt.Fprintf(w, "  kept aside: %s as %s\n", name, r.SetAside[name])
	}
}

// count renders n things, in the plural unless n is 1.
func count(n uint64, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}
