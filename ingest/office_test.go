package ingest_test

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"context"
	"crypto/md5"
	"crypto/rc4"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/adaptrag/adaptrag/ingest"
	"github.com/adaptrag/adaptrag/retrieval"
)

// pdfOptions shape a PDF written by makePDF.
type pdfOptions struct {
	pages   int    // pages, all showing text
	text    string // the text of every page
	encrypt bool   // a standard security handler with a user password
}

// makePDF writes a small valid PDF by hand: pages sharing one content
// stream, optionally encrypted (RC4, revision 2) with the user password
// "secret", so that it cannot be opened without one.
func makePDF(o pdfOptions) []byte {
	var b bytes.Buffer
	var offs []int
	obj := func(body string) {
		offs = append(offs, b.Len())
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", len(offs), body)
	}
	b.WriteString("%PDF-1.4\n")
	first := 6 // objects 1-5: catalog, pages, content, font, encryption
	var kids strings.Builder
	for i := 0; i < o.pages; i++ {
		fmt.Fprintf(&kids, "%d 0 R ", first+i)
	}
	obj("<< /Type /Catalog /Pages 2 0 R >>")
	obj(fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", kids.String(), o.pages))
	content := fmt.Sprintf("BT /F1 12 Tf 72 720 Td (%s) Tj ET", o.text)
	obj(fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(content), content))
	obj("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
	id := []byte("0123456789abcdef")
	if o.encrypt {
		oKey, uKey := pdfR2Keys("secret", "owner", id, -4)
		obj(fmt.Sprintf("<< /Filter /Standard /V 1 /R 2 /O <%x> /U <%x> /P -4 >>", oKey, uKey))
	} else {
		obj("<< >>")
	}
	for i := 0; i < o.pages; i++ {
		obj("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 3 0 R /Resources << /Font << /F1 4 0 R >> >> >>")
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(offs)+1)
	for _, off := range offs {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	enc := ""
	if o.encrypt {
		enc = "/Encrypt 5 0 R "
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R %s/ID [<%x> <%x>] >>\nstartxref\n%d\n%%%%EOF\n", len(offs)+1, enc, id, id, xref)
	return b.Bytes()
}

// pdfR2Keys computes the O and U entries of a revision 2 standard
// security handler (PDF 1.7, algorithms 3.3 and 3.4).
func pdfR2Keys(user, owner string, id []byte, p int32) (o, u []byte) {
	pad := []byte{0x28, 0xBF, 0x4E, 0x5E, 0x4E, 0x75, 0x8A, 0x41, 0x64, 0x00, 0x4E, 0x56, 0xFF, 0xFA, 0x01, 0x08,
		0x2E, 0x2E, 0x00, 0xB6, 0xD0, 0x68, 0x3E, 0x80, 0x2F, 0x0C, 0xA9, 0xFE, 0x64, 0x53, 0x69, 0x7A}
	padded := func(s string) []byte { return append([]byte(s), pad...)[:32] }
	rc := func(key, data []byte) []byte {
		c, _ := rc4.NewCipher(key)
		out := make([]byte, len(data))
		c.XORKeyStream(out, data)
		return out
	}
	ok := md5.Sum(padded(owner))
	o = rc(ok[:5], padded(user))
	h := md5.New()
	h.Write(padded(user))
	h.Write(o)
	binary.Write(h, binary.LittleEndian, p)
	h.Write(id)
	key := h.Sum(nil)[:5]
	return o, rc(key, pad)
}

// zipFile is one entry of a test archive.
type zipFile struct {
	name, body string
}

// makeZip writes an archive of the entries.
func makeZip(t testing.TB, files ...zipFile) []byte {
	t.Helper()
	var b bytes.Buffer
	w := zip.NewWriter(&b)
	for _, f := range files {
		fw, err := w.Create(f.name)
		if err != nil {
			t.Fatal(err)
		}
		fw.Write([]byte(f.body))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// zipBomb writes a DOCX whose document.xml inflates to n bytes and
// declares declared bytes (n when 0).
func zipBomb(t testing.TB, n, declared int64) []byte {
	t.Helper()
	var b bytes.Buffer
	w := zip.NewWriter(&b)
	var comp bytes.Buffer
	fw, _ := flate.NewWriter(&comp, flate.BestSpeed)
	chunk := bytes.Repeat([]byte("<w:p/>"), 1<<16)
	for written := int64(0); written < n; written += int64(len(chunk)) {
		fw.Write(chunk)
	}
	fw.Close()
	size := uint64(n)
	if declared > 0 {
		size = uint64(declared)
	}
	raw, err := w.CreateRaw(&zip.FileHeader{Name: "word/document.xml", Method: zip.Deflate,
		CompressedSize64: uint64(comp.Len()), UncompressedSize64: size})
	if err != nil {
		t.Fatal(err)
	}
	raw.Write(comp.Bytes())
	w.Close()
	return b.Bytes()
}

func readCorpus(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata/docs", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestDocBadInput feeds the document loaders files that must be refused,
// each with its own error, quickly, and without taking the process down.
func TestDocBadInput(t *testing.T) {
	if _, err := ingest.SharedPDFEngine(); err != nil { // compiled before the clock starts
		t.Fatal(err)
	}
	guide := readCorpus(t, "passenger-guide.pdf")
	handbook := readCorpus(t, "crew-handbook.docx")
	rng := rand.New(rand.NewPCG(1, 2))
	noise := make([]byte, 64<<10)
	for i := range noise {
		noise[i] = byte(rng.UintN(256))
	}
	cases := []struct {
		name string
		data []byte
		o    ingest.DocOptions
		want error
		msg  string
	}{
		{"encrypted.pdf", makePDF(pdfOptions{pages: 1, text: "secret fares", encrypt: true}), ingest.DocOptions{}, ingest.ErrEncrypted, "password"},
		{"noise.pdf", noise, ingest.DocOptions{}, ingest.ErrMalformed, "corrupt or truncated"},
		{"empty.pdf", nil, ingest.DocOptions{}, ingest.ErrMalformed, "not a readable PDF"},
		{"truncated.pdf", guide[:len(guide)/50], ingest.DocOptions{}, ingest.ErrMalformed, ""},
		{"ten-thousand-pages.pdf", makePDF(pdfOptions{pages: 10000, text: "page"}), ingest.DocOptions{}, ingest.ErrDocLimit, "10000 pages, limit 2000"},
		{"three-pages.pdf", makePDF(pdfOptions{pages: 3, text: "page"}), ingest.DocOptions{MaxPages: 2}, ingest.ErrDocLimit, "3 pages, limit 2"},
		{"slow.pdf", guide, ingest.DocOptions{Timeout: time.Millisecond}, ingest.ErrDocLimit, "reading stopped"},
		{"scanned-notice.pdf", readCorpus(t, "scanned-notice.pdf"), ingest.DocOptions{}, ingest.ErrNoTextLayer, "no text layer, OCR not configured"},
		{"encrypted.docx", append([]byte{0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1}, noise[:512]...), ingest.DocOptions{}, ingest.ErrEncrypted, "password-protected"},
		{"noise.docx", noise, ingest.DocOptions{}, ingest.ErrMalformed, "not a zip package"},
		{"truncated.docx", handbook[:len(handbook)/2], ingest.DocOptions{}, ingest.ErrMalformed, ""},
		{"no-body.docx", makeZip(t, zipFile{"word/styles.xml", "<w:styles/>"}), ingest.DocOptions{}, ingest.ErrMalformed, "no word/document.xml"},
		{"bad-xml.docx", makeZip(t, zipFile{"word/document.xml", "<w:document><w:body><w:p>"}), ingest.DocOptions{}, ingest.ErrMalformed, "document.xml"},
		{"deep.docx", makeZip(t, zipFile{"word/document.xml", strings.Repeat("<a>", 5000)}), ingest.DocOptions{}, ingest.ErrMalformed, "nested more than"},
		{"bomb.docx", zipBomb(t, 8<<20, 0), ingest.DocOptions{MaxUnzipped: 1 << 20}, ingest.ErrDocLimit, "declares 8388608 bytes"},
		// An archive that understates the size is stopped by archive/zip at
		// the declared size, before more is inflated.
		{"lying-bomb.docx", zipBomb(t, 8<<20, 100), ingest.DocOptions{MaxUnzipped: 1 << 20}, ingest.ErrMalformed, "not a valid zip"},
		{"default-bomb.docx", zipBomb(t, 1<<20, 300<<20), ingest.DocOptions{}, ingest.ErrDocLimit, "more than the 268435456 left"},
		{"no-slides.pptx", makeZip(t, zipFile{"ppt/presentation.xml", "<p:presentation/>"}), ingest.DocOptions{}, ingest.ErrMalformed, "no slides"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			doc, err := ingest.Parse(c.name, c.data, ingest.Options{Doc: c.o})
			if !errors.Is(err, c.want) {
				t.Fatalf("Parse(%s) = %d blocks, error %v; want %v", c.name, len(doc.Blocks), err, c.want)
			}
			if !strings.Contains(err.Error(), c.msg) {
				t.Errorf("error %q does not say %q", err, c.msg)
			}
			if d := time.Since(start); d > 20*time.Second {
				t.Errorf("refusing took %v", d)
			}
			if c.name == "slow.pdf" && !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("a deadline error should match context.DeadlineExceeded: %v", err)
			}
		})
	}
}

// TestIngestFolderOfDocs ingests a folder of PDF and Word files next to
// bad ones: the good ones are stored with page and heading locators, each
// bad one is reported on its own, and a 200 MB PDF is refused by size
// without being read.
func TestIngestFolderOfDocs(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"passenger-guide.pdf", "timetable.pdf", "crew-handbook.docx", "scanned-notice.pdf"} {
		if err := os.WriteFile(filepath.Join(dir, n), readCorpus(t, n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(dir, "locked.pdf"), makePDF(pdfOptions{pages: 1, text: "x", encrypt: true}), 0o644)
	big, err := os.Create(filepath.Join(dir, "huge.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	if err := big.Truncate(200 << 20); err != nil { // sparse: no disk used
		t.Fatal(err)
	}
	big.Close()
	var chunks []retrieval.Chunk
	store := &captureStore{put: func(cs []retrieval.Chunk) { chunks = append(chunks, cs...) }}
	rep, err := ingest.Ingest(context.Background(), ingest.Target{Docs: store}, []string{dir}, ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Files != 3 {
		t.Errorf("files ingested %d, want 3; errors %v", rep.Files, rep.Errors)
	}
	want := map[string]error{"scanned-notice.pdf": ingest.ErrNoTextLayer, "locked.pdf": ingest.ErrEncrypted, "huge.pdf": ingest.ErrTooLarge}
	for _, fe := range rep.Errors {
		w, ok := want[filepath.Base(fe.Path)]
		if !ok || !errors.Is(fe.Err, w) {
			t.Errorf("unexpected file error %v", &fe)
		}
		delete(want, filepath.Base(fe.Path))
	}
	if len(want) != 0 {
		t.Errorf("not reported: %v", want)
	}
	var pageLoc, headingLoc bool
	for _, c := range chunks {
		if strings.TrimSpace(c.Text) == "" {
			t.Errorf("empty chunk %+v", c.Meta)
		}
		switch c.Meta[retrieval.MetaOrigin] {
		case "passenger-guide.pdf":
			if c.Meta[retrieval.MetaLocator] == "page 2 > Passenger Guide 2026 > Fares > row 3" && strings.Contains(c.Text, "Adult: 280") {
				pageLoc = true
			}
		case "crew-handbook.docx":
			if c.Meta[retrieval.MetaLocator] == "Crew Handbook > Emergencies > Man overboard" {
				headingLoc = true
			}
		}
	}
	if !pageLoc || !headingLoc {
		t.Errorf("page locator found %v, heading locator found %v", pageLoc, headingLoc)
	}
}

// TestPDFConcurrent reads PDFs from several goroutines through one engine
// and gets what a serial read gets.
func TestPDFConcurrent(t *testing.T) {
	names := []string{"passenger-guide.pdf", "timetable.pdf"}
	want := map[string]string{}
	render := func(d ingest.Document) string {
		var b strings.Builder
		for _, bl := range d.Blocks {
			b.WriteString(bl.Locator + "\n" + bl.Text + "\n")
		}
		return b.String()
	}
	for _, n := range names {
		d, err := ingest.Parse(n, readCorpus(t, n), ingest.Options{})
		if err != nil {
			t.Fatal(err)
		}
		want[n] = render(d)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := names[i%2]
			d, err := ingest.Parse(n, readCorpus(t, n), ingest.Options{})
			if err != nil {
				errs <- err
				return
			}
			if render(d) != want[n] {
				errs <- fmt.Errorf("%s: concurrent read differs", n)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestPDFEngineClose: an engine of one's own reads, then refuses once
// closed; Close is idempotent.
func TestPDFEngineClose(t *testing.T) {
	e, err := ingest.NewPDFEngine(context.Background(), ingest.PDFEngineConfig{Instances: 1})
	if err != nil {
		t.Fatal(err)
	}
	o := ingest.Options{Doc: ingest.DocOptions{PDF: e}}
	d, err := ingest.Parse("one.pdf", makePDF(pdfOptions{pages: 1, text: "Ferry notice"}), o)
	if err != nil || len(d.Blocks) != 1 || !strings.Contains(d.Blocks[0].Text, "Ferry notice") {
		t.Fatalf("Parse = %+v, %v", d.Blocks, err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := ingest.Parse("one.pdf", makePDF(pdfOptions{pages: 1, text: "x"}), o); err == nil {
		t.Fatal("a closed engine still reads")
	}
}

// captureStore is a document store that keeps what is written.
type captureStore struct {
	retrieval.Store
	mu  sync.Mutex
	put func([]retrieval.Chunk)
}

func (s *captureStore) ReplaceDocument(_ context.Context, _ retrieval.Scope, _ string, cs []retrieval.Chunk) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.put(cs)
	return nil
}

func (s *captureStore) DeleteDocument(context.Context, retrieval.Scope, string) error { return nil }
func (s *captureStore) Dim() int                                                      { return 0 }
