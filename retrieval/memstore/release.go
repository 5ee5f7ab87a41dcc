package memstore

import (
	"context"
	"os"
	"time"
)

// Freeing a replaced file. Closing the last reference to an unlinked
// gigabyte file (the snapshot or log a compaction replaced) frees all of
// its blocks in one go, and on ext4 a writer's log fsync meanwhile waits
// for that: freeing 1 GiB at once (the filesystem is mounted with
// discard) held a 2 MB write+fsync beside it 175-346 ms, freeing it
// 16 MiB at a time with a 5 or 20 ms pause between at most 21 ms (ad hoc
// experiment, not kept in the tree; `adaptrag bench retrieval` reports
// the longest write). The freed blocks are discarded when the journal
// commits, which a writer's fsync waits for: in the 1M bench, where a
// write fsyncs every 60 ms or so, a 5 ms pause let about ten steps pile
// up in one commit and one fsync took 176 ms; at 50 ms one or two do.
const (
	// releaseStep is how much of a replaced file one truncation frees.
	releaseStep = 16 << 20
	// releasePause is the pause between two truncations, which lets a
	// writer's fsync (and its commit) get in between.
	releasePause = 50 * time.Millisecond
)

// releaseFile frees f, a file that was at path and has been replaced
// there (renamed over), a step bytes at a time from its end with a pause
// between, and closes it. A reader that still has the file open sees it
// shrink, which it handles as it handles any read that looks
// inconsistent: it loads again (see loadReader), from the files now in
// place; a reader's Refresh opens the log by name, so never the replaced
// one. If f is still the file at path (nothing replaced it, which a
// caller never intends) or ctx ends, f is only closed. The error is the
// close's: a failed truncation only means the rest is freed at once.
func releaseFile(ctx context.Context, f *os.File, path string, step int64) error {
	if f == nil {
		return nil
	}
	st, err := f.Stat()
	if err != nil || step <= 0 {
		return f.Close()
	}
	if cur, err := os.Stat(path); err == nil && os.SameFile(st, cur) {
		return f.Close()
	}
	for size := st.Size(); size > step; {
		size -= step
		if err := f.Truncate(size); err != nil {
			break
		}
		select {
		case <-ctx.Done():
			return f.Close()
		case <-time.After(releasePause):
		}
	}
	return f.Close()
}
