// Command benchtable compares two `go test -bench` outputs benchmark by
// benchmark: it prints a Markdown table of the medians of ns/op and
// allocs/op of each, and their ratios (peer / ours).
//
//	go run ./internal/benchtable -ours ours.txt -peer peer.txt [-peer-name Eino]
//
// With -pairs, benchmarks of different names are compared: each
// "Ours:Peer" pair matches Ours/SUB against Peer/SUB for every
// sub-benchmark SUB (e.g. N=100000), and extra metrics (recall@50, heapMB,
// p50-ms) are shown.
//
//	go run ./internal/benchtable -ours o.txt -peer p.txt -pairs Dense:Chromem,BM25:BleveBM25
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

var line = regexp.MustCompile(`^(Benchmark[^\s]+?)(?:-\d+)?\s+\d+\s+(.*)$`)

// parse returns, per benchmark name, every value of every unit.
func parse(path string) (map[string]map[string][]float64, []string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	out := map[string]map[string][]float64{}
	var order []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m := line.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		name := m[1]
		if out[name] == nil {
			out[name] = map[string][]float64{}
			order = append(order, name)
		}
		f := strings.Fields(m[2])
		for i := 0; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err == nil {
				out[name][f[i+1]] = append(out[name][f[i+1]], v)
			}
		}
	}
	return out, order, sc.Err()
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

func human(ns float64) string {
	switch {
	case ns >= 1e6:
		return fmt.Sprintf("%.2f ms", ns/1e6)
	case ns >= 1e3:
		return fmt.Sprintf("%.2f µs", ns/1e3)
	}
	return fmt.Sprintf("%.0f ns", ns)
}

func main() {
	oursPath := flag.String("ours", "", "go test -bench output of this project")
	peerPath := flag.String("peer", "", "go test -bench output of the peer")
	peerName := flag.String("peer-name", "peer", "the peer's name for the table header")
	pairs := flag.String("pairs", "", "comma-separated Ours:Peer benchmark name pairs")
	flag.Parse()
	ours, order, err := parse(*oursPath)
	if err == nil && len(order) == 0 {
		err = fmt.Errorf("no benchmark lines in %s", *oursPath)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchtable:", err)
		os.Exit(1)
	}
	peer, _, err := parse(*peerPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchtable:", err)
		os.Exit(1)
	}
	if *pairs != "" {
		pairTable(ours, order, peer, *pairs)
		return
	}
	fmt.Printf("| benchmark | adaptrag time/op | %s time/op | speed-up | adaptrag allocs/op | %s allocs/op | fewer allocs |\n", *peerName, *peerName)
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|")
	for _, name := range order {
		p, ok := peer[name]
		if !ok {
			continue
		}
		on, pn := median(ours[name]["ns/op"]), median(p["ns/op"])
		oa, pa := median(ours[name]["allocs/op"]), median(p["allocs/op"])
		ratio := func(a, b float64) string {
			if a == 0 {
				return "∞"
			}
			return fmt.Sprintf("%.1fx", b/a)
		}
		fmt.Printf("| %s | %s | %s | %s | %.0f | %.0f | %s |\n", strings.TrimPrefix(name, "Benchmark"), human(on), human(pn), ratio(on, pn), oa, pa, ratio(oa, pa))
	}
}

// pairTable prints one row per matched sub-benchmark of each pair.
func pairTable(ours map[string]map[string][]float64, order []string, peer map[string]map[string][]float64, pairs string) {
	fmt.Println("| adaptrag | peer | size | adaptrag time/op | peer time/op | speed-up | adaptrag allocs | peer allocs | adaptrag metrics | peer metrics |")
	fmt.Println("|---|---|---|---:|---:|---:|---:|---:|---|---|")
	extras := func(m map[string][]float64) string {
		var parts []string
		for _, unit := range []string{"recall@50", "heapMB", "p50-ms", "chunks/s"} {
			if v, ok := m[unit]; ok {
				parts = append(parts, fmt.Sprintf("%s %.3g", unit, median(v)))
			}
		}
		return strings.Join(parts, ", ")
	}
	for _, pair := range strings.Split(pairs, ",") {
		o, p, ok := strings.Cut(pair, ":")
		if !ok {
			continue
		}
		for _, name := range order {
			sub, ok := strings.CutPrefix(name, "Benchmark"+o+"/")
			if !ok {
				continue
			}
			pm, ok := peer["Benchmark"+p+"/"+sub]
			if !ok {
				continue
			}
			om := ours[name]
			on, pn := median(om["ns/op"]), median(pm["ns/op"])
			fmt.Printf("| %s | %s | %s | %s | %s | %.1fx | %.0f | %.0f | %s | %s |\n", o, p, sub, human(on), human(pn), pn/on,
				median(om["allocs/op"]), median(pm["allocs/op"]), extras(om), extras(pm))
		}
	}
}
