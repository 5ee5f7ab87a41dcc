package ingest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Thresholds of checkText. A text file may hold a few stray bytes of
// another encoding (they become U+FFFD); binary data and text in another
// encoding (UTF-16, GBK) are mostly invalid UTF-8 or control characters.
const (
	maxInvalidShare = 0.10 // share of runes that are not valid UTF-8
	maxControlShare = 0.05 // share of runes that are C0 controls or DEL, other than \t \n \v \f \r
)

// checkText returns an error matching ErrBinary when data does not look
// like UTF-8 text: it holds a NUL byte, more than 10% of it is not valid
// UTF-8, or more than 5% of its characters are control characters (line
// breaks, tabs and form feeds aside).
func checkText(data []byte) error {
	if i := bytes.IndexByte(data, 0); i >= 0 {
		return fmt.Errorf("%w: NUL byte at offset %d", ErrBinary, i)
	}
	var runes, invalid, control int
	for i := 0; i < len(data); {
		r, n := utf8.DecodeRune(data[i:])
		i += n
		runes++
		switch {
		case r == utf8.RuneError && n == 1:
			invalid++
		case r < 0x20 && !strings.ContainsRune("\t\n\v\f\r", r), r == 0x7f:
			control++
		}
	}
	if runes == 0 {
		return nil
	}
	if share := float64(invalid) / float64(runes); share > maxInvalidShare {
		return fmt.Errorf("%w: %.0f%% of the content is not UTF-8 (binary data or another encoding)", ErrBinary, 100*share)
	}
	if share := float64(control) / float64(runes); share > maxControlShare {
		return fmt.Errorf("%w: %d control characters in %d", ErrBinary, control, runes)
	}
	return nil
}

// normalize turns checked file content into the text loaders read: no
// byte-order mark, invalid UTF-8 replaced by U+FFFD, \n line ends.
func normalize(data []byte) string {
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	text := string(data)
	if !utf8.ValidString(text) {
		text = strings.ToValidUTF8(text, "\ufffd")
	}
	text = strings.ReplaceAll(text, "\r\n", "\n")
	return strings.ReplaceAll(text, "\r", "\n")
}

// contentHash is the MetaContentHash of a file: "sha256:" and the hex
// SHA-256 of its bytes as read.
func contentHash(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}
