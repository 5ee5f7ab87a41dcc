// Package ingest turns files into retrieval chunks and stores them.
//
// Loaders are chosen by extension: Markdown (.md, split at headings, the
// heading path kept as context), plain text (.txt), CSV (.csv, one chunk
// per row whose text keeps the header names), JSON lines (.jsonl, one
// record per line; FAQ records become ContentFAQ chunks) and HTML (.html,
// .htm; visible text only, headings kept). Text is cut by a recursive
// Splitter that prefers paragraph, line and sentence boundaries, Chinese
// (。！？；) as well as Latin, and overlaps consecutive chunks.
//
// Ids are stable. A document's id is a hash of its path relative to the
// ingestion root (DocID); a chunk's id is a hash of tenant, document id,
// position (or record id) and text. Re-ingesting an unchanged file thus
// yields the same ids, and Ingest replaces a changed file by deleting the
// document's chunks before upserting its new ones, so no stale chunk
// survives. Moving a file, or ingesting it from another root, changes its
// id: the old copy must then be deleted by its old id.
//
// Ingest, IngestFS and LoadFS keep going when a file fails and report each
// failure as a FileError in the Report; only a cancelled or expired context
// (or an unusable configuration) stops a run.
package ingest
