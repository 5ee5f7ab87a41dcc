// Command benchtable compares two `go test -bench` outputs benchmark by
// benchmark: it prints a Markdown table of the medians of ns/op and
// allocs/op of each, and their ratios (peer / ours).
//
//	go run ./internal/benchtable -ours ours.txt -peer peer.txt [-peer-name Eino]
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
