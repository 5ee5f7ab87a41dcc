// Package samplekb bundles a small bilingual (Chinese and English) company
// handbook for the fictional company Starbridge Electronics (星桥电子): the
// knowledge base the examples, the CLI demo and the evaluation run on.
//
// Files live in one folder per source category (admin, after_sales,
// finance, hr, it, legal) so that folder-based ingestion gives every chunk
// its source; faq.jsonl at the root is the FAQ collection, each entry
// naming its own source. Ingestion recognises it as an FAQ file by its
// question and answer fields (see package ingest). All content is invented
// for this project.
package samplekb

import (
	"embed"
	"io/fs"

	"github.com/adaptrag/adaptrag/ingest"
)

//go:embed data
var data embed.FS

// Sources lists the source categories of the knowledge base, which are
// also the names of its top-level folders.
var Sources = []string{"admin", "after_sales", "finance", "hr", "it", "legal"}

// FAQFile is the path of the FAQ collection inside FS.
const FAQFile = "faq.jsonl"

// FS returns the knowledge base as a read-only file system rooted at the
// data folder, so its paths read "finance/报销制度.md". It is safe for
// concurrent use.
func FS() fs.FS {
	sub, err := fs.Sub(data, "data")
	if err != nil { // "data" is a valid, embedded path: cannot happen
		return data
	}
	return sub
}

// FAQ returns the entries of the FAQ collection in file order, as
// ingest.ReadFAQ reads them.
func FAQ() ([]ingest.FAQEntry, error) { return ingest.ReadFAQ(FS(), FAQFile) }
