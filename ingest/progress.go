package ingest

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"unicode/utf8"
)

// NewProgressBar returns an Options.Progress callback that redraws a
// one-line bar on w when w is a terminal (an *os.File on a character
// device) and does nothing otherwise, so that piped or logged output stays
// clean. The line ends when the last file is done. The callback is safe
// for concurrent use.
func NewProgressBar(w io.Writer) func(Progress) {
	f, ok := w.(*os.File)
	if !ok {
		return func(Progress) {}
	}
	st, err := f.Stat()
	if err != nil || st.Mode()&os.ModeCharDevice == 0 {
		return func(Progress) {}
	}
	return newBar(w, 30)
}

// newBar draws a bar of width cells on w unconditionally.
func newBar(w io.Writer, width int) func(Progress) {
	var mu sync.Mutex
	lastLen := 0
	return func(p Progress) {
		if p.FilesTotal <= 0 {
			return // nothing to ingest, nothing to draw
		}
		mu.Lock()
		defer mu.Unlock()
		filled := min(width*p.FilesDone/p.FilesTotal, width)
		name := p.Path
		if utf8.RuneCountInString(name) > 40 {
			r := []rune(name)
			name = "…" + string(r[len(r)-39:])
		}
		line := fmt.Sprintf("\r[%s%s] %d/%d files, %d chunks %s",
			strings.Repeat("#", filled), strings.Repeat(".", width-filled),
			p.FilesDone, p.FilesTotal, p.Chunks, name)
		// Blank out what is left of a longer previous line.
		n := utf8.RuneCountInString(line)
		if pad := lastLen - n; pad > 0 {
			line += strings.Repeat(" ", pad)
		}
		lastLen = n
		if p.FilesDone >= p.FilesTotal {
			line += "\n"
			lastLen = 0
		}
		io.WriteString(w, line)
	}
}
