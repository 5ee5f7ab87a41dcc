//go:build linux

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/adaptrag/adaptrag/ingest"
	"github.com/adaptrag/adaptrag/kb"
	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/adaptrag/adaptrag/retrieval/embed"
	"github.com/adaptrag/adaptrag/retrieval/memstore"
)

// The ingest crash matrix runs "adaptrag ingest" in a child process (this
// test binary re-executed as the command) and kills it with SIGKILL at
// random points, over and over, in four scenarios: a fresh ingest, a
// re-ingest of unchanged files, an ingest of edited files, and an ingest
// with --prune after files were deleted. The child's standard error is a
// pseudo-terminal, so it draws its progress bar as it would for a user:
// each redraw names the file just stored, and that file's ingest is
// acknowledged. After every kill the knowledge base must open read-only
// (as ask opens it); every acknowledged file must be there whole, in its
// new version, and searchable; every other document must hold its old or
// its new version whole (chunk count, ids and content of one version);
// no chunk is there twice.
//
// The number of kills is ADAPTRAG_INGEST_KILLS (default 8, spread over the
// scenarios), e.g.
//
//	ADAPTRAG_INGEST_KILLS=1000 go test -run TestIngestCrashMatrix -timeout 60m ./cmd/adaptrag/
const (
	crashChildEnv = "ADAPTRAG_CRASH_CHILD"
	crashArgsEnv  = "ADAPTRAG_CRASH_ARGS"
	ingestKillEnv = "ADAPTRAG_INGEST_KILLS"
)

func TestMain(m *testing.M) {
	if os.Getenv(crashChildEnv) == "1" {
		var args []string
		if err := json.Unmarshal([]byte(os.Getenv(crashArgsEnv)), &args); err != nil {
			fmt.Fprintln(os.Stderr, "crash child:", err)
			os.Exit(3)
		}
		os.Exit(run(context.Background(), &env{stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv}, args))
	}
	os.Exit(m.Run())
}

// openPTY returns the two ends of a new pseudo-terminal.
func openPTY() (master, slave *os.File, err error) {
	master, err = os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, err
	}
	var unlock int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, master.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		master.Close()
		return nil, nil, e
	}
	var n uint32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, master.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		master.Close()
		return nil, nil, e
	}
	slave, err = os.OpenFile("/dev/pts/"+strconv.Itoa(int(n)), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		master.Close()
		return nil, nil, err
	}
	return master, slave, nil
}

// letters writes n with consonants only, so that a document's token is one
// word to every analyzer and no stemmer touches it.
func letters(n int) string {
	const cs = "bcdfghjklm"
	s := strconv.Itoa(n)
	out := make([]byte, len(s))
	for i := range s {
		out[i] = cs[s[i]-'0']
	}
	return string(out)
}

// crashToken is the word every paragraph of version v of file i carries.
func crashToken(i, v int) string { return "qz" + letters(i) + "x" + letters(v) }

// writeVersion writes version v of file i: one to six paragraphs, each
// with the version's token, so the chunk count varies between versions.
func writeVersion(t *testing.T, src string, i, v int, r *rand.Rand) {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "# Document %d, version %d\n\n", i, v)
	for p := range 1 + r.IntN(6) {
		fmt.Fprintf(&b, "%s paragraph %d of document %d. The travel policy, the leave policy and the expense rules are described here at some length, "+
			"so that each paragraph fills most of a chunk of its own. %s\n\n", crashToken(i, v), p, i, strings.Repeat("Further details follow. ", 10+r.IntN(6)))
	}
	if err := os.WriteFile(filepath.Join(src, "hr", fmt.Sprintf("doc%02d.md", i)), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// version is one file's content as stored: its hash, chunk ids and token.
type version struct {
	hash  string
	ids   []string // sorted
	token string
}

// docState is what the store holds for each document id.
type docState map[string]version

// reference ingests src in-process into a scratch store, as the command
// does, and returns what each document must hold.
func reference(t *testing.T, src string, tokens map[string]string) docState {
	t.Helper()
	ctx := context.Background()
	docs, _ := memstore.Open(ctx, memstore.Options{})
	faq, _ := memstore.Open(ctx, memstore.Options{})
	defer docs.Close()
	defer faq.Close()
	emb, err := embed.FromConfig(embed.Config{})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := ingest.Ingest(ctx, ingest.Target{Docs: docs, FAQ: faq}, []string{src}, ingest.Options{Embedder: emb})
	if err == nil {
		err = rep.Err()
	}
	if err != nil {
		t.Fatal(err)
	}
	got, err := stored(ctx, docs, emb)
	if err != nil {
		t.Fatal(err)
	}
	for id, v := range got {
		v.token = tokens[id]
		got[id] = v
	}
	return got
}

// stored reads every chunk of the default tenant and groups them by
// document, failing on a document whose chunks are not of one version or
// a chunk that is there twice.
func stored(ctx context.Context, s retrieval.Searcher, emb retrieval.Embedder) (docState, error) {
	vs, err := emb.Embed(ctx, []string{"any query"})
	if err != nil {
		return nil, err
	}
	hits, err := s.SearchDense(ctx, retrieval.Request{Vector: vs[0], K: 100000})
	if err != nil {
		return nil, err
	}
	out := docState{}
	seen := map[string]bool{}
	for _, h := range hits {
		c := h.Chunk
		if seen[c.ID] {
			return nil, fmt.Errorf("chunk %s is stored twice", c.ID)
		}
		seen[c.ID] = true
		v := out[c.DocID]
		if v.hash != "" && v.hash != c.Meta[retrieval.MetaContentHash] {
			return nil, fmt.Errorf("document %s mixes versions %s and %s", c.DocID, v.hash, c.Meta[retrieval.MetaContentHash])
		}
		v.hash = c.Meta[retrieval.MetaContentHash]
		v.ids = append(v.ids, c.ID)
		out[c.DocID] = v
	}
	for id, v := range out {
		slices.Sort(v.ids)
		out[id] = v
	}
	return out, nil
}

// progressRE reads a redraw of the progress bar: files done, total, the
// file just stored.
var progressRE = regexp.MustCompile(`\] (\d+)/(\d+) files, \d+ chunks (\S.*)$`)

// ingestRun is one child run of the command.
type ingestRun struct {
	acked    []string // display paths of the files acknowledged, in order
	finished bool     // the child exited on its own
	code     int
	stdout   string
}

// runIngestChild runs "adaptrag ingest ARGS" in dir and, when killAfter >=
// 0, kills it once killAfter files are acknowledged (after a random
// pause of up to 2ms, so that kills land anywhere in the next file's
// work), or when it reaches the end.
func runIngestChild(t *testing.T, dir string, args []string, killAfter int, r *rand.Rand) ingestRun {
	t.Helper()
	master, slave, err := openPTY()
	if err != nil {
		t.Skipf("no pseudo-terminal for the child's progress: %v", err)
	}
	defer master.Close()
	b, _ := json.Marshal(args)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), crashChildEnv+"=1", crashArgsEnv+"="+string(b), "XDG_DATA_HOME="+filepath.Join(dir, "xdg"),
		"OPENAI_API_KEY=", "OPENAI_BASE_URL=", "OLLAMA_HOST=", "OPENAI_EMBEDDING_MODEL=", "OLLAMA_EMBEDDING_MODEL=", "ADAPTRAG_STORE=")
	cmd.Stderr = slave
	var out strings.Builder
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	lines := make(chan string, 64)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(master)
		sc.Split(func(data []byte, atEOF bool) (int, []byte, error) {
			for i, c := range data {
				if c == '\r' || c == '\n' {
					return i + 1, data[:i], nil
				}
			}
			if atEOF && len(data) > 0 {
				return len(data), data, nil
			}
			return 0, nil, nil
		})
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	var res ingestRun
	var other []string
	killed := false
	kill := func() {
		if !killed {
			killed = true
			if killAfter > len(res.acked) || r.IntN(2) == 0 {
				time.Sleep(time.Duration(r.IntN(2000)) * time.Microsecond)
			}
			cmd.Process.Signal(syscall.SIGKILL)
		}
	}
	if killAfter == 0 {
		// Somewhere in start-up, opening or creating the store.
		go func() {
			time.Sleep(time.Duration(r.IntN(40)) * time.Millisecond)
			cmd.Process.Signal(syscall.SIGKILL)
		}()
		killed = true
	}
	for l := range lines {
		m := progressRE.FindStringSubmatch(strings.TrimRight(l, " "))
		if m == nil {
			if strings.TrimSpace(l) != "" {
				other = append(other, l)
			}
			continue
		}
		if done, _ := strconv.Atoi(m[1]); done > len(res.acked) {
			res.acked = append(res.acked, m[3])
		}
		if killAfter > 0 && len(res.acked) >= killAfter {
			kill()
		}
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	switch {
	case err == nil:
		res.finished = true
	case errors.As(err, &ee) && ee.ProcessState.Sys().(syscall.WaitStatus).Signaled():
	case errors.As(err, &ee):
		res.finished, res.code = true, ee.ExitCode()
	default:
		t.Fatal(err)
	}
	res.stdout = out.String()
	if res.finished && res.code != 0 {
		t.Fatalf("ingest %v exited %d:\n%s\n%s", args, res.code, res.stdout, strings.Join(other, "\n"))
	}
	return res
}

// crashScenario is one step of the matrix: files to change, then an
// ingest to kill.
type crashScenario struct {
	name  string
	prune bool
	// change edits the source folder: it returns the files that now
	// exist, by number, with their versions.
	change func(files map[int]int, r *rand.Rand) map[int]int
}

func TestIngestCrashMatrix(t *testing.T) {
	if testing.Short() {
		t.Skip("kills child processes")
	}
	kills := 8
	if v := os.Getenv(ingestKillEnv); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("%s=%q: want a positive number", ingestKillEnv, v)
		}
		kills = n
	}
	root := t.TempDir()
	src := filepath.Join(root, "src")
	if err := os.MkdirAll(filepath.Join(src, "hr"), 0o755); err != nil {
		t.Fatal(err)
	}
	store := "embedded:" + filepath.Join(root, "kb")
	r := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	const nFiles = 24
	scenarios := []crashScenario{
		{name: "fresh ingest", change: func(map[int]int, *rand.Rand) map[int]int {
			f := map[int]int{}
			for i := range nFiles {
				f[i] = 1
			}
			return f
		}},
		{name: "unchanged files", change: func(f map[int]int, _ *rand.Rand) map[int]int { return f }},
		{name: "edited files", change: func(f map[int]int, r *rand.Rand) map[int]int {
			for i := range f {
				if r.IntN(2) == 0 {
					f[i]++
				}
			}
			return f
		}},
		{name: "deleted files, --prune", prune: true, change: func(f map[int]int, r *rand.Rand) map[int]int {
			for i := range f {
				if r.IntN(3) == 0 && len(f) > 1 {
					delete(f, i)
				}
			}
			return f
		}},
	}
	emb, err := embed.FromConfig(embed.Config{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	files := map[int]int{}
	old := docState{} // what the store holds
	var total, totalAcked, totalRuns int
	phase, perScenario := map[string]int{}, map[string]int{}
	per := max(1, kills/len(scenarios)) // kills per scenario and pass
	for pass := 0; pass == 0 || total < kills; pass++ {
		for si, sc := range scenarios {
			if pass > 0 && si == 0 {
				// Another pass starts over in a new knowledge base.
				store = "embedded:" + filepath.Join(root, fmt.Sprintf("kb%d", pass))
				old = docState{}
			}
			prev := files
			files = sc.change(maps.Clone(prev), r)
			for i, v := range files {
				if prev[i] != v {
					writeVersion(t, src, i, v, rand.New(rand.NewPCG(uint64(i), uint64(v))))
				}
			}
			for i := range prev {
				if _, ok := files[i]; !ok {
					os.Remove(filepath.Join(src, "hr", fmt.Sprintf("doc%02d.md", i)))
				}
			}
			tokens := map[string]string{}
			display := map[string]string{} // name in the progress bar -> document id
			for i, v := range files {
				name := filepath.Join("src", "hr", fmt.Sprintf("doc%02d.md", i))
				abs, err := filepath.EvalSymlinks(filepath.Join(root, name))
				if err != nil {
					t.Fatal(err)
				}
				tokens[ingest.FileDocID(abs)] = crashToken(i, v)
				display[name] = ingest.FileDocID(abs)
			}
			want := reference(t, src, tokens)
			args := []string{"ingest", "--store", store, "src"}
			if sc.prune {
				args = []string{"ingest", "--prune", "--store", store, "src"}
			}
			// Kill the scenario's ingest per times, each time after a random
			// number of acknowledged files, then let it finish.
			for k := 0; ; k++ {
				killAfter := -1
				if k < per && total < kills {
					killAfter = r.IntN(len(files) + 1)
				}
				res := runIngestChild(t, root, args, killAfter, r)
				totalRuns++
				if !res.finished {
					total++
					switch {
					case len(res.acked) == 0:
						phase["before the first file was stored"]++
					case len(res.acked) == len(files):
						phase["after the last file (pruning or exiting)"]++
					default:
						phase["between files or inside one"]++
					}
					perScenario[sc.name]++
				}
				totalAcked += len(res.acked)
				acked := map[string]bool{}
				for _, a := range res.acked {
					id, ok := display[a]
					if !ok {
						t.Fatalf("%s: the child acknowledged %q, which is not one of the files", sc.name, a)
					}
					acked[id] = true
				}
				now := checkAfterKill(t, ctx, store, emb, old, want, acked, res.finished)
				if t.Failed() {
					t.Fatalf("%s, run %d (killed after %d acknowledged files, finished %v): see above", sc.name, k+1, len(res.acked), res.finished)
				}
				old = now
				if res.finished {
					break
				}
			}
			if len(old) != len(want) {
				t.Fatalf("%s: after the last run the store holds %d documents, want %d", sc.name, len(old), len(want))
			}
		}
	}
	t.Logf("ingest crash matrix: %d kills over %d runs of adaptrag ingest (%d files acknowledged before a kill or at the end); every kill left a knowledge base that opens, with each document whole and every acknowledged one in its new version",
		total, totalRuns, totalAcked)
	t.Logf("kills by scenario %v; by moment %v", perScenario, phase)
}

// checkAfterKill opens the knowledge base read-only, as ask does, and
// checks it against the versions before (old) and after (want) the run.
// It returns what the store holds.
func checkAfterKill(t *testing.T, ctx context.Context, store string, emb retrieval.Embedder, old, want docState, acked map[string]bool, finished bool) docState {
	t.Helper()
	k, err := kb.Open(ctx, store, kb.Options{Dim: emb.Dim()})
	if err != nil {
		if errors.Is(err, retrieval.ErrNotFound) && len(old) == 0 && len(acked) == 0 {
			return docState{} // killed before the store was made: nothing was promised
		}
		t.Errorf("the knowledge base does not open read-only after the kill: %v", err)
		return nil
	}
	defer k.Close()
	now, err := stored(ctx, k.Docs, emb)
	if err != nil {
		t.Errorf("%v", err)
		return nil
	}
	for id, v := range now {
		o, n := old[id], want[id]
		switch {
		case slices.Equal(v.ids, n.ids) && v.hash == n.hash:
		case slices.Equal(v.ids, o.ids) && v.hash == o.hash:
			if acked[id] {
				t.Errorf("%s was acknowledged but holds its old version", id)
			}
			if finished {
				t.Errorf("%s holds its old version after a run that finished", id)
			}
		default:
			t.Errorf("%s holds %d chunks of %s: neither the old version (%d chunks of %s) nor the new (%d of %s)",
				id, len(v.ids), v.hash, len(o.ids), o.hash, len(n.ids), n.hash)
		}
	}
	for id := range want {
		if _, ok := now[id]; !ok && (acked[id] || finished || old[id].hash != "") {
			t.Errorf("%s is missing (acknowledged %v, run finished %v, stored before %v)", id, acked[id], finished, old[id].hash != "")
		}
	}
	for id := range acked {
		v := want[id]
		hits, err := k.Docs.(retrieval.SparseSearcher).SearchSparse(ctx, retrieval.Request{Text: v.token, K: 50})
		if err != nil || len(hits) == 0 {
			t.Errorf("searching acknowledged %s for %s: %d hits, %v", id, v.token, len(hits), err)
			continue
		}
		for _, h := range hits {
			if _, ok := slices.BinarySearch(v.ids, h.Chunk.ID); !ok || h.Chunk.DocID != id {
				t.Errorf("searching %s found chunk %s of %s, not of its new version", v.token, h.Chunk.ID, h.Chunk.DocID)
			}
		}
	}
	if finished {
		for id := range now {
			if _, ok := want[id]; !ok {
				t.Errorf("%s is still there after a run with --prune finished", id)
			}
		}
	}
	return now
}
