//go:build linux

package main

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the database/sql driver "pgx"
)

// replicaPostgres returns a PostgreSQL URL whose search_path is a new
// schema of its own, dropped when the test ends.
func replicaPostgres(t *testing.T) string {
	t.Helper()
	base := os.Getenv("ADAPTRAG_TEST_POSTGRES")
	if base == "" {
		if os.Getenv("ADAPTRAG_REQUIRE_POSTGRES") == "1" {
			t.Fatal("ADAPTRAG_TEST_POSTGRES is unset and ADAPTRAG_REQUIRE_POSTGRES=1")
		}
		t.Skip("ADAPTRAG_TEST_POSTGRES is unset (export ADAPTRAG_TEST_POSTGRES=$(scripts/postgres.sh))")
	}
	db, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatal(err)
	}
	schema := fmt.Sprintf("replicas_%d_%x", os.Getpid(), rand.Uint64())
	if _, err := db.Exec("CREATE SCHEMA " + schema); err != nil {
		db.Close()
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		defer db.Close()
		if _, err := db.Exec("DROP SCHEMA " + schema + " CASCADE"); err != nil {
			t.Errorf("drop schema: %v", err)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// serveProcess starts "adaptrag serve" as a process of its own (the test
// binary re-executed as the CLI, see TestMain), offline, on a free loopback
// port, and returns its URL; the process is stopped with SIGTERM at the end.
func serveProcess(t *testing.T, args ...string) string {
	t.Helper()
	b, _ := json.Marshal(append([]string{"serve", "--addr", "127.0.0.1:0"}, args...))
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashChildEnv+"=1", crashArgsEnv+"="+string(b), "ADAPTRAG_THREADS=",
		"OPENAI_API_KEY=", "OPENAI_BASE_URL=", "OPENAI_MODEL=", "OLLAMA_HOST=", "OPENAI_EMBEDDING_MODEL=", "OLLAMA_EMBEDDING_MODEL=",
		"ADAPTRAG_STORE=", "OTEL_EXPORTER_OTLP_ENDPOINT=")
	var errb lockedBuffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve %v exited: %v\n%s", args, err, errb.String())
			}
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			t.Errorf("serve did not stop")
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		if m := servingURL.FindStringSubmatch(errb.String()); m != nil {
			return m[1]
		}
		select {
		case err := <-done:
			done <- err
			t.Fatalf("serve exited: %v: %s", err, errb.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve did not start: %s", errb.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

type replicaAnswer struct {
	Answer     string `json:"answer"`
	AnsweredBy string `json:"answered_by"`
	Query      struct {
		Text string `json:"text"`
	} `json:"query"`
	Error struct {
		Code string `json:"code"`
	} `json:"error"`
}

type replicaThread struct {
	ID    string `json:"id"`
	Turns []struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	} `json:"turns"`
	Checkpoints []struct {
		ID     string `json:"id"`
		Parent string `json:"parent"`
		Status string `json:"status"`
	} `json:"checkpoints"`
}

// Two serve processes on one PostgreSQL schema take the turns of one
// thread alternately and at once, as replicas behind a load balancer
// would; a client retries a 409 thread_busy. Both replicas then list every
// turn exactly once, with its answer, in one unbroken chain of checkpoints.
func TestServeReplicasShareAThread(t *testing.T) {
	pg := replicaPostgres(t)
	// One after the other: the first creates the tables.
	replicas := []string{serveProcess(t, "--threads", pg), serveProcess(t, "--threads", pg)}

	client := &http.Client{Timeout: 15 * time.Second}
	var fivexx, retries, inflight, overlap atomic.Int64
	ask := func(base, thread, question string) (int, replicaAnswer, error) {
		b, _ := json.Marshal(map[string]string{"question": question, "thread": thread})
		if inflight.Add(1) > 1 {
			overlap.Add(1)
		}
		defer inflight.Add(-1)
		resp, err := client.Post(base+"/v1/ask", "application/json", bytes.NewReader(b))
		if err != nil {
			return 0, replicaAnswer{}, err
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		var a replicaAnswer
		if err := json.Unmarshal(raw, &a); err != nil {
			return resp.StatusCode, a, fmt.Errorf("%d %s: %w", resp.StatusCode, raw, err)
		}
		if resp.StatusCode >= 500 {
			fivexx.Add(1)
			return resp.StatusCode, a, fmt.Errorf("%s: %d %s", base, resp.StatusCode, raw)
		}
		return resp.StatusCode, a, nil
	}
	deadline := time.Now().Add(15 * time.Second)
	// turn posts until the thread takes the question: a 409 thread_busy is
	// retried after a short random pause, a bounded number of times.
	turn := func(base, thread, question string) (replicaAnswer, error) {
		for attempt := 0; attempt < 200 && time.Now().Before(deadline); attempt++ {
			code, a, err := ask(base, thread, question)
			if err != nil {
				return a, err
			}
			if code == http.StatusOK {
				return a, nil
			}
			if code != http.StatusConflict || a.Error.Code != "thread_busy" {
				return a, fmt.Errorf("%s %q: %d %s", base, question, code, a.Error.Code)
			}
			retries.Add(1)
			time.Sleep(time.Duration(5+rand.IntN(20)) * time.Millisecond)
		}
		return replicaAnswer{}, fmt.Errorf("%q never got the thread", question)
	}

	const goroutines, perGoroutine = 4, 5
	const thread = "shared"
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	var questions sync.Map
	for g := range goroutines {
		wg.Go(func() {
			for i := range perGoroutine {
				q := fmt.Sprintf("退货要在几天内发起？（%d-%d）", g, i)
				questions.Store(q, true)
				a, err := turn(replicas[(g+i)%2], thread, q)
				if err != nil {
					errs <- err
					return
				}
				if a.Answer == "" {
					errs <- fmt.Errorf("%q: empty answer", q)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	overlapped := overlap.Load()
	if overlapped == 0 {
		t.Error("no request overlapped another: the turns were not concurrent")
	}
	for err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		t.FailNow()
	}

	var lists []replicaThread
	for _, base := range replicas {
		resp, err := client.Get(base + "/v1/threads/" + thread)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("%s: GET thread: %d %s", base, resp.StatusCode, raw)
		}
		var th replicaThread
		if err := json.Unmarshal(raw, &th); err != nil {
			t.Fatal(err)
		}
		lists = append(lists, th)
	}
	th := lists[0]
	a, _ := json.Marshal(lists[0])
	b, _ := json.Marshal(lists[1])
	if !bytes.Equal(a, b) {
		t.Errorf("the replicas list the thread differently:\nA %s\nB %s", a, b)
	}
	want := goroutines * perGoroutine
	if len(th.Turns) != 2*want {
		t.Errorf("%d messages, want %d (a question and its answer per turn)", len(th.Turns), 2*want)
	}
	seen := map[string]int{}
	for i, m := range th.Turns {
		wantRole := "user"
		if i%2 == 1 {
			wantRole = "assistant"
		}
		if m.Role != wantRole || m.Content == "" {
			t.Errorf("message %d: %s %q, want a non-empty %s message", i, m.Role, m.Content, wantRole)
		}
		if m.Role == "user" {
			seen[m.Content]++
		}
	}
	questions.Range(func(k, _ any) bool {
		if seen[k.(string)] != 1 {
			t.Errorf("question %q listed %d times", k, seen[k.(string)])
		}
		return true
	})
	if len(seen) != want {
		t.Errorf("%d distinct questions listed, want %d", len(seen), want)
	}
	cps := th.Checkpoints
	for i := 0; i+1 < len(cps); i++ {
		if cps[i].Parent != cps[i+1].ID {
			t.Fatalf("checkpoint chain broken at %d: %s has parent %q, next is %s", i, cps[i].ID, cps[i].Parent, cps[i+1].ID)
		}
	}
	if len(cps) == 0 || cps[0].Status != "done" || cps[len(cps)-1].Parent != "" {
		t.Errorf("checkpoints: %d, newest %+v", len(cps), cps)
	}

	// A follow-up on the other replica is rewritten from the thread's history.
	if _, err := turn(replicas[0], "follow", "P-204 电池的售后政策是什么？"); err != nil {
		t.Fatal(err)
	}
	f, err := turn(replicas[1], "follow", "那这个能换吗？")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(f.Query.Text, "P-204") {
		t.Errorf("the follow-up on the other replica was not rewritten from the thread: answered by %s, query %q", f.AnsweredBy, f.Query.Text)
	}
	if n := fivexx.Load(); n != 0 {
		t.Errorf("%d responses were 5xx", n)
	}
	t.Logf("%d turns sent from %d goroutines to 2 replicas (%d requests sent while another was in flight), %d 409 thread_busy retries, %d checkpoints in one chain, %d messages listed", want, goroutines, overlapped, retries.Load(), len(cps), len(th.Turns))
}
