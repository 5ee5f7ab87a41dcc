package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/adaptrag/adaptrag"
	"github.com/adaptrag/adaptrag/kb"
	"github.com/adaptrag/adaptrag/lookup"
	"github.com/adaptrag/adaptrag/retrieval/embed"
	"github.com/adaptrag/adaptrag/router"
	"github.com/adaptrag/adaptrag/state"
)

// Kinds of knowledge-base cases, in report order.
var kbKinds = []string{"table", "prose", "lookup", "chain", "total", "no_record", "unanswerable"}

// kbCase is one line of a knowledge base's cases.jsonl (described in
// testdata/kbs/README.md).
type kbCase struct {
	ID       string   `json:"id"`
	Kind     string   `json:"kind"`
	Question string   `json:"question"`
	Expect   []string `json:"expect"`
	Cite     string   `json:"cite"`
	Locator  string   `json:"locator"`
	Missing  string   `json:"missing"`
}

// kbOutcome is how the run did on one case.
type kbOutcome struct {
	ID         string           `json:"id"`
	Kind       string           `json:"kind"`
	Correct    bool             `json:"correct"`
	Fact       bool             `json:"fact"`  // every expected fact is in the answer
	Cited      bool             `json:"cited"` // a citation points at the expected row or passage
	AnsweredBy state.AnsweredBy `json:"answered_by"`
	Answer     string           `json:"answer,omitempty"`
	Citations  []string         `json:"citations,omitempty"` // origin · locator
}

// kbTally counts one kind's cases.
type kbTally struct {
	Kind    string `json:"kind"`
	Cases   int    `json:"cases"`
	Correct int    `json:"correct"`
	Fact    int    `json:"fact"`  // fact in the answer, cited or not
	Cited   int    `json:"cited"` // right row or passage cited, fact or not
}

// kbReport is the outcome of one knowledge base.
type kbReport struct {
	Domain   string      `json:"domain"`
	Files    int         `json:"files"`
	Chunks   int         `json:"chunks"`
	Kinds    []kbTally   `json:"kinds"`
	Outcomes []kbOutcome `json:"outcomes"`
}

// Tally returns the tally of one kind (zero when it has no cases).
func (r kbReport) Tally(kind string) kbTally {
	for _, t := range r.Kinds {
		if t.Kind == kind {
			return t
		}
	}
	return kbTally{Kind: kind}
}

// evalKB ingests each knowledge base of --data into memory and runs its
// cases offline.
func evalKB(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "eval kb")
	data := fs.String("data", "", "a knowledge base folder (docs/ and cases.jsonl), or a folder of them")
	asJSON := fs.Bool("json", false, "print one JSON array, one object per knowledge base")
	verbose := fs.Bool("v", false, "print every case that failed, with its answer and citations")
	if _, err := parse(fs, args); err != nil {
		return err
	}
	if *data == "" {
		return fmt.Errorf("%w: need --data DIR (a folder with docs/ and cases.jsonl, or a folder of such folders)", errUsage)
	}
	dirs, err := kbDirs(*data)
	if err != nil {
		return err
	}
	var reps []kbReport
	for _, d := range dirs {
		rep, err := runKB(ctx, d)
		if err != nil {
			return err
		}
		reps = append(reps, rep)
	}
	if *asJSON {
		return writeJSON(e.stdout, reps)
	}
	for _, rep := range reps {
		writeKBReport(e.stdout, rep, *verbose)
	}
	return nil
}

// kbDirs returns dir when it holds cases.jsonl, else its subfolders that
// do, in name order.
func kbDirs(dir string) ([]string, error) {
	if _, err := os.Stat(filepath.Join(dir, "cases.jsonl")); err == nil {
		return []string{dir}, nil
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("eval kb: %w", err)
	}
	var out []string
	for _, en := range ents {
		if _, err := os.Stat(filepath.Join(dir, en.Name(), "cases.jsonl")); en.IsDir() && err == nil {
			out = append(out, filepath.Join(dir, en.Name()))
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: %s has no cases.jsonl, nor any folder with one", errUsage, dir)
	}
	return out, nil
}

// loadKBCases reads a cases.jsonl file.
func loadKBCases(p string) ([]kbCase, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, fmt.Errorf("eval kb: %w", err)
	}
	defer f.Close()
	var cases []kbCase
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var c kbCase
		if err := json.Unmarshal([]byte(line), &c); err != nil {
			return nil, fmt.Errorf("eval kb: %s line %d: %w", p, n, err)
		}
		if c.Question == "" || !slices.Contains(kbKinds, c.Kind) {
			return nil, fmt.Errorf("%w: %s line %d: need a question and a kind (%s)", errUsage, p, n, strings.Join(kbKinds, ", "))
		}
		cases = append(cases, c)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("eval kb: %s: %w", p, err)
	}
	return cases, nil
}

// kbPipeline ingests dir/docs into an in-memory knowledge base and builds
// the offline pipeline over it, as "ask" does for a store.
func kbPipeline(ctx context.Context, dir string) (*adaptrag.Pipeline, *kb.KB, error) {
	emb, err := embed.FromConfig(embed.Config{})
	if err != nil {
		return nil, nil, err
	}
	k, err := kb.FromFS(ctx, os.DirFS(filepath.Join(dir, "docs")), emb)
	if err != nil {
		return nil, nil, err
	}
	clf, err := router.NewOffline()
	if err != nil {
		return nil, nil, errors.Join(err, k.Close())
	}
	deps := adaptrag.Deps{Docs: k.Docs, FAQ: k.FAQ, Embedder: emb, Classifier: clf}
	if k.Records != nil {
		// The tables as records: look-ups, chains and totals.
		if deps.Lookup, err = lookup.NewRecords(ctx, k.Records); err != nil {
			return nil, nil, errors.Join(err, k.Close())
		}
	}
	p, err := adaptrag.New(ctx, deps, adaptrag.Options{})
	if err != nil {
		return nil, nil, errors.Join(err, k.Close())
	}
	return p, k, nil
}

// runKB runs one knowledge base's cases.
func runKB(ctx context.Context, dir string) (kbReport, error) {
	cases, err := loadKBCases(filepath.Join(dir, "cases.jsonl"))
	if err != nil {
		return kbReport{}, err
	}
	p, k, err := kbPipeline(ctx, dir)
	if err != nil {
		return kbReport{}, err
	}
	defer k.Close()
	rep := kbReport{Domain: filepath.Base(filepath.Clean(dir))}
	if docs, _, err := k.List(ctx, adaptrag.Request{}.Scope); err == nil {
		rep.Files = len(docs)
		for _, d := range docs {
			rep.Chunks += d.Chunks
		}
	}
	tallies := map[string]*kbTally{}
	for _, c := range cases {
		res, err := p.Ask(ctx, adaptrag.Request{Question: c.Question})
		if err != nil {
			return kbReport{}, fmt.Errorf("eval kb: %s: %w", c.ID, err)
		}
		o := scoreKB(c, res)
		rep.Outcomes = append(rep.Outcomes, o)
		t := tallies[c.Kind]
		if t == nil {
			t = &kbTally{Kind: c.Kind}
			tallies[c.Kind] = t
		}
		t.Cases++
		t.Correct += b2i(o.Correct)
		t.Fact += b2i(o.Fact)
		t.Cited += b2i(o.Cited)
	}
	for _, kind := range kbKinds {
		if t := tallies[kind]; t != nil {
			rep.Kinds = append(rep.Kinds, *t)
		}
	}
	return rep, nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// refusals are the ways a run declines to answer.
var refusals = []state.AnsweredBy{state.ByNotFound, state.ByNoTotal, state.ByMissing, state.ByAskEntity, state.ByNoAccess}

// scoreKB judges one run against its case.
func scoreKB(c kbCase, res *adaptrag.Result) kbOutcome {
	o := kbOutcome{ID: c.ID, Kind: c.Kind, AnsweredBy: res.AnsweredBy, Answer: res.Answer}
	into := false // a citation points into the case's file
	for _, ct := range res.Citations {
		o.Citations = append(o.Citations, ct.Origin+" · "+ct.Locator)
		if c.Cite != "" && ct.Origin == c.Cite {
			into = true
			if c.Locator == "" || locatorIs(ct.Locator, c.Locator) {
				o.Cited = true
			}
		}
	}
	o.Fact = len(c.Expect) > 0
	for _, f := range c.Expect {
		o.Fact = o.Fact && hasFact(res.Answer, f)
	}
	refused := slices.Contains(refusals, res.AnsweredBy)
	switch c.Kind {
	case "total":
		o.Cited = res.AnsweredBy == state.ByAggregate
		o.Correct = o.Fact && o.Cited
	case "no_record":
		o.Fact = refused || (c.Missing != "" && strings.Contains(fold(res.Answer), fold(c.Missing)))
		o.Cited = !into
		o.Correct = o.Fact && o.Cited
	case "unanswerable":
		o.Correct = refused && len(res.Citations) == 0
	default:
		o.Correct = o.Fact && o.Cited
	}
	return o
}

// locatorIs reports whether a cited locator is want, or ends with
// " > " and want (a row or heading within a longer path).
func locatorIs(got, want string) bool {
	got, want = strings.TrimSpace(got), strings.TrimSpace(want)
	return got == want || strings.HasSuffix(got, " > "+want)
}

// fold lowercases s and removes its spaces, so that facts match whatever
// the spacing of the answer (CJK text joined across lines, "4 小时" or
// "4小时").
func fold(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return -1
		}
		return unicode.ToLower(r)
	}, s)
}

// hasFact reports whether the answer states fact: as text (case and
// spacing aside), or, for a number, as a number of equal value standing
// alone ("108.80" states "108.8"; "1080" does not state "108").
func hasFact(answer, fact string) bool {
	want, err := strconv.ParseFloat(strings.TrimSpace(fact), 64)
	if err != nil {
		return strings.Contains(fold(answer), fold(fact))
	}
	for _, n := range numbers(answer) {
		if v, err := strconv.ParseFloat(n, 64); err == nil && v == want {
			return true
		}
	}
	return false
}

// numbers returns the numerals of s: runs of digits with at most one
// decimal point between digits.
func numbers(s string) []string {
	var out []string
	rs := []rune(s)
	for i := 0; i < len(rs); {
		if !unicode.IsDigit(rs[i]) || (i > 0 && (unicode.IsDigit(rs[i-1]) || unicode.IsLetter(rs[i-1]) && rs[i-1] < 128)) {
			i++
			continue
		}
		j, dot := i, false
		for j < len(rs) && (unicode.IsDigit(rs[j]) || (rs[j] == '.' && !dot && j+1 < len(rs) && unicode.IsDigit(rs[j+1]))) {
			dot = dot || rs[j] == '.'
			j++
		}
		out = append(out, string(rs[i:j]))
		i = j
	}
	return out
}

// writeKBReport prints one knowledge base's figures.
func writeKBReport(w io.Writer, r kbReport, verbose bool) {
	fmt.Fprintf(w, "%s: %d files, %d chunks\n", r.Domain, r.Files, r.Chunks)
	for _, t := range r.Kinds {
		switch t.Kind {
		case "table", "prose", "lookup", "chain":
			fmt.Fprintf(w, "  %-13s %2d/%-2d correct (fact in the answer %d, right row or passage cited %d)\n", t.Kind, t.Correct, t.Cases, t.Fact, t.Cited)
		default:
			fmt.Fprintf(w, "  %-13s %2d/%-2d correct\n", t.Kind, t.Correct, t.Cases)
		}
	}
	if !verbose {
		return
	}
	for _, o := range r.Outcomes {
		if o.Correct {
			continue
		}
		fmt.Fprintf(w, "  FAIL %s (%s, %s; fact %v, cited %v)\n    answer: %s\n", o.ID, o.Kind, o.AnsweredBy, o.Fact, o.Cited, strings.ReplaceAll(o.Answer, "\n", " "))
		for _, c := range o.Citations {
			fmt.Fprintf(w, "    cites: %s\n", c)
		}
	}
}
