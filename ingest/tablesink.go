package ingest

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"

	"github.com/adaptrag/adaptrag/retrieval"
)

// TableWriter stores the tables of ingested files as records (see package
// records). Implementations are safe for concurrent use.
type TableWriter interface {
	// ReplaceTables replaces every table of docID within scope by tables,
	// in one transaction: after a crash the old tables or the new ones
	// are stored, never a mix. With no tables it deletes the document's.
	ReplaceTables(ctx context.Context, scope retrieval.Scope, docID string, tables []SchemaTable) error
}

// SchemaTable is a table with its schema, as a TableWriter stores it.
type SchemaTable struct {
	Origin string // the file's path relative to the ingested folder (MetaOrigin)
	Table  Table
	Schema TableSchema
}

// SchemaTables returns doc's tables with their schemas, as ingestion hands
// them to a TableWriter: the schema of each is inferred and the sidecar
// file beside the document (NAME.schema.json, see SchemaSidecar; doc.Path
// inside fsys) is applied when fsys holds one. fsys may be nil.
func SchemaTables(doc Document, fsys fs.FS) ([]SchemaTable, error) {
	return schemaTables(doc, fsys, doc.Path)
}

// schemaTables infers the schema of each of doc's tables and applies the
// sidecar file beside origin when fsys holds one. A table is named by its sidecar, else by its own name, else
// by the file's name without extension; a second table of the same name
// in the file gets " 2" appended. A sidecar that cannot be read or fits no
// table is an error matching ErrSchema.
func schemaTables(doc Document, fsys fs.FS, origin string) ([]SchemaTable, error) {
	if len(doc.Tables) == 0 {
		return nil, nil
	}
	var declared *TableSchema
	if fsys != nil {
		sidecar := SchemaSidecar(origin)
		f, err := fsys.Open(sidecar)
		switch {
		case err == nil:
			d, err := ParseSchema(f)
			f.Close()
			if err != nil {
				return nil, fmt.Errorf("%s: %w", path.Base(sidecar), err)
			}
			declared = &d
		case !errors.Is(err, fs.ErrNotExist):
			return nil, fmt.Errorf("%w: %s: %w", ErrSchema, path.Base(sidecar), err)
		}
	}
	base := strings.TrimSuffix(path.Base(doc.Path), path.Ext(doc.Path))
	names := map[string]int{}
	applied := false
	var out []SchemaTable
	for _, t := range doc.Tables {
		s := InferSchema(t)
		if s.Table == "" {
			s.Table = base
		}
		if declared != nil {
			if d, err := Declare(s, *declared); err == nil {
				s, applied = d, true
			} else if len(doc.Tables) == 1 {
				return nil, fmt.Errorf("%s: %w", path.Base(SchemaSidecar(origin)), err)
			}
		}
		if names[s.Table]++; names[s.Table] > 1 {
			s.Table += " " + strconv.Itoa(names[s.Table])
		}
		out = append(out, SchemaTable{Origin: doc.Path, Table: t, Schema: s})
	}
	if declared != nil && !applied {
		return nil, fmt.Errorf("%w: %s fits none of the file's tables", ErrSchema, path.Base(SchemaSidecar(origin)))
	}
	return out, nil
}
