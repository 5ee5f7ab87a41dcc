// Command train fits the offline router model and writes it to
// router/model/router.bin.gz.
//
// Run from the module root:
//
//	go run ./router/internal/train -data ../shared/data
//
// It reads data/router/train_en.jsonl and train_zh.jsonl (never the dev
// files, except to print a report after fitting) plus the project's own
// examples, fixed and generated from templates and vocabulary
// (router/internal/train/data/*.tsv, embedded), holds out 10% of the training pool
// (chosen by a hash of the text) to calibrate the softmax temperature and
// the chitchat margin, and prints a reliability table. The output is
// deterministic for a given input.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"hash/fnv"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/adaptrag/adaptrag/router/internal/feat"
)

func main() {
	os.Exit(main1())
}

type sample struct {
	text, label, lang string
	source            string
	y                 int
	feats             []uint32
	gate              feat.Gate
	nfixed            int // leading features never dropped: bias, cues, length, script
	w                 float64
}

func main1() int {
	data := flag.String("data", "../shared/data", "evaluation data directory (with router/)")
	out := flag.String("out", "router/model/router.bin.gz", "model output path")
	bits := flag.Int("bits", 17, "log2 of the number of hash buckets")
	epochs := flag.Int("epochs", 6, "training epochs")
	lr := flag.Float64("lr", 0.3, "Adagrad learning rate")
	l2 := flag.Float64("l2", 1e-4, "L2 penalty per update")
	maxSub := flag.Float64("max-sub2chit", 0.003, "largest substantive->chitchat rate allowed on the held-out split when choosing the margin")
	exclude := flag.String("exclude", "", "comma-separated sources to keep out of training (a cross-source check; the dev report then shows how the model does on an unseen source)")
	dropout := flag.Float64("dropout", 0.5, "probability of dropping each n-gram feature during training (cues are kept), to lean on features that carry across sources")
	minMargin := flag.Float64("min-margin", 2.0, "smallest chitchat margin (logits); 2 costs no held-out chitchat recall")
	showErrors = flag.Bool("show-errors", false, "list the wrongly predicted items of every report")
	genKw := flag.Int("gen-keywords", defaultGenKeywords, "generated keyword queries per language")
	kwWeight := flag.Float64("keyword-weight", 0.3, "weight of each keyword query (they are left out of the class balance)")
	poolKw := flag.Int("pool-keywords", defaultPoolKeywords, "keyword queries made from the content words of the pools' questions")
	testSets := flag.String("test-sets", "router/testdata", "directory of the router's own test sets (*.jsonl with a text field); their texts are kept out of training")
	seed := flag.Uint64("seed", 1, "random seed (sampling of the generated examples, shuffling, dropout)")
	flag.Parse()

	var pool, unseen []sample
	for _, lang := range []string{"en", "zh"} {
		path := filepath.Join(*data, "router", "train_"+lang+".jsonl")
		ss, err := load(path, lang)
		if errors.Is(err, fs.ErrNotExist) {
			fmt.Fprintf(os.Stderr, "train: %s not found: training on the project's own examples only\n", path)
			continue
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "train: %v\n", err)
			return 1
		}
		for _, s := range ss {
			if slices.Contains(strings.Split(*exclude, ","), s.source) {
				unseen = append(unseen, s)
			} else {
				pool = append(pool, s)
			}
		}
	}
	c, err := loadCorpus(dataFS)
	if err != nil {
		fmt.Fprintf(os.Stderr, "train: %v\n", err)
		return 1
	}
	rng := rand.New(rand.NewPCG(*seed, 2))
	pool = append(pool, generate(c, rng, pool, *genKw, *poolKw)...)
	tests, err := testTexts(*testSets)
	if err != nil {
		fmt.Fprintf(os.Stderr, "train: %v\n", err)
		return 1
	}
	var dropped int
	pool, dropped = withoutTexts(pool, tests)
	fmt.Printf("kept out of training: %d items equal to a line of the test sets in %s\n", dropped, *testSets)
	var ap feat.Appender
	for i := range pool {
		pool[i].y = classIndex(pool[i].label)
		an := ap.Query(pool[i].text)
		pool[i].feats = append([]uint32(nil), ap.Buf...)
		pool[i].gate = an.Gate()
		pool[i].nfixed = 3 + len(an.Cues)
	}
	var train, held []sample
	for _, s := range pool {
		if hashText(s.text)%10 == 0 {
			held = append(held, s)
		} else {
			train = append(train, s)
		}
	}
	weigh(train, *kwWeight)
	fmt.Printf("pool %d: train %d, held-out %d\n", len(pool), len(train), len(held))

	// The floor for queries that are only small talk: how often the
	// training pool labels them chitchat (Laplace-smoothed).
	only, onlyChit := 0, 0
	for _, s := range train {
		if s.gate.Only {
			only++
			if s.y == feat.Chitchat {
				onlyChit++
			}
		}
	}
	m := &feat.Model{Buckets: 1 << *bits, Temperature: 1,
		TalkPrecision: float32(onlyChit+1) / float32(only+2)}
	fmt.Printf("only small talk: %d training items, %d chitchat: floor %.3f\n", only, onlyChit, m.TalkPrecision)
	fit(m, train, *epochs, *lr, *l2, *dropout, rng)

	// Calibrate: temperature by held-out NLL, then the smallest chitchat
	// margin that keeps substantive->chitchat on the held-out split under
	// the limit.
	bestT, bestNLL := 1.0, math.Inf(1)
	for t := 0.3; t <= 4.0; t += 0.05 {
		m.Temperature = float32(t)
		if nll := meanNLL(m, held); nll < bestNLL {
			bestT, bestNLL = t, nll
		}
	}
	m.Temperature = float32(bestT)
	// The margin starts at -min-margin: a deliberate prior against "no
	// retrieval", since a wrong chitchat route answers without evidence.
	for margin := *minMargin; margin <= 4; margin += 0.1 {
		m.ChitchatMargin = float32(margin)
		if sub2chit(m, held) <= *maxSub {
			break
		}
	}
	// The extra margin for queries with a substantive part: as large as
	// possible while held-out chitchat recall stays within half a point.
	base := chitRecall(m, held)
	for sm := 0.25; sm <= 4; sm += 0.25 {
		m.SubstanceMargin = float32(sm)
		if chitRecall(m, held) < base-0.005 {
			m.SubstanceMargin = float32(sm - 0.25)
			break
		}
	}
	fmt.Printf("temperature %.2f (held-out NLL %.4f), chitchat margin %.2f, substance margin %.2f\n",
		bestT, bestNLL, m.ChitchatMargin, m.SubstanceMargin)
	report("held-out", m, held)
	if len(unseen) > 0 {
		for i := range unseen {
			an := ap.Query(unseen[i].text)
			unseen[i].y = classIndex(unseen[i].label)
			unseen[i].feats = append([]uint32(nil), ap.Buf...)
			unseen[i].gate = an.Gate()
		}
		report("training items of the excluded sources (unseen)", m, unseen)
	}
	for _, lang := range []string{"en", "zh"} {
		ss, err := load(filepath.Join(*data, "router", "dev_"+lang+".jsonl"), lang)
		if err != nil {
			continue
		}
		for i := range ss {
			ss[i].y = classIndex(ss[i].label)
			an := ap.Query(ss[i].text)
			ss[i].feats = append([]uint32(nil), ap.Buf...)
			ss[i].gate = an.Gate()
		}
		report("dev_"+lang+" (report only, not used for fitting)", m, ss)

	}

	f, err := os.Create(*out)
	if err != nil {
		fmt.Fprintf(os.Stderr, "train: %v\n", err)
		return 1
	}
	if err := feat.Encode(f, m); err != nil {
		f.Close()
		fmt.Fprintf(os.Stderr, "train: %v\n", err)
		return 1
	}
	if err := f.Close(); err != nil {
		fmt.Fprintf(os.Stderr, "train: %v\n", err)
		return 1
	}
	st, _ := os.Stat(*out)
	fmt.Printf("wrote %s (%d bytes)\n", *out, st.Size())
	return 0
}

// Defaults of the -gen-keywords and -pool-keywords flags.
const (
	defaultGenKeywords  = 500
	defaultPoolKeywords = 1500
)

// generate returns the project's own examples (ownExamples) and the keyword
// queries (keywordExamples), both from the data of c, with genKw keyword queries
// per language and poolKw more made from the factual questions of pool.
func generate(c *corpus, rng *rand.Rand, pool []sample, genKw, poolKw int) []sample {
	var out []sample
	for _, e := range ownExamples(c, rng) {
		lang := "en"
		if hanShare(e.text) {
			lang = "zh"
		}
		out = append(out, sample{text: e.text, label: e.label, lang: lang + "-own"})
	}
	var questions []string
	for _, s := range pool {
		if s.label == "factual" && (s.lang == "en" || s.lang == "zh") {
			questions = append(questions, s.text)
		}
	}
	for _, e := range append(keywordExamples(c, rng, genKw), poolKeywords(rng, questions, poolKw)...) {
		lang := "en-kw"
		if hanShare(e.text) {
			lang = "zh-kw"
		}
		out = append(out, sample{text: e.text, label: e.label, lang: lang})
	}
	return out
}

func classIndex(label string) int {
	for i, c := range feat.Classes {
		if c == label {
			return i
		}
	}
	return -1
}

func hanShare(s string) bool {
	han, n := 0, 0
	for _, r := range s {
		n++
		if feat.IsHan(r) {
			han++
		}
	}
	return han*3 >= n
}

func hashText(s string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(feat.Normalize(s)))
	return h.Sum32()
}

// testTexts returns the normalized texts of every *.jsonl file in dir (each
// line an object with a "text" field): the router's own test sets, which
// must measure a model that never saw them.
func testTexts(dir string) (map[string]bool, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("no test sets in %s (run from the repository root or set -test-sets)", dir)
	}
	out := map[string]bool{}
	for _, p := range paths {
		texts, err := loadTexts(p)
		if err != nil {
			return nil, err
		}
		for _, t := range texts {
			out[feat.Normalize(t)] = true
		}
	}
	return out, nil
}

// withoutTexts drops the samples whose normalized text is in texts and
// says how many it dropped.
func withoutTexts(ss []sample, texts map[string]bool) ([]sample, int) {
	kept := ss[:0]
	for _, s := range ss {
		if !texts[feat.Normalize(s.text)] {
			kept = append(kept, s)
		}
	}
	return kept, len(ss) - len(kept)
}

// loadTexts reads the "text" fields of a JSON-lines file.
func loadTexts(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var r struct{ Text string }
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		out = append(out, r.Text)
	}
	return out, sc.Err()
}

func load(path, lang string) ([]sample, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []sample
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var r struct{ Text, Label, Source string }
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if classIndex(r.Label) < 0 {
			return nil, fmt.Errorf("%s: unknown label %q", path, r.Label)
		}
		out = append(out, sample{text: r.Text, label: r.Label, lang: lang, source: r.Source})
	}
	return out, sc.Err()
}

// weigh balances classes within each language so that the 6k Chinese
// chitchat lines do not drown the rest, and caps the up-weighting of the
// small hand-written groups. Keyword queries stay out of the balance (they
// would dilute the weight of the real factual questions) and weigh
// kwWeight each.
func weigh(ss []sample, kwWeight float64) {
	type key struct {
		lang string
		y    int
	}
	count := map[key]int{}
	perLang := map[string]int{}
	base := func(l string) string { return l[:2] }
	kw := func(l string) bool { return strings.HasSuffix(l, "-kw") }
	for _, s := range ss {
		if kw(s.lang) {
			continue
		}
		count[key{base(s.lang), s.y}]++
		perLang[base(s.lang)]++
	}
	for i := range ss {
		if kw(ss[i].lang) {
			ss[i].w = kwWeight
			continue
		}
		l := base(ss[i].lang)
		w := float64(perLang[l]) / (3 * float64(count[key{l, ss[i].y}]))
		ss[i].w = math.Max(0.3, math.Min(w, 4))
	}
}

func fit(m *feat.Model, ss []sample, epochs int, lr, l2, dropout float64, rng *rand.Rand) {
	k := feat.K
	m.W = make([]float32, int(m.Buckets)*k)
	g2 := make([]float64, len(m.W))
	order := make([]int, len(ss))
	for i := range order {
		order[i] = i
	}
	mask := m.Buckets - 1
	for ep := 0; ep < epochs; ep++ {
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		loss := 0.0
		var kept []uint32
		var vals []float32
		for _, oi := range order {
			s := ss[oi]
			if s.y == feat.Chitchat && !s.gate.Chat {
				continue // a class the gate makes unreachable
			}
			// Inverted dropout: kept n-gram features are scaled by
			// 1/(1-dropout) so that inference (no dropout, value 1) sees the
			// same expected logits.
			kept, vals = kept[:0], vals[:0]
			scale := float32(1 / (1 - dropout))
			for i, f := range s.feats {
				switch {
				case i < s.nfixed:
					kept, vals = append(kept, f), append(vals, 1)
				case dropout == 0:
					kept, vals = append(kept, f), append(vals, 1)
				case rng.Float64() >= dropout:
					kept, vals = append(kept, f), append(vals, scale)
				}
			}
			var z [feat.K]float32
			for i, f := range kept {
				base := int(f&mask) * k
				for c := 0; c < k; c++ {
					z[c] += vals[i] * m.W[base+c]
				}
			}
			if !s.gate.Chat {
				// Trained as it is used: without evidence of conversation
				// the model only chooses between factual and analytical.
				z[feat.Chitchat] = float32(math.Inf(-1))
			}
			p := feat.Softmax(z, 1)
			loss -= s.w * math.Log(math.Max(p[s.y], 1e-12))
			for i, f := range kept {
				base := int(f&mask) * k
				for c := 0; c < k; c++ {
					g := p[c]
					if c == s.y {
						g -= 1
					}
					g = s.w*g*float64(vals[i]) + l2*float64(m.W[base+c])
					g2[base+c] += g * g
					m.W[base+c] -= float32(lr * g / (math.Sqrt(g2[base+c]) + 1e-8))
				}
			}
		}
		fmt.Printf("epoch %d: weighted loss %.4f\n", ep+1, loss/float64(len(ss)))
	}
}

func predict(m *feat.Model, s sample) (int, float64) {
	p := m.Probs(s.feats, s.gate)
	best := 0
	for c := 1; c < feat.K; c++ {
		if p[c] > p[best] {
			best = c
		}
	}
	return best, p[best]
}

// meanNLL scores the model's probabilities as they are fitted: with the
// chitchat gate, without the small-talk floor (a rule, not the model), and
// leaving out the chitchat items the gate makes unreachable, whose
// probability no temperature can change.
func meanNLL(m *feat.Model, ss []sample) float64 {
	nll, n := 0.0, 0
	for _, s := range ss {
		g := s.gate
		if !g.Chat && s.y == feat.Chitchat {
			continue
		}
		g.Only = false
		p := m.Probs(s.feats, g)
		nll -= math.Log(math.Max(p[s.y], 1e-12))
		n++
	}
	return nll / float64(max(n, 1))
}

func chitRecall(m *feat.Model, ss []sample) float64 {
	n, ok := 0, 0
	for _, s := range ss {
		if s.y != feat.Chitchat {
			continue
		}
		n++
		if c, _ := predict(m, s); c == feat.Chitchat {
			ok++
		}
	}
	return float64(ok) / float64(max(n, 1))
}

func sub2chit(m *feat.Model, ss []sample) float64 {
	n, bad := 0, 0
	for _, s := range ss {
		if s.y == feat.Chitchat {
			continue
		}
		n++
		if c, _ := predict(m, s); c == feat.Chitchat {
			bad++
		}
	}
	if n == 0 {
		return 0
	}
	return float64(bad) / float64(n)
}

var showErrors *bool

func report(name string, m *feat.Model, ss []sample) {
	edges := []float64{0, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 1.0001}
	type bin struct{ n, ok int }
	bins := make([]bin, len(edges)-1)
	conf := map[[2]int]int{}
	okAll := 0
	var wrong []string
	for _, s := range ss {
		c, p := predict(m, s)
		conf[[2]int{s.y, c}]++
		if c != s.y && *showErrors {
			wrong = append(wrong, fmt.Sprintf("  wrong: %s -> %s %.2f (evidence of conversation %v): %q", feat.Classes[s.y], feat.Classes[c], p, s.gate.Chat, s.text))
		}
		i := sort.SearchFloat64s(edges, p) - 1
		if i < 0 {
			i = 0
		}
		if i >= len(bins) {
			i = len(bins) - 1
		}
		bins[i].n++
		if c == s.y {
			bins[i].ok++
			okAll++
		}
	}
	fmt.Printf("\n%s: n=%d accuracy %.4f substantive->chitchat %.4f\n", name, len(ss), float64(okAll)/float64(len(ss)), sub2chit(m, ss))
	fmt.Println("| confidence | n | accuracy |")
	fmt.Println("|---|---|---|")
	for i, b := range bins {
		if b.n == 0 {
			continue
		}
		fmt.Printf("| [%.2f, %.2f) | %d | %.3f |\n", edges[i], math.Min(edges[i+1], 1), b.n, float64(b.ok)/float64(b.n))
	}
	lowN, lowOK := 0, 0
	for i, b := range bins {
		if edges[i] < 0.7 {
			lowN += b.n
			lowOK += b.ok
		}
	}
	if lowN > 0 && lowN < len(ss) {
		fmt.Printf("confidence < 0.70: %d items, accuracy %.3f; >= 0.70: %d items, accuracy %.3f\n",
			lowN, float64(lowOK)/float64(lowN), len(ss)-lowN, float64(okAll-lowOK)/float64(len(ss)-lowN))
	}
	fmt.Println("confusion (gold -> predicted):")
	for g := 0; g < feat.K; g++ {
		fmt.Printf("  %-10s", feat.Classes[g])
		for c := 0; c < feat.K; c++ {
			fmt.Printf(" %s=%d", feat.Classes[c], conf[[2]int{g, c}])
		}
		fmt.Println()
	}
	for _, w := range wrong {
		fmt.Println(w)
	}
}
