package ingest

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/adaptrag/adaptrag/retrieval"
)

// prune deletes, in both collections, the tenant's documents whose file
// lay under one of the walked folders and no longer exists. check has made
// sure both stores are Listers.
func prune(ctx context.Context, t Target, trees []*tree, o Options, rep *Report) error {
	scope := retrieval.Scope{Tenant: o.Tenant}
	pruned := map[*tree]int{}
	for _, s := range []retrieval.Store{t.Docs, t.FAQ} {
		if s == nil {
			continue
		}
		docs, err := s.(retrieval.Lister).Documents(ctx, scope)
		if err != nil {
			return fmt.Errorf("ingest: prune: list documents: %w", err)
		}
		for _, d := range docs {
			tr, rel := owner(trees, d.DocID)
			if tr == nil || !tr.gone(rel) {
				continue
			}
			if err := s.DeleteDocument(ctx, scope, d.DocID); err != nil {
				if isContextErr(err) && ctx.Err() != nil {
					return fmt.Errorf("ingest: prune: %w", err)
				}
				rep.Errors = append(rep.Errors, FileError{Path: tr.show(rel), Err: fmt.Errorf("prune: %w", err)})
				continue
			}
			if t.Tables != nil {
				if err := t.Tables.ReplaceTables(ctx, scope, d.DocID, nil); err != nil {
					rep.Errors = append(rep.Errors, FileError{Path: tr.show(rel), Err: fmt.Errorf("prune tables: %w", err)})
				}
			}
			rep.Pruned = append(rep.Pruned, d)
			pruned[tr]++
		}
	}
	for _, tr := range trees {
		if tr.missing && pruned[tr] == 0 {
			rep.Errors = append(rep.Errors, FileError{Path: tr.display, Err: fmt.Errorf("nothing to prune: %w", fs.ErrNotExist)})
		}
	}
	return nil
}

// owner returns the walked folder a document id lies under and the path
// of the document's file inside it, or nil.
func owner(trees []*tree, id string) (*tree, string) {
	for _, t := range trees {
		if !t.folder {
			continue
		}
		if t.abs == "" {
			if fs.ValidPath(id) && id != "." {
				return t, id
			}
			continue
		}
		if rel, ok := strings.CutPrefix(id, FileDocID(t.abs)+"/"); ok {
			return t, rel
		}
	}
	return nil, ""
}

// gone reports whether the file at rel in t no longer exists (a link
// whose target vanished counts as existing).
func (t *tree) gone(rel string) bool {
	var err error
	switch {
	case t.abs != "":
		_, err = os.Lstat(filepath.Join(t.abs, filepath.FromSlash(rel)))
	case t.fsys != nil:
		if rl, ok := t.fsys.(fs.ReadLinkFS); ok {
			_, err = rl.Lstat(rel)
		} else {
			_, err = fs.Stat(t.fsys, rel)
		}
	}
	return errors.Is(err, fs.ErrNotExist)
}
