package ingest

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/adaptrag/adaptrag/retrieval"
)

// DocID returns the document id of the file at name inside a file system
// (IngestFS, LoadFS): the cleaned slash-separated path itself, so
// "./hr//leave.md" and "hr/leave.md" are the same document.
func DocID(name string) string {
	return path.Clean(strings.TrimPrefix(filepath.ToSlash(name), "./"))
}

// FileDocID returns the document id of a file on disk (Ingest) from its
// resolved absolute path: "file://" and the slash-separated path, not
// percent-encoded ("file:///home/ann/kb/hr/leave.md"). The id is the same
// whichever folder the file is ingested from.
func FileDocID(abs string) string {
	p := filepath.ToSlash(filepath.Clean(abs))
	if !strings.HasPrefix(p, "/") {
		p = "/" + p // a Windows drive letter
	}
	return "file://" + p
}

// chunkID returns a chunk's stable id: a hash of tenant, document, the
// chunk's key inside the document (its record id, or its position) and its
// text, laid out as an RFC 9562 version 8 UUID so that stores requiring
// UUID point ids accept it as is. Identical content re-ingested gets the
// same id, making Upsert idempotent; changed content gets a new id.
func chunkID(tenant, docID, key, text string) string {
	h := sha256.New()
	for _, s := range []string{tenant, docID, key, text} {
		h.Write([]byte(strconv.Itoa(len(s))))
		h.Write([]byte{':'})
		h.Write([]byte(s))
	}
	var u [16]byte
	copy(u[:], h.Sum(nil))
	u[6] = u[6]&0x0f | 0x80 // version 8
	u[8] = u[8]&0x3f | 0x80 // RFC 9562 variant
	x := hex.EncodeToString(u[:])
	return x[:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:]
}

// EmbedText is the text ingestion embeds for a chunk. An FAQ chunk is
// embedded by its question only, so that a user's question is compared
// with questions (the answer travels in Meta[retrieval.MetaAnswer]); any
// other chunk by its title and its text.
func EmbedText(c *retrieval.Chunk) string {
	if c.ContentType == retrieval.ContentFAQ {
		return cmp.Or(c.Meta[retrieval.MetaQuestion], c.Text)
	}
	if c.Title == "" {
		return c.Text
	}
	return c.Title + "\n" + c.Text
}

// Chunks splits a loaded document into retrieval chunks, in order, with
// stable ids, the tenant and source of o, and no vectors. Each chunk's text
// starts with its heading path ("Handbook > Leave > Sick leave") on a line
// of its own. Meta holds the provenance: retrieval.MetaOrigin (doc.Path),
// MetaLocator (heading path, "row N", "id X" or "line N"; none for plain
// text) and MetaContentHash (doc.Hash). An FAQ document gives
// FAQChunks(doc, o).
func Chunks(doc Document, o Options) []retrieval.Chunk {
	if doc.FAQ {
		return FAQChunks(doc, o)
	}
	var out []retrieval.Chunk
	for _, b := range doc.Blocks {
		prefix := strings.Join(b.Headings, " > ")
		sp := Splitter{ChunkSize: o.ChunkSize, Overlap: o.Overlap}
		size, _ := sp.sizes()
		if prefix != "" {
			// Leave room for the prefix, but never less than half the size.
			sp.ChunkSize = max(size-utf8.RuneCountInString(prefix)-1, size/2)
		}
		pieces := []string{strings.TrimSpace(b.Text)}
		if b.ContentType == retrieval.ContentText || utf8.RuneCountInString(b.Text) > sp.ChunkSize {
			pieces = sp.Split(b.Text)
		}
		source := cmp.Or(o.Source, b.Source, doc.Source)
		title := cmp.Or(b.Title, prefix, doc.Title)
		for i, p := range pieces {
			if p == "" {
				continue
			}
			text := p
			if prefix != "" {
				text = prefix + "\n" + p
			}
			key := "pos:" + strconv.Itoa(len(out))
			if b.RecordID != "" {
				key = "rec:" + b.RecordID + "#" + strconv.Itoa(i)
			}
			meta := maps.Clone(b.Meta)
			if meta == nil {
				meta = map[string]string{}
			}
			provenance(meta, doc, b.Locator)
			out = append(out, retrieval.Chunk{
				ID:          chunkID(o.Tenant, doc.ID, key, text),
				DocID:       doc.ID,
				Tenant:      o.Tenant,
				Source:      source,
				Title:       title,
				ContentType: cmp.Or(b.ContentType, retrieval.ContentText),
				Position:    len(out),
				Text:        text,
				Meta:        meta,
			})
		}
	}
	return out
}

// provenance writes origin, locator and content hash into meta, replacing
// whatever a record carried under those keys.
func provenance(meta map[string]string, doc Document, locator string) {
	for k, v := range map[string]string{
		retrieval.MetaOrigin:      doc.Path,
		retrieval.MetaLocator:     locator,
		retrieval.MetaContentHash: doc.Hash,
	} {
		if v != "" {
			meta[k] = v
		} else {
			delete(meta, k)
		}
	}
}

// FAQChunks turns the entries of an FAQ document into chunks of the FAQ
// collection, one per entry, in order. The one rule for FAQ entries: the
// text (what is searched and embedded, see EmbedText) and the title are the
// question; Meta[retrieval.MetaQuestion] and Meta[retrieval.MetaAnswer]
// hold the question and the standard answer, Meta[retrieval.MetaLang] the
// language when known, and the provenance keys as for Chunks, the locator
// being the entry's ("id X", "line N", "row N"). The source is o.Source,
// else the entry's, else the document's.
//
// An entry's chunk id depends on the tenant, the entry's id (or, without
// one, its place in the file) and its question and answer, not on the
// file's document id: the same FAQ file gets the same chunk ids whether it
// is loaded from an embedded file system or ingested from disk.
func FAQChunks(doc Document, o Options) []retrieval.Chunk {
	out := make([]retrieval.Chunk, 0, len(doc.Entries))
	for i, e := range doc.Entries {
		key := "id:" + e.ID
		if e.ID == "" {
			key = "at:" + cmp.Or(e.Locator, strconv.Itoa(i))
		}
		locator := e.Locator
		if locator == "" && e.ID != "" {
			locator = "id " + e.ID
		}
		meta := map[string]string{retrieval.MetaQuestion: e.Question, retrieval.MetaAnswer: e.Answer}
		if e.Lang != "" {
			meta[retrieval.MetaLang] = e.Lang
		}
		provenance(meta, doc, locator)
		out = append(out, retrieval.Chunk{
			ID:          chunkID(o.Tenant, "faq", key, e.Question+"\n"+e.Answer),
			DocID:       doc.ID,
			Tenant:      o.Tenant,
			Source:      cmp.Or(o.Source, e.Source, doc.Source),
			Title:       e.Question,
			ContentType: retrieval.ContentFAQ,
			Position:    i,
			Text:        e.Question,
			Meta:        meta,
		})
	}
	return out
}
