// Package memstore is the embedded retrieval.Store: dense search by the
// quantized index of retrieval/vector, sparse search by the BM25 index of
// retrieval/bm25, hybrid search by reciprocal-rank fusion of the two, and
// optional crash-safe persistence in a directory.
//
// # Persistence
//
// With Options.Dir set, every Upsert, DeleteDocument and ReplaceDocument
// is appended to a write-ahead log as one record (length, checksum,
// sequence number, payload) and fsynced before it is applied in memory and
// before the call returns. A write that returned nil survives a crash of
// the process or the machine, and a write is never half applied: a
// ReplaceDocument is one record, so after a crash the store holds the old
// version of the document or the new one.
//
// When the log outgrows Options.CompactBytes or half the snapshot,
// whichever is larger, a compaction starts in the background: the state
// as of the last record is written to a new snapshot (temp file, fsync,
// rename, fsync of the directory), and a new log takes the records written
// meanwhile. Writes go on during it (it reads the state in pieces, and
// writers keep for it the records they change before it reads them), and
// the threshold growing with the snapshot bounds how often a growing store
// is rewritten. A crash after the snapshot's rename and before the new log
// leaves the old log beside it: Open applies its records after the
// snapshot's.
//
// A writer's Close also saves the dense index (dense.idx) and the keyword
// index (sparse.idx), which the next open adopts instead of adding every
// vector and tokenising every text again when they index exactly the
// state loaded; they are derived data, ignored when stale or damaged. For
// a large store it saves the chunks without their vectors too
// (records.idx), which the next open reads instead of the snapshot and the
// log when nothing was written since; a writer then checks those two
// files in the background, and compacts away any damage it finds there
// (see Verified).
//
// Otherwise Open loads the snapshot and replays the log. The one kind of
// damage it repairs by itself is a torn tail: a last record cut short or
// damaged, with nothing intact after it, which is what a crash during a
// write leaves (that write never returned). Anything else (damage
// followed by intact records, a snapshot that fails a checksum, a missing
// file the others say must exist, a log that lost acknowledged records)
// makes Open fail with a *CorruptError matching retrieval.ErrCorrupt,
// naming the file and the offset, and changing nothing. Repair then
// salvages every intact record and keeps the damaged files aside.
//
// A MANIFEST written when the store is created tells a store whose files
// were deleted from one never created. LOCK is held with flock by the one
// writer (a second writer gets ErrLocked), which keeps in it a high-water
// mark of the acknowledged records, so that an open can tell an
// acknowledged record that was damaged or cut off from a torn write.
//
// # Readers
//
// Options.ReadOnly opens an existing store (ErrNoStore otherwise) for
// searching only. It takes no lock and never writes, so any number of
// readers, in this process or others, can open a directory while a writer
// works in it. A reader sees the records committed when it loaded, never
// part of a record; Refresh brings it up to date with the writer.
//
// The file formats are described in format.go; docs/reliability.md gives
// the promise, what each kind of damage does, and how it was tested.
//
// # Scope
//
// Chunks are keyed by (Tenant, ID): two tenants that ingest the same
// content keep separate chunks, and the tenant of Request.Scope is a must
// filter inside every search.
//
// # Filters
//
// A payload index keeps, for each tenant, each source of a tenant and each
// document, the sorted internal ids of its chunks (a bitmap once dense).
// A search plans its filter by cardinality (plan.go): when the smallest
// posting list that bounds the matching set is small, the chunks in it
// that pass every condition are scored (dense: exactly up to a few
// thousand, by their codes and then exactly beyond; BM25:
// bm25.SearchAmong), so a selective filter costs what the matching set
// costs; a filter that passes nearly everything runs unfiltered with a
// check of the results; otherwise the index is searched with an accept
// func that answers the indexed conditions from the posting lists and
// reads a chunk only for the others (metadata keys, titles, content
// types).
//
// # Cost
//
// On the synthetic 384-dimensional benchmark workload (bench_test.go), at
// 100,000 chunks on a shared 2-core machine: hybrid top-50 about 5 ms at the
// median, in-memory ingest about 30,000 chunks/s, fsynced batches of 64
// about 20,000 chunks/s, and opening a compacted directory 2.7 s when both
// indexes are rebuilt from the snapshot (without dense.idx and sparse.idx;
// with them, under a second of CPU). A filter admitting 1%
// of the chunks (a source, documents or a tenant) takes the exact path,
// with recall 1: TestScale at 300,000 chunks measured 6.3 ms of CPU per
// dense search with a 1% source filter against 15.5 unfiltered (67.8
// before the payload index, when the filter read every chunk in a
// widening band), and BM25 1.8 ms against 50. The payload index costs 4
// bytes per chunk per list while a list is sparse, and one bit per id of
// the store's id range once it is dense. TestScale
// (ADAPTRAG_SCALE=100000,300000) measures durable ingest, the longest
// write, reopen, RSS and filtered search at scale, in wall and CPU time.
package memstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/adaptrag/adaptrag/retrieval/bm25"
	"github.com/adaptrag/adaptrag/retrieval/vector"
)

// Errors specific to this package; the shared ones are in retrieval.
var (
	// ErrClosed reports use of a Store after Close.
	ErrClosed = errors.New("memstore: store closed")
	// ErrLocked reports a directory already opened by another Store.
	ErrLocked = errors.New("memstore: directory in use by another store")
	// ErrReadOnly reports a write to a Store opened with Options.ReadOnly.
	ErrReadOnly = errors.New("memstore: store opened read-only")
	// ErrNoStore reports a read-only open of a directory that holds no
	// store. It matches retrieval.ErrNotFound.
	ErrNoStore = fmt.Errorf("memstore: no store in directory: %w", retrieval.ErrNotFound)
)

// DefaultCompactBytes is the least log size past which a write starts a
// compaction of the directory into a fresh snapshot.
const DefaultCompactBytes = 64 << 20

// Options configures a Store. The zero value is an in-memory store whose
// dimension is fixed by the first Upsert.
type Options struct {
	// Dir is the directory that holds the store; "" keeps it in memory
	// only. It is created if missing.
	Dir string
	// Dim is the dense dimension; 0 means the length of the first vector
	// upserted (or the one recorded in Dir).
	Dim int
	// Vector configures the dense index (zero: its defaults).
	Vector vector.Options
	// BM25 configures the sparse index (zero: k1 1.2, b 0.75, the default
	// analyzer).
	BM25 bm25.Params
	// CompactBytes is the least log size that starts a background
	// compaction after a write (the log may also grow to half the
	// snapshot); 0 means DefaultCompactBytes and a negative value never
	// compacts automatically (see Compact).
	CompactBytes int64
	// NoSync skips fsync, trading crash safety for write speed (bulk loads
	// that can be redone, tests). Data still reaches the OS on each write.
	NoSync bool
	// ReadOnly opens an existing store for searching only: Dir must
	// already hold a store (ErrNoStore otherwise), and writes fail with
	// ErrReadOnly. It takes no lock and changes no file, so it works
	// while another Store or process writes to Dir; Refresh picks up
	// what that writer commits later.
	ReadOnly bool
}

// record is a stored chunk; Vector stays nil (the dense index holds it).
type record struct {
	retrieval.Chunk
	live bool
}

type key struct{ tenant, id string }

const noTenant = ^uint32(0)

type docKey struct{ tenant, doc string }

// Store is an embedded retrieval.Store. It is safe for concurrent use:
// searches share a read lock, writes take the write lock.
type Store struct {
	opts Options

	mu     sync.RWMutex
	closed bool
	dim    int
	vec    *vector.Index
	lex    *bm25.Index
	recs   []record // by internal id
	// tenantOf[iid] is the interned tenant of record iid (noTenant when
	// deleted): the scope check reads 4 bytes instead of a whole record.
	tenantOf []uint32
	tenants  map[string]uint32
	free     []uint32 // internal ids of deleted records, for reuse
	byKey    keyTable // live records by key
	// The payload index (payload.go): the live records of each tenant,
	// of each source of a tenant, and of each document.
	byTenant map[uint32]*idSet
	bySource map[srcKey]*idSet
	byDoc    map[docKey]*idSet
	nLive    int
	// exactLimit, when non-zero, replaces the planner's crossover (tests:
	// -1 always searches the index, a large value always scores exactly).
	exactLimit int
	// noWide, set by tests and benchmarks, turns off denseWide's plan.
	noWide bool
	disk   *disk // nil when in memory
	// cow is the compaction under way, which writers feed (preserve).
	cow    *cowState
	compMu sync.Mutex // one compaction at a time
	spare  recSpare   // the record table made ahead (reserve)
	// The background compaction: its context, cancelled by Close, and
	// the error of the last one, which the next write returns.
	bgCtx    context.Context
	bgCancel context.CancelFunc
	bgMu     sync.Mutex
	bgErr    error
	// refreshMu serialises Refresh calls of a read-only Store.
	refreshMu sync.Mutex
	// skipDense: a load leaves the dense index empty, to adopt the one
	// saved in the directory (dense.go); denseOnDisk: that file indexes
	// the store as it is, so Close need not write it again.
	skipDense   bool
	denseOnDisk bool
	// denseSum and denseHead name the dense index file on disk, for the
	// records file written beside it: its key table's checksum and the
	// length of its head.
	denseSum  uint32
	denseHead int64
	// skipSparse and sparseOnDisk are the same for the keyword index
	// (sparse.go).
	skipSparse   bool
	sparseOnDisk bool
	// recordsOnDisk: the records file (records.go) holds the store as it
	// is. unchecked is what an open that adopted it left unread, for the
	// background check Open starts (scrub); scrubbing, scrubDone and
	// scrubbed (under bgMu) are that check's state, for Verified, and
	// scrubFiles says it checks the snapshot and the log (the open
	// adopted the records file).
	recordsOnDisk bool
	unchecked     *scrubPlan
	scrubbing     bool
	scrubFiles    bool
	scrubDone     bool
	scrubbed      error
	scrubEnd      chan struct{} // closed when the check's goroutine ends (Close waits)
	// vecFile is the dense index file that vec reads the float32 vectors
	// it left on disk from (vector.ReadIndexAt); nil when vec holds them.
	vecFile *os.File
}

var (
	_ retrieval.Store  = (*Store)(nil)
	_ retrieval.Lister = (*Store)(nil)
)

// Open opens the store described by o, loading and replaying Dir when set.
//
// A writable open takes Dir for itself (ErrLocked if another Store has
// it), creates the store when Dir holds none, and cuts off a torn last
// record left by a crash. A read-only open takes no lock and changes no
// file. Damaged or inconsistent files make Open fail with a
// *CorruptError (matching retrieval.ErrCorrupt) that names the file and
// the offset; nothing is repaired silently (see Repair).
func Open(ctx context.Context, o Options) (*Store, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("memstore: open: %w", err)
	}
	if o.Dim < 0 {
		return nil, fmt.Errorf("memstore: open: %w: negative dimension %d", retrieval.ErrInvalid, o.Dim)
	}
	if o.CompactBytes == 0 {
		o.CompactBytes = DefaultCompactBytes
	}
	if o.Dir == "" {
		s := newStore(o)
		if o.Dim > 0 {
			s.setDim(o.Dim)
		}
		return s, nil
	}
	var (
		s   *Store
		err error
	)
	if o.ReadOnly {
		s, err = loadReader(ctx, o)
	} else {
		s = newStore(o)
		s.disk, err = openWriter(ctx, o.Dir, s, !o.NoSync)
	}
	if err != nil {
		if s != nil {
			s.releaseVec()
		}
		return nil, fmt.Errorf("memstore: open %s: %w", o.Dir, err)
	}
	// The dimension comes from the stored data; Options.Dim must agree.
	if o.Dim > 0 {
		if s.dim == 0 {
			s.setDim(o.Dim)
		} else if s.dim != o.Dim {
			s.releaseVec()
			s.disk.closeFiles()
			return nil, fmt.Errorf("memstore: open %s: %w: the store holds %d-dimensional vectors, options say %d", o.Dir, retrieval.ErrDimension, s.dim, o.Dim)
		}
	}
	if p := s.unchecked; !o.ReadOnly && (p != nil || s.vec != nil && s.vec.CopiesUnchecked() || s.lex.Unchecked()) {
		s.unchecked = nil
		s.scrub(p)
	}
	return s, nil
}

func newStore(o Options) *Store {
	ctx, cancel := context.WithCancel(context.Background())
	return &Store{
		bgCtx: ctx, bgCancel: cancel,
		opts:     o,
		lex:      bm25.New(o.BM25),
		byKey:    newKeyTable(0),
		tenants:  make(map[string]uint32),
		byDoc:    make(map[docKey]*idSet),
		byTenant: make(map[uint32]*idSet),
		bySource: make(map[srcKey]*idSet),
	}
}

// resetState empties s for a fresh load of its directory.
func (s *Store) resetState() {
	fresh := newStore(s.opts)
	fresh.bgCancel()
	s.releaseVec()
	s.dim, s.vec, s.lex, s.recs, s.tenantOf = 0, nil, fresh.lex, nil, nil
	s.tenants, s.free, s.byKey = fresh.tenants, nil, fresh.byKey
	s.byTenant, s.bySource, s.byDoc, s.nLive = fresh.byTenant, fresh.bySource, fresh.byDoc, 0
	s.denseOnDisk, s.sparseOnDisk, s.recordsOnDisk, s.unchecked = false, false, false, nil
}

func (s *Store) setDim(dim int) {
	s.dim = dim
	s.vec = vector.New(dim, s.opts.Vector)
}

// Dim returns the dense dimension, 0 while the store is empty and none was
// configured.
func (s *Store) Dim() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.dim
}

// Len returns the number of chunks in the store, all tenants together.
func (s *Store) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.nLive
}

// Close flushes and releases the directory. Later calls return ErrClosed.
func (s *Store) Close() error {
	s.bgCancel() // a background compaction stops at its next piece
	if s.scrubEnd != nil {
		// So does the background check; it is waited for, so that
		// nothing of the store runs on after Close.
		<-s.scrubEnd
	}
	s.compMu.Lock()
	defer s.compMu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	s.closed = true
	if s.disk != nil {
		// The index files save the next open their rebuild; failing to
		// save them loses nothing (that open builds them).
		s.writeIndexes()
		s.releaseVec()
		if err := s.disk.close(); err != nil {
			return fmt.Errorf("memstore: close: %w", err)
		}
	}
	return nil
}

// Upsert inserts or replaces chunks by (Tenant, ID). The batch is checked
// whole before anything is written: a chunk without ID is ErrInvalid, a
// vector of the wrong length ErrDimension, and then nothing is stored.
func (s *Store) Upsert(ctx context.Context, chunks []retrieval.Chunk) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("memstore: upsert: %w", err)
	}
	if len(chunks) == 0 {
		return nil
	}
	s.reserve(len(chunks))
	s.mu.Lock()
	err := s.upsertLocked(ctx, chunks)
	s.mu.Unlock()
	if err != nil {
		return fmt.Errorf("memstore: upsert: %w", err)
	}
	return s.maybeCompact(ctx)
}

func (s *Store) upsertLocked(ctx context.Context, chunks []retrieval.Chunk) error {
	if err := s.writable(); err != nil {
		return err
	}
	if err := s.validate(chunks); err != nil {
		return err
	}
	// Checked again under the lock: a cancelled write is not logged.
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.disk != nil {
		if err := s.dropDense(); err != nil {
			return err
		}
	}
	return s.logThen(func() []byte { return encodeUpsert(chunks) }, func() { s.applyUpsert(chunks) })
}

// logThen logs the record that rec encodes, then applies it by apply; the
// caller holds the write lock. The log's fsync runs while apply feeds the
// indexes (each about 10 to 20 ms of a 1,000-chunk batch at a million
// chunks), and the lock keeps every search out until both are done, so
// none sees a write before it is durable. A failed log write applies
// nothing. A failed fsync returns its error with the write applied in
// memory and its durability unknown, as it always was (the record may
// yet reach the disk); the store then refuses writes until it is reopened,
// and the reopen shows whether the write landed.
func (s *Store) logThen(rec func() []byte, apply func()) error {
	if s.disk == nil {
		apply()
		return nil
	}
	n, err := s.disk.write(rec())
	if err != nil {
		return err
	}
	if !s.disk.sync {
		apply()
		return s.disk.commit(n)
	}
	synced := make(chan error, 1)
	go func() { synced <- s.disk.commit(n) }()
	apply()
	return <-synced
}

// writable reports why the store cannot be written, if it cannot.
func (s *Store) writable() error {
	if s.closed {
		return ErrClosed
	}
	if s.opts.ReadOnly {
		return ErrReadOnly
	}
	return nil
}

// validate checks a non-empty batch against the store's dimension before
// anything is written.
func (s *Store) validate(chunks []retrieval.Chunk) error {
	dim := s.dim
	if dim == 0 {
		dim = len(chunks[0].Vector)
	}
	for i := range chunks {
		c := &chunks[i]
		if c.ID == "" {
			return fmt.Errorf("%w: chunk %d has no ID", retrieval.ErrInvalid, i)
		}
		if len(c.Vector) == 0 {
			return fmt.Errorf("%w: chunk %q has no vector", retrieval.ErrInvalid, c.ID)
		}
		if len(c.Vector) != dim {
			return fmt.Errorf("%w: chunk %q has %d dimensions, want %d", retrieval.ErrDimension, c.ID, len(c.Vector), dim)
		}
		var sq float32
		for _, x := range c.Vector {
			sq += x * x
		}
		if sq == 0 || sq != sq || sq > 1e38 {
			return fmt.Errorf("%w: chunk %q has a zero or non-finite vector", retrieval.ErrInvalid, c.ID)
		}
	}
	return nil
}

// checkLoaded validates chunks read from disk against the store's dimension.
func (s *Store) checkLoaded(chunks []retrieval.Chunk) error {
	for i := range chunks {
		c := &chunks[i]
		want := s.dim
		if want == 0 {
			want = len(chunks[0].Vector)
		}
		if c.ID == "" || len(c.Vector) == 0 {
			return errors.New("chunk without id or vector")
		}
		if len(c.Vector) != want {
			return fmt.Errorf("%w: stored chunk %q has %d dimensions, want %d", retrieval.ErrDimension, c.ID, len(c.Vector), want)
		}
		if s.skipDense {
			// The vectors of a load that adopts dense.idx are dropped
			// unread (the index holds its own); a failed adoption loads
			// again, checking them.
			continue
		}
		var sq float32
		for _, x := range c.Vector {
			sq += x * x
		}
		if sq == 0 || sq != sq || sq > 1e38 {
			return fmt.Errorf("stored chunk %q has a zero or non-finite vector", c.ID)
		}
	}
	return nil
}

// applyOp applies a record read from the log.
func (s *Store) applyOp(o logOp) error {
	switch o.op {
	case opDelete:
		s.applyDelete(o.tenant, o.docID)
		return nil
	case opReplace:
		for i := range o.chunks {
			if c := &o.chunks[i]; c.DocID != o.docID || c.Tenant != o.tenant {
				return fmt.Errorf("replacement of document %q of tenant %q holds chunk %q of document %q of tenant %q", o.docID, o.tenant, c.ID, c.DocID, c.Tenant)
			}
		}
	}
	if err := s.checkLoaded(o.chunks); err != nil {
		return err
	}
	if o.op == opReplace {
		s.applyDelete(o.tenant, o.docID)
	}
	if len(o.chunks) > 0 {
		s.applyUpsert(o.chunks)
	}
	return nil
}

// parallelBatch is the batch size from which applyUpsert feeds the dense
// and the sparse index from two goroutines: both are independent, and
// loading a snapshot is bound by building them.
const parallelBatch = 256

// applyUpsert changes the in-memory state; the batch is already valid.
func (s *Store) applyUpsert(chunks []retrieval.Chunk) { s.apply(chunks, false) }

// applyLoaded is applyUpsert for chunks a load decoded, which the store
// may keep as they are (their metadata is not shared with a caller) and
// whose keys are expected to be new (a snapshot holds each key once).
func (s *Store) applyLoaded(chunks []retrieval.Chunk) { s.apply(chunks, true) }

func (s *Store) apply(chunks []retrieval.Chunk, loaded bool) {
	if s.dim == 0 {
		s.setDim(len(chunks[0].Vector))
	}
	iids := make([]uint32, len(chunks))
	// Consecutive chunks nearly always share their tenant, source and
	// document: the last ones looked up are kept for the batch.
	var lc linkCache
	var tc tenantCache
	for i := range chunks {
		c := chunks[i]
		if !loaded {
			c.Meta = maps.Clone(c.Meta)
		}
		c.Vector = nil
		k := key{c.Tenant, c.ID}
		iid, ok := s.claim(k)
		if ok {
			s.preserve(iid)
			s.unlink(iid, s.tenantOf[iid], &s.recs[iid])
			lc = linkCache{} // unlink may have dropped a cached list
		} else {
			s.nLive++
		}
		iids[i] = iid
		s.recs[iid] = record{Chunk: c, live: true}
		s.linkRecord(&tc, &lc, iid)
	}
	// A chunk repeated within the batch is indexed in batch order either
	// way, since each index sees the whole batch in order.
	dense := func() {
		if s.skipDense {
			return
		}
		vs := make([][]float32, len(chunks))
		for i := range chunks {
			vs[i] = chunks[i].Vector
		}
		_ = s.vec.AddBatch(iids, vs) // validated, cannot fail
	}
	sparse := func() {
		if s.skipSparse {
			return
		}
		for i := range chunks {
			s.lex.Add(iids[i], lexText(&chunks[i]))
		}
	}
	if len(chunks) < parallelBatch {
		dense()
		sparse()
		return
	}
	var wg sync.WaitGroup
	wg.Go(sparse)
	dense()
	wg.Wait()
}

// claim returns the internal id of key k, and whether it had one already;
// a new key is given one (a freed id, or a new one past the last), its
// record slot made.
func (s *Store) claim(k key) (uint32, bool) {
	next, fromFree := uint32(len(s.recs)), len(s.free) > 0
	if fromFree {
		next = s.free[len(s.free)-1]
	}
	if iid, ok := s.byKey.claim(s.recs, k.tenant, k.id, next); ok {
		return iid, true
	}
	if fromFree {
		s.free = s.free[:len(s.free)-1]
		s.preserve(next)
	} else {
		s.recs = append(s.recs, record{})
		s.tenantOf = append(s.tenantOf, noTenant)
	}
	return next, false
}

// grow sizes the per-record slices and maps for count more records (the
// count of a snapshot about to load, of bytes bytes on disk), so that
// loading does not copy them over and over as they double; a count the
// file cannot hold (a damaged header) is capped by its size.
func (s *Store) grow(count uint64, bytes int64) {
	n := int(min(count, uint64(max(bytes, 0))/16, 1<<28))
	s.recs = slices.Grow(s.recs, n)
	s.tenantOf = slices.Grow(s.tenantOf, n)
	s.byKey.grow(s.byKey.len() + n)
	// An index about to be adopted from its file is not sized: it is
	// replaced whole.
	if !s.skipSparse {
		s.lex.Grow(n)
	}
	if s.vec != nil && !s.skipDense {
		s.vec.Grow(n)
	}
}

// lexText is what BM25 indexes: the title, then the text.
func lexText(c *retrieval.Chunk) string {
	if c.Title == "" {
		return c.Text
	}
	return c.Title + "\n" + c.Text
}

// DeleteDocument removes every chunk of docID within scope. Deleting a
// document that has no chunks is not an error.
func (s *Store) DeleteDocument(ctx context.Context, scope retrieval.Scope, docID string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("memstore: delete: %w", err)
	}
	if docID == "" {
		return fmt.Errorf("memstore: delete: %w: empty document id", retrieval.ErrInvalid)
	}
	s.mu.Lock()
	err := s.deleteLocked(ctx, scope.Tenant, docID)
	s.mu.Unlock()
	if err != nil {
		return fmt.Errorf("memstore: delete: %w", err)
	}
	return s.maybeCompact(ctx)
}

// ReplaceDocument replaces every chunk of docID within scope by chunks, as
// one log record applied under one write lock: concurrent searches see the
// old version or the new one, never a mix or nothing, and after a crash
// the store holds one of the two. The batch is checked whole first: every
// chunk must carry docID and the scope's tenant (retrieval.ErrInvalid
// otherwise), and the checks of Upsert apply. With no chunks it deletes
// the document.
func (s *Store) ReplaceDocument(ctx context.Context, scope retrieval.Scope, docID string, chunks []retrieval.Chunk) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("memstore: replace: %w", err)
	}
	if docID == "" {
		return fmt.Errorf("memstore: replace: %w: empty document id", retrieval.ErrInvalid)
	}
	for i := range chunks {
		if chunks[i].DocID != docID || chunks[i].Tenant != scope.Tenant {
			return fmt.Errorf("memstore: replace: %w: chunk %d belongs to document %q of tenant %q, not %q of tenant %q",
				retrieval.ErrInvalid, i, chunks[i].DocID, chunks[i].Tenant, docID, scope.Tenant)
		}
	}
	s.reserve(len(chunks))
	s.mu.Lock()
	var err error
	if len(chunks) == 0 {
		err = s.deleteLocked(ctx, scope.Tenant, docID)
	} else {
		err = s.replaceLocked(ctx, scope.Tenant, docID, chunks)
	}
	s.mu.Unlock()
	if err != nil {
		return fmt.Errorf("memstore: replace: %w", err)
	}
	return s.maybeCompact(ctx)
}

func (s *Store) replaceLocked(ctx context.Context, tenant, docID string, chunks []retrieval.Chunk) error {
	if err := s.writable(); err != nil {
		return err
	}
	if err := s.validate(chunks); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.disk != nil {
		if err := s.dropDense(); err != nil {
			return err
		}
	}
	return s.logThen(func() []byte { return encodeReplace(tenant, docID, chunks) }, func() {
		s.applyDelete(tenant, docID)
		s.applyUpsert(chunks)
	})
}

// Documents implements retrieval.Lister.
func (s *Store) Documents(ctx context.Context, scope retrieval.Scope) ([]retrieval.DocInfo, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("memstore: documents: %w", err)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, fmt.Errorf("memstore: documents: %w", ErrClosed)
	}
	var out []retrieval.DocInfo
	for dk, iids := range s.byDoc {
		if dk.tenant != scope.Tenant || iids.len() == 0 {
			continue
		}
		// The document's first chunk (lowest Position, then ID) speaks
		// for it.
		var first *retrieval.Chunk
		iids.each(func(iid uint32) {
			c := &s.recs[iid].Chunk
			if first == nil || c.Position < first.Position || c.Position == first.Position && c.ID < first.ID {
				first = c
			}
		})
		out = append(out, docInfo(first, iids.len()))
	}
	slices.SortFunc(out, func(a, b retrieval.DocInfo) int {
		return cmp.Or(cmp.Compare(a.Origin, b.Origin), cmp.Compare(a.DocID, b.DocID))
	})
	return out, nil
}

// docInfo describes a document of n chunks by its first chunk.
func docInfo(c *retrieval.Chunk, n int) retrieval.DocInfo {
	info := retrieval.DocInfo{
		DocID: c.DocID, Origin: c.Meta[retrieval.MetaOrigin], Source: c.Source, Title: c.Title,
		ContentType: c.ContentType, Chunks: n, Hash: c.Meta[retrieval.MetaContentHash],
	}
	if t, err := time.Parse(time.RFC3339, c.Meta[retrieval.MetaIngestedAt]); err == nil {
		info.IngestedAt = t
	}
	return info
}

func (s *Store) deleteLocked(ctx context.Context, tenant, docID string) error {
	if err := s.writable(); err != nil {
		return err
	}
	if s.byDoc[docKey{tenant, docID}].len() == 0 {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.disk != nil {
		if err := s.dropDense(); err != nil {
			return err
		}
	}
	return s.logThen(func() []byte { return encodeDelete(tenant, docID) }, func() { s.applyDelete(tenant, docID) })
}

func (s *Store) applyDelete(tenant, docID string) {
	for _, iid := range s.byDoc[docKey{tenant, docID}].appendTo(nil) {
		s.preserve(iid)
		r := &s.recs[iid]
		s.byKey.del(s.recs, r.Tenant, r.ID)
		s.unlink(iid, s.tenantOf[iid], r)
		*r = record{}
		s.tenantOf[iid] = noTenant
		s.vec.Remove(iid)
		s.lex.Remove(iid)
		s.free = append(s.free, iid)
		s.nLive--
	}
}

// Compact writes a snapshot of the store to its directory and starts a new
// log holding only what was written while it ran. It does nothing for an
// in-memory store. Searches and writes go on while it runs (see
// disk.compact); it waits for a background compaction under way first.
func (s *Store) Compact(ctx context.Context) error {
	s.compMu.Lock()
	defer s.compMu.Unlock()
	if err := s.compactLocked(ctx); err != nil {
		return fmt.Errorf("memstore: compact: %w", err)
	}
	return nil
}

// compactLocked compacts; the caller holds s.compMu.
func (s *Store) compactLocked(ctx context.Context) error {
	s.mu.RLock()
	closed, d := s.closed, s.disk
	s.mu.RUnlock()
	switch {
	case closed:
		return ErrClosed
	case s.opts.ReadOnly:
		return ErrReadOnly
	case d == nil:
		return nil
	}
	return d.compact(ctx, s)
}

// maybeCompact starts a compaction in the background when the log has
// grown past compactAt and none is running, so that no write waits for
// one. A failed compaction leaves the log in place, so every write stays
// durable; its error is returned by the next write that gets here, so
// that the caller learns of a sick disk.
func (s *Store) maybeCompact(context.Context) error {
	if s.disk == nil || s.opts.CompactBytes < 0 || s.opts.ReadOnly {
		return nil
	}
	s.bgMu.Lock()
	err := s.bgErr
	s.bgErr = nil
	s.bgMu.Unlock()
	if err != nil {
		return fmt.Errorf("memstore: compact: %w", err)
	}
	s.mu.RLock()
	big := !s.closed && s.disk.logSize() > s.compactAt()
	s.mu.RUnlock()
	if !big || !s.compMu.TryLock() {
		return nil
	}
	go func() {
		defer s.compMu.Unlock()
		if err := s.compactLocked(s.bgCtx); err != nil && s.bgCtx.Err() == nil {
			s.bgMu.Lock()
			s.bgErr = err
			s.bgMu.Unlock()
		}
	}()
	return nil
}

// waitCompaction waits for a background compaction under way (tests).
func (s *Store) waitCompaction() {
	s.compMu.Lock()
	defer s.compMu.Unlock()
}

// hit is the hit of record iid. Its Meta is the store's own map: the
// search that made it hands it out only through ownMeta, under the read
// lock.
func (s *Store) hit(iid uint32, score float64, method retrieval.Method) retrieval.Hit {
	return retrieval.Hit{Chunk: s.recs[iid].Chunk, Score: score, Method: method}
}

// ownMeta gives each hit a copy of its metadata map, so that a caller may
// change it without changing the store; it runs before the read lock is
// released.
func ownMeta(hits []retrieval.Hit) []retrieval.Hit {
	for i := range hits {
		hits[i].Chunk.Meta = maps.Clone(hits[i].Chunk.Meta)
	}
	return hits
}

// SearchDense returns the K chunks of the scope nearest to req.Vector by
// cosine, best first.
func (s *Store) SearchDense(ctx context.Context, req retrieval.Request) ([]retrieval.Hit, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("memstore: dense search: %w", err)
	}
	if req.K <= 0 {
		return nil, fmt.Errorf("memstore: dense search: %w: K = %d", retrieval.ErrInvalid, req.K)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	hits, err := s.denseLocked(ctx, &req, req.K)
	if err != nil {
		return nil, fmt.Errorf("memstore: dense search: %w", err)
	}
	return ownMeta(hits), nil
}

func (s *Store) denseLocked(ctx context.Context, req *retrieval.Request, k int) ([]retrieval.Hit, error) {
	if s.closed {
		return nil, ErrClosed
	}
	if s.dim == 0 {
		return nil, nil // nothing stored yet, so nothing to compare against
	}
	if len(req.Vector) != s.dim {
		return nil, fmt.Errorf("%w: query has %d dimensions, want %d", retrieval.ErrDimension, len(req.Vector), s.dim)
	}
	m := s.newMatcher(ctx, req)
	if m == nil {
		return nil, nil
	}
	var res []vector.Scored
	if ids, ok := m.small(s.limit(denseExactLimit(k, s.vec.Len()))); ok {
		res = s.denseAmong(req.Vector, k, ids)
	} else if wide, ok := s.denseWide(m, req.Vector, k); ok {
		res = wide
	} else {
		res = s.vec.Search(req.Vector, k, m.accept)
	}
	if m.err != nil {
		return nil, m.err
	}
	if err := s.vec.Damage(); err != nil {
		// A vector read neither from its int8 copy nor from its original:
		// its score was wrong, so no dense answer is trusted (see Verified).
		return nil, fmt.Errorf("%w: %s: %w", retrieval.ErrCorrupt, denseName, err)
	}
	if len(res) == 0 {
		return nil, nil
	}
	hits := make([]retrieval.Hit, len(res))
	for i, r := range res {
		hits[i] = s.hit(r.ID, float64(r.Score), retrieval.MethodDense)
	}
	return hits, nil
}

// SearchSparse returns the K chunks of the scope that best match req.Text
// by BM25, best first. Chunks that share no term with the query are not
// returned.
func (s *Store) SearchSparse(ctx context.Context, req retrieval.Request) ([]retrieval.Hit, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("memstore: sparse search: %w", err)
	}
	if req.K <= 0 {
		return nil, fmt.Errorf("memstore: sparse search: %w: K = %d", retrieval.ErrInvalid, req.K)
	}
	if req.Text == "" {
		return nil, fmt.Errorf("memstore: sparse search: %w: empty query text", retrieval.ErrInvalid)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	hits, err := s.sparseLocked(ctx, &req, req.K)
	if err != nil {
		return nil, fmt.Errorf("memstore: sparse search: %w", err)
	}
	return ownMeta(hits), nil
}

func (s *Store) sparseLocked(ctx context.Context, req *retrieval.Request, k int) ([]retrieval.Hit, error) {
	if s.closed {
		return nil, ErrClosed
	}
	m := s.newMatcher(ctx, req)
	if m == nil {
		return nil, nil
	}
	var res []bm25.Scored
	if ids, ok := m.small(s.limit(sparseExactLimit(k, s.lex.Len()))); ok {
		res = s.lex.SearchAmong(req.Text, k, ids)
	} else {
		res = s.lex.Search(req.Text, k, m.accept)
	}
	if m.err != nil {
		return nil, m.err
	}
	if len(res) == 0 {
		return nil, nil
	}
	hits := make([]retrieval.Hit, len(res))
	for i, r := range res {
		hits[i] = s.hit(r.ID, r.Score, retrieval.MethodBM25)
	}
	return hits, nil
}

// SearchHybrid runs a dense and a sparse leg of req.Candidates hits each
// (concurrently), fuses them by reciprocal-rank fusion with req.RRFK,
// weighing the legs by req.DenseWeight and req.SparseWeight, and returns
// the best K. An empty req.Text leaves only the dense leg.
func (s *Store) SearchHybrid(ctx context.Context, req retrieval.Request) ([]retrieval.Hit, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("memstore: hybrid search: %w", err)
	}
	if req.K <= 0 {
		return nil, fmt.Errorf("memstore: hybrid search: %w: K = %d", retrieval.ErrInvalid, req.K)
	}
	cand := req.Candidates
	if cand <= 0 {
		cand = retrieval.DefaultCandidates
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.dim != 0 && len(req.Vector) != s.dim {
		return nil, fmt.Errorf("memstore: hybrid search: %w: query has %d dimensions, want %d", retrieval.ErrDimension, len(req.Vector), s.dim)
	}
	var (
		sparse    []retrieval.Hit
		sparseErr error
		wg        sync.WaitGroup
	)
	if req.Text != "" {
		// The sparse leg runs beside the dense one under the same read
		// lock, which is held until both are done.
		wg.Go(func() { sparse, sparseErr = s.sparseLocked(ctx, &req, cand) })
	}
	dense, denseErr := s.denseLocked(ctx, &req, cand)
	wg.Wait()
	if err := errors.Join(denseErr, sparseErr); err != nil {
		return nil, fmt.Errorf("memstore: hybrid search: %w", err)
	}
	fused := retrieval.FuseWeightedRRF(req.RRFK, []float64{req.DenseWeight, req.SparseWeight}, dense, sparse)
	if len(fused) == 0 {
		return nil, nil
	}
	// Only the hits returned get maps of their own: the legs' other
	// candidates (about half of them) never leave the store.
	return ownMeta(fused[:min(req.K, len(fused))]), nil
}
