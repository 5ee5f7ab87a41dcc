// Package ingest turns files into retrieval chunks and stores them.
//
// # Loaders
//
// Loaders are chosen by extension: Markdown (.md, split at headings, the
// heading path kept as context), plain text (.txt), CSV and TSV (.csv,
// .tsv), Excel workbooks (.xlsx, each sheet a table, bounded by
// MaxSheetUnzipped and MaxSheetCells), JSON lines (.jsonl, one record per
// line) and HTML (.html, .htm; visible text only, headings kept); and
// the documents PDF (.pdf, read by PDFium in WebAssembly, see PDFEngine),
// Word (.docx) and PowerPoint (.pptx), whose headings, tables and pages
// become locators, within the limits of DocOptions (docs/ingest.md).
//
// Every table, whatever its format (a CSV or TSV file, a sheet, a Markdown
// table or an HTML table with a header row, under a heading), is an
// ingest.Table handed to Document.AddTable:
// each data row becomes one chunk whose text keeps the header names
// ("zone: Z5; surcharge_eur: 9.90"), titled by the table's name; a header
// row is never a chunk of its own. In Markdown and plain text, paragraphs
// hard-wrapped in the source are joined before splitting (CJK lines
// without a space); list items, headings, tables and code keep their
// lines. Text is cut by a recursive Splitter that prefers paragraph, line
// and sentence boundaries, Chinese (。！？；) as well as Latin, and
// overlaps consecutive chunks. Content that is not UTF-8 text (NUL bytes,
// mostly invalid UTF-8, many control characters) is refused with ErrBinary.
//
// # FAQ files
//
// A .jsonl file whose first record has a question and an answer field and
// no "text" field, or a .csv file whose header has question and answer
// columns, is an FAQ file (names are matched without regard to case; q,
// 问题, 提问 and a, 答案, 回答 are accepted too; see ParseFAQ). Its entries
// become one chunk each in the FAQ collection (Target.FAQ), never among
// documents; Options.FAQFiles names files to read as FAQ files whatever
// they look like. An FAQ chunk's text is its question, which alone is
// embedded; the answer travels in Meta[retrieval.MetaAnswer] (FAQChunks,
// EmbedText).
//
// # Provenance
//
// Every chunk carries in Meta: retrieval.MetaOrigin, the file's path
// relative to the ingested folder (slash-separated); MetaLocator, the
// place inside it (Markdown and HTML: the heading path, "Guide > Leave";
// CSV and TSV: "row N" as a spreadsheet numbers rows, the header being
// row 1; XLSX: "sheet NAME > row N", likewise; a Markdown table: its
// heading path and "row N", counting its data rows from 1;
// JSON lines and FAQ entries: "id X", else "line N" or "row N"; plain
// text: none); MetaContentHash, "sha256:" and the hash of the whole file;
// and, once stored, MetaIngestedAt (RFC 3339, UTC; Options.Now).
//
// # Identity
//
// A file on disk is a document whose id is its resolved absolute path
// (FileDocID), whichever folder it is reached from: ingesting a folder and
// then a subfolder adds no duplicate, and same-named files of two folders
// stay apart. Moving the folder changes the ids; Options.Prune on the old
// location deletes what was ingested from it. In a file system (IngestFS)
// the id is the path inside it (DocID). A chunk's id is a hash of tenant,
// document, position (or record id) and text, so re-ingesting an unchanged
// file yields the same ids; an FAQ chunk's id leaves the document out, so
// an FAQ file gets the same ids from an embedded file system and from disk.
//
// # Safety
//
// Each file is embedded whole and stored with one Store.ReplaceDocument
// call: a failure or a cancellation leaves the previous version. Links
// are followed only when they stay inside the ingested folder (a link to a
// file of the folder is that file, not a second document); others are
// refused with ErrOutsideRoot unless Options.FollowSymlinks is set, and
// folders behind links are never walked. Hidden files and folders
// (".name") are skipped.
//
// Ingest, IngestFS and LoadFS keep going when a file fails and report each
// failure as a FileError in the Report; only a cancelled or expired context
// (or an unusable configuration) stops a run.
package ingest
