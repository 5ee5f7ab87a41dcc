package workload

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// ErrCorpus reports a corpus directory that cannot be read as a retrieval
// set (corpus.jsonl and queries.jsonl, one JSON object a line).
var ErrCorpus = errors.New("workload: bad corpus")

// Corpus is a real-text workload: n chunk texts made from a public
// retrieval set's documents and NumQueries of its questions. The texts are
// embedded by the caller (the offline embedder, or any other).
type Corpus struct {
	// Docs are the chunk texts, Title the title of the document each one
	// came from (the first document of a pair).
	Docs, Title []string
	// Queries are questions of the set, spread evenly over its file.
	Queries []string
	// Unique is how many texts the set itself gives (its documents, then
	// the windows of consecutive sentences inside them) before pairs of
	// windows are needed to reach n.
	Unique int
}

// corpusLine is one line of corpus.jsonl or queries.jsonl (BEIR layout).
type corpusLine struct {
	ID    string `json:"_id"`
	Title string `json:"title"`
	Text  string `json:"text"`
}

// readLines reads the JSON lines of path.
func readLines(path string) ([]corpusLine, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorpus, err)
	}
	defer f.Close()
	var out []corpusLine
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for line := 1; sc.Scan(); line++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var l corpusLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return nil, fmt.Errorf("%w: %s line %d: %w", ErrCorpus, path, line, err)
		}
		if strings.TrimSpace(l.Text) != "" {
			out = append(out, l)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrCorpus, path, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: %s holds no texts", ErrCorpus, path)
	}
	return out, nil
}

// Sentences splits text after '.', '!' or '?' followed by a space, and
// after '。', '！' or '？', dropping empty pieces. It is a plain splitter,
// good enough to cut paragraphs into windows, not a linguistic one.
func Sentences(text string) []string {
	var out []string
	start := 0
	for i, r := range text {
		end := -1
		switch r {
		case '.', '!', '?':
			if next := i + 1; next < len(text) && text[next] == ' ' {
				end = next
			}
		case '。', '！', '？':
			end = i + utf8.RuneLen(r)
		}
		if end > start {
			if s := strings.TrimSpace(text[start:end]); s != "" {
				out = append(out, s)
			}
			start = end
		}
	}
	if s := strings.TrimSpace(text[start:]); s != "" {
		out = append(out, s)
	}
	return out
}

// joiner returns the separator of two pieces of text: none between CJK
// sentences, a space otherwise.
func joiner(a string) string {
	r, _ := utf8.DecodeLastRuneInString(a)
	if r >= 0x3000 {
		return ""
	}
	return " "
}

// LoadCorpus reads the retrieval set in dir (corpus.jsonl with _id,
// title and text; queries.jsonl with _id and text) and makes n chunk
// texts from it, deterministically:
//
//  1. every document as it is, in file order;
//  2. every window of 1 to 3 consecutive sentences of a document that is
//     not already a text, document by document;
//  3. when n is larger still, pairs of such windows drawn from PCG(11, 12),
//     the second from the same title three times in four, each pair once.
//
// A public set has a few hundred documents, so at 100,000 chunks most
// texts are pairs: real sentences, recombined, whose vectors keep the
// topical structure of the set. The queries are NumQueries questions
// spread evenly over queries.jsonl (all of them when it has fewer).
func LoadCorpus(dir string, n int) (Corpus, error) {
	docs, err := readLines(filepath.Join(dir, "corpus.jsonl"))
	if err != nil {
		return Corpus{}, err
	}
	qs, err := readLines(filepath.Join(dir, "queries.jsonl"))
	if err != nil {
		return Corpus{}, err
	}
	n = max(n, 0)
	c := Corpus{Docs: make([]string, 0, n), Title: make([]string, 0, n)}
	seen := make(map[string]bool, n)
	add := func(text, title string) {
		if len(c.Docs) < n && !seen[text] {
			seen[text] = true
			c.Docs = append(c.Docs, text)
			c.Title = append(c.Title, title)
		}
	}
	type window struct{ text, title string }
	var windows []window
	byTitle := map[string][]int{}
	base := map[string]bool{}
	for _, d := range docs {
		base[d.Text] = true
		add(d.Text, d.Title)
	}
	for _, d := range docs {
		ss := Sentences(d.Text)
		for size := 1; size <= 3; size++ {
			for i := 0; i+size <= len(ss); i++ {
				var b strings.Builder
				for j, s := range ss[i : i+size] {
					if j > 0 {
						b.WriteString(joiner(ss[i+j-1]))
					}
					b.WriteString(s)
				}
				w := window{b.String(), d.Title}
				byTitle[w.title] = append(byTitle[w.title], len(windows))
				windows = append(windows, w)
				base[w.text] = true
				add(w.text, w.title)
			}
		}
	}
	c.Unique = len(base)
	r := rand.New(rand.NewPCG(11, 12))
	pairs := map[[2]int]bool{}
	// Each draw is a new pair unless the pairs are nearly exhausted; the
	// bound on misses keeps a tiny set from looping forever.
	for misses := 0; len(c.Docs) < n && misses < 1000; {
		a := r.IntN(len(windows))
		b := r.IntN(len(windows))
		if same := byTitle[windows[a].title]; r.IntN(4) != 0 && len(same) > 1 {
			b = same[r.IntN(len(same))]
		}
		if a == b || pairs[[2]int{a, b}] {
			misses++
			continue
		}
		pairs[[2]int{a, b}] = true
		before := len(c.Docs)
		add(windows[a].text+joiner(windows[a].text)+windows[b].text, windows[a].title)
		if len(c.Docs) == before {
			misses++
		} else {
			misses = 0
		}
	}
	if len(c.Docs) < n {
		return Corpus{}, fmt.Errorf("%w: %s gives only %d distinct texts, fewer than %d", ErrCorpus, dir, len(c.Docs), n)
	}
	m := min(NumQueries, len(qs))
	c.Queries = make([]string, m)
	for i := range c.Queries {
		c.Queries[i] = qs[i*len(qs)/m].Text
	}
	return c, nil
}
