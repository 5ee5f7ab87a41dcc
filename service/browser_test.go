package service

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/adaptrag/adaptrag"
	"github.com/adaptrag/adaptrag/graph"
	"github.com/chromedp/chromedp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// chromium returns the browser the page is tested in: $ADAPTRAG_CHROMIUM,
// else Debian's /usr/bin/chromium. The test is skipped without one, unless
// ADAPTRAG_REQUIRE_CHROMIUM=1 (CI) makes that a failure.
func chromium(t *testing.T) string {
	path := cmp.Or(os.Getenv("ADAPTRAG_CHROMIUM"), "/usr/bin/chromium")
	if _, err := os.Stat(path); err != nil {
		msg := fmt.Sprintf("browser test: no Chromium at %s (scripts/install-chromium.sh installs it, or set ADAPTRAG_CHROMIUM)", path)
		if os.Getenv("ADAPTRAG_REQUIRE_CHROMIUM") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg + "; skipped")
	}
	return path
}

// pageState is what the browser test reads off the page after a run.
type pageState struct {
	Route     string   `json:"route"`     // data-route of the route badge
	Label     string   `json:"label"`     // its text
	Heading   string   `json:"heading"`   // the route card's heading (language)
	Visited   []string `json:"visited"`   // labels of the nodes highlighted in the rendered SVG
	Edges     int      `json:"edges"`     // highlighted edges in the SVG
	Nodes     []string `json:"nodes"`     // the rows of the node table, in order
	Citations []string `json:"citations"` // "origin · locator" of each citation
	Answer    string   `json:"answer"`    // the last turn's answer
	Turns     int      `json:"turns"`
	Trace     string   `json:"trace"` // the Jaeger link
	Overflow  bool     `json:"overflow"`
}

const readPage = `(() => {
  const r = document.querySelector("#route");
  const turns = document.querySelectorAll("#turns .turn");
  return {
    route: r.dataset.route, label: r.textContent,
    heading: document.querySelector('[data-i18n="route"]').textContent,
    visited: [...document.querySelectorAll("#diagram svg g.node.visited")].map((g) => g.textContent.trim()),
    edges: [...document.querySelectorAll("#diagram svg path")].filter((p) => (p.getAttribute("style") || "").includes("stroke-width:3px")).length,
    nodes: [...document.querySelectorAll("#nodes tbody tr")].map((tr) => tr.dataset.node),
    citations: [...document.querySelectorAll("#citations li.citation")].map((li) => li.querySelector(".origin").textContent + (li.querySelector(".locator") ? li.querySelector(".locator").textContent : "")),
    answer: turns.length ? turns[turns.length - 1].querySelector(".a").textContent : "",
    turns: turns.length,
    trace: document.querySelector("#trace a") ? document.querySelector("#trace a").href : "",
    overflow: document.documentElement.scrollWidth > window.innerWidth + 1,
  };
})()`

// TestBrowser opens the page in headless Chromium, asks one question of
// each route and checks what a person sees: the route, the path lit on the
// diagram, the citations with their origin, the node timings, the trace
// link, both languages, and a phone-width layout. With
// ADAPTRAG_SCREENSHOT=FILE it saves a screenshot there (docs/service.png).
func TestBrowser(t *testing.T) {
	exe := chromium(t)
	tp := sdktrace.NewTracerProvider()
	p := sampleParts(t)
	p.opts.TracerProvider = tp
	s := newServer(t, Config{Pipeline: p.pipeline(t), TracerProvider: tp, JaegerUI: "http://localhost:16686"})

	actx, cancel := chromedp.NewExecAllocator(t.Context(),
		chromedp.ExecPath(exe), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 1100))
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 90*time.Second)
	defer cancel()

	// Every console error and exception of the page fails the test (a
	// script error, a refused resource, a CSP violation).
	var mu sync.Mutex
	var problems []string
	var expectRefusal atomic.Bool
	messages := chromedp.Console(ctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			if strings.Contains(m.Text, "status of 400") && strings.HasSuffix(m.URL, "/v1/ask") && expectRefusal.Load() {
				continue // the question refused on purpose below
			}
			if m.IsException() || m.Type == "error" || m.Type == "warning" && strings.Contains(m.Text, "Content Security Policy") {
				mu.Lock()
				problems = append(problems, fmt.Sprintf("%s: %s (%s:%d)", m.Type, m.Text, m.URL, m.Line+1))
				mu.Unlock()
			}
		}
	}()

	if err := chromedp.Do(ctx, chromedp.Navigate(s.url), chromedp.WaitVisible(chromedp.CSS(`body[data-ready="true"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#diagram svg`))); err != nil {
		t.Fatalf("load the page: %v", err)
	}
	tcs := []struct {
		q, route, heading string
		retrieves         []string // nodes the route must take
		cites             bool
	}{
		{qChitchat, "chitchat", "路由", nil, false},
		{qFactual, "factual", "路由", []string{"dense", "evidence", "generate"}, true},
		{qAnalytical, "analytical", "路由", []string{"hybrid", "rerank", "evidence", "generate"}, true},
		{"Compare travel claims and entertainment claims", "analytical", "Route", []string{"hybrid", "rerank"}, true},
	}
	for i, tc := range tcs {
		if err := chromedp.Do(ctx,
			chromedp.SetValue(chromedp.CSS("#question"), tc.q),
			chromedp.Click(chromedp.CSS("#send")),
			chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`#turns .turn:nth-child(%d)[data-state="done"]`, i+1))),
		); err != nil {
			t.Fatalf("%s: %v", tc.q, err)
		}
		got, err := chromedp.Run(ctx, chromedp.Evaluate[pageState](readPage))
		if err != nil {
			t.Fatal(err)
		}
		if got.Route != tc.route || !strings.Contains(got.Label, map[string]string{"路由": "置信度", "Route": "confidence"}[tc.heading]) || got.Heading != tc.heading {
			t.Errorf("%s: route %q label %q heading %q, want %s in the question's language", tc.q, got.Route, got.Label, got.Heading, tc.route)
		}
		want := append([]string{"START", "END"}, got.Nodes...)
		if !sameSet(got.Visited, want) || got.Edges != len(got.Nodes)+1 {
			t.Errorf("%s: highlighted nodes %v and %d edges, want %v and %d edges", tc.q, got.Visited, got.Edges, want, len(got.Nodes)+1)
		}
		for _, n := range tc.retrieves {
			if !slices.Contains(got.Nodes, n) {
				t.Errorf("%s: path %v lacks %s", tc.q, got.Nodes, n)
			}
		}
		if tc.route == "chitchat" && slices.ContainsFunc(got.Nodes, func(n string) bool { return n == "dense" || n == "hybrid" }) {
			t.Errorf("small talk retrieved: %v", got.Nodes)
		}
		if tc.cites != (len(got.Citations) > 0) {
			t.Errorf("%s: citations %v", tc.q, got.Citations)
		}
		for _, c := range got.Citations {
			if c == "" || !strings.Contains(c, ".") { // an origin is a file name
				t.Errorf("%s: citation without an origin: %q", tc.q, c)
			}
		}
		if got.Answer == "" || got.Turns != i+1 || !strings.HasPrefix(got.Trace, "http://localhost:16686/trace/") {
			t.Errorf("%s: answer %q, %d turns, trace link %q", tc.q, got.Answer, got.Turns, got.Trace)
		}
		if got.Overflow {
			t.Errorf("%s: the page is wider than the window", tc.q)
		}
	}
	if path := os.Getenv("ADAPTRAG_SCREENSHOT"); path != "" {
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot: %s (%d bytes)", path, len(png))
	}
	// Without a thread store the page shows no thread (and sent history).
	hidden, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelector("#thread-bar").hidden && document.querySelector("#checkpoints-card").hidden && !location.hash.includes("thread")`))
	if err != nil {
		t.Fatal(err)
	}
	if !hidden {
		t.Error("a server without threads: the page shows a thread")
	}
	// The question box takes what the server takes, no more.
	maxLen, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelector("#question").maxLength`))
	if err != nil {
		t.Fatal(err)
	}
	if want := p.pipeline(t).MaxQuestionRunes(); maxLen != want {
		t.Errorf("the question box takes %d characters, the server %d", maxLen, want)
	}
	// A run that fails leaves no path lit: not the previous run's.
	expectRefusal.Store(true)
	n := len(tcs) + 1
	if err := chromedp.Do(ctx,
		chromedp.SetValue(chromedp.CSS("#question"), manyParts(DefaultMaxQuestionParts+1)),
		chromedp.Click(chromedp.CSS("#send")),
		chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`#turns .turn:nth-child(%d)[data-state="error"]`, n))),
	); err != nil {
		t.Fatalf("a failing question: %v", err)
	}
	got, err := chromedp.Run(ctx, chromedp.Evaluate[pageState](readPage))
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Visited) != 0 || got.Edges != 0 || len(got.Nodes) != 0 || !strings.Contains(got.Answer, string(CodeTooManyParts)) {
		t.Errorf("after an error: highlighted %v, %d edges, node rows %v, answer %q", got.Visited, got.Edges, got.Nodes, got.Answer)
	}
	// At phone width everything fits in one column.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 844)); err != nil {
		t.Fatal(err)
	}
	got, err = chromedp.Run(ctx, chromedp.Evaluate[pageState](readPage))
	if err != nil {
		t.Fatal(err)
	}
	if got.Overflow {
		t.Error("at phone width the page is wider than the screen")
	}
	if path := os.Getenv("ADAPTRAG_SCREENSHOT_PHONE"); path != "" {
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err == nil {
			err = os.WriteFile(path, png, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for _, p := range problems {
		t.Errorf("page console: %s", p)
	}
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b))
}

// threadPage is what the thread test reads off the page.
type threadPage struct {
	Thread      string   `json:"thread"`      // the id shown
	Hash        string   `json:"hash"`        // location.hash
	Stored      string   `json:"stored"`      // localStorage's id
	Count       string   `json:"count"`       // "N messages"
	Questions   []string `json:"questions"`   // the turns' questions
	Answers     []string `json:"answers"`     // and answers
	AnsweredBy  []string `json:"answered_by"` // data-answered-by of each turn ("" when restored)
	Checkpoints []struct {
		ID     string `json:"id"`
		Parent string `json:"parent"`
		Step   string `json:"step"`
		Status string `json:"status"`
		Next   string `json:"next"`
		Time   string `json:"time"`
	} `json:"checkpoints"`
	Clarify  string `json:"clarify"` // the waiting note, "" when hidden
	Overflow bool   `json:"overflow"`
}

const readThread = `(() => {
  const turns = [...document.querySelectorAll("#turns .turn")];
  const cl = document.querySelector("#clarify");
  return {
    thread: document.querySelector("#thread-id").textContent, hash: location.hash,
    stored: localStorage.getItem("adaptrag.thread") || "", count: document.querySelector("#thread-turns").textContent,
    questions: turns.map((t) => t.querySelector(".q").textContent), answers: turns.map((t) => t.querySelector(".a").textContent),
    answered_by: turns.map((t) => t.dataset.answeredBy || ""),
    checkpoints: [...document.querySelectorAll("#checkpoints tbody tr")].map((tr) => {
      const c = [...tr.children].map((td) => td.textContent);
      return { id: c[0], parent: c[1], step: c[2], status: c[3], next: c[4], time: c[5] };
    }),
    clarify: cl.hidden ? "" : cl.textContent,
    overflow: document.documentElement.scrollWidth > window.innerWidth + 1,
  };
})()`

// TestBrowserThreads holds a conversation on a server with a thread store:
// the page makes a thread id, sends every question on it, shows its turns
// and checkpoints after each answer; the second question is a follow-up
// the server asks back about, a reload keeps the thread and the reply to
// the clarification resumes it; "new conversation" starts another thread.
// With ADAPTRAG_SCREENSHOT_THREADS=FILE it saves a screenshot there.
func TestBrowserThreads(t *testing.T) {
	exe := chromium(t)
	p := sampleParts(t)
	p.opts.Threads = graph.NewMemoryCheckpointer()
	s := newServer(t, Config{Pipeline: p.pipeline(t), Logger: discard()})

	actx, cancel := chromedp.NewExecAllocator(t.Context(),
		chromedp.ExecPath(exe), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 1100))
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	var mu sync.Mutex
	var problems []string
	messages := chromedp.Console(ctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.IsException() || m.Type == "error" || m.Type == "warning" && strings.Contains(m.Text, "Content Security Policy") {
				mu.Lock()
				problems = append(problems, fmt.Sprintf("%s: %s (%s:%d)", m.Type, m.Text, m.URL, m.Line+1))
				mu.Unlock()
			}
		}
	}()
	read := func() threadPage {
		t.Helper()
		got, err := chromedp.Run(ctx, chromedp.Evaluate[threadPage](readThread))
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	ask := func(q string, n int) threadPage {
		t.Helper()
		if err := chromedp.Do(ctx,
			chromedp.SetValue(chromedp.CSS("#question"), q),
			chromedp.Click(chromedp.CSS("#send")),
			chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`#turns .turn:nth-child(%d)[data-state="done"]`, n))),
		); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return read()
	}
	// server is the thread as the server has it.
	server := func(id string) adaptrag.ThreadInfo {
		t.Helper()
		var info adaptrag.ThreadInfo
		wantOK(t, s.do(t, call{method: http.MethodGet, path: "/v1/threads/" + url.PathEscape(id)}), &info)
		return info
	}
	// sameCheckpoints says whether the page lists the server's checkpoints.
	sameCheckpoints := func(got threadPage, info adaptrag.ThreadInfo) {
		t.Helper()
		if len(got.Checkpoints) != len(info.Checkpoints) || len(got.Checkpoints) == 0 {
			t.Fatalf("the page lists %d checkpoints, the server has %d", len(got.Checkpoints), len(info.Checkpoints))
		}
		for i, c := range info.Checkpoints {
			g := got.Checkpoints[i]
			if g.ID != c.ID || g.Parent != cmp.Or(c.Parent, "–") || g.Step != fmt.Sprint(c.Step) || g.Status != string(c.Status) ||
				g.Next != cmp.Or(strings.Join(c.Next, ", "), "–") || len(g.Time) != len("15:04:05.000") {
				t.Errorf("checkpoint %d: page %+v, server %+v", i, g, c)
			}
		}
	}

	if err := chromedp.Do(ctx, chromedp.Navigate(s.url), chromedp.WaitVisible(chromedp.CSS(`body[data-ready="true"]`))); err != nil {
		t.Fatalf("load the page: %v", err)
	}
	start := read()
	if !strings.HasPrefix(start.Thread, "web-") || start.Hash != "#thread="+start.Thread || start.Stored != start.Thread || len(start.Checkpoints) != 0 {
		t.Fatalf("a new page: thread %q, fragment %q, stored %q, %d checkpoints", start.Thread, start.Hash, start.Stored, len(start.Checkpoints))
	}
	id := start.Thread

	const q1, q2, q3 = "P-204 和 P-205 哪个更便宜？", "那这个能换吗？", "P-205"
	ask(q1, 1)
	got := ask(q2, 2)
	if got.AnsweredBy[1] != "clarify" || got.Clarify == "" || !strings.Contains(got.Clarify, "P-204") {
		t.Fatalf("the follow-up was not asked back on the thread: answered by %q, %q; note %q", got.AnsweredBy[1], got.Answers[1], got.Clarify)
	}
	info := server(id)
	if len(info.Turns) != 4 || info.Clarify == nil || got.Count != "4 轮消息" {
		t.Fatalf("after two questions: the server has %d turns (clarify %v), the page says %q", len(info.Turns), info.Clarify, got.Count)
	}
	sameCheckpoints(got, info)
	if got.Checkpoints[0].Status != string(graph.StatusInterrupted) {
		t.Errorf("the newest checkpoint is %q, want the interrupted run", got.Checkpoints[0].Status)
	}
	// Each checkpoint's parent is listed too, but the thread's first.
	listed := map[string]bool{}
	for _, c := range got.Checkpoints {
		listed[c.ID] = true
	}
	for _, c := range got.Checkpoints[:len(got.Checkpoints)-1] {
		if !listed[c.Parent] {
			t.Errorf("checkpoint %s: parent %q is not listed", c.ID, c.Parent)
		}
	}

	// A reload continues the thread: its turns come back from the server.
	if err := chromedp.Do(ctx, chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`body[data-ready="true"]`))); err != nil {
		t.Fatal(err)
	}
	got = read()
	if got.Thread != id || !slices.Equal(got.Questions, []string{q1, q2}) || got.Answers[0] != info.Turns[1].Content || got.Answers[1] != info.Turns[3].Content || got.Clarify == "" {
		t.Fatalf("after a reload: thread %q (want %q), questions %q, answers %q, note %q", got.Thread, id, got.Questions, got.Answers, got.Clarify)
	}
	sameCheckpoints(got, info)
	// The reply to the clarification resumes the question.
	got = ask(q3, 3)
	info = server(id)
	if got.AnsweredBy[2] == "" || got.AnsweredBy[2] == "clarify" || got.Clarify != "" || len(info.Turns) != 6 || info.Turns[4].Content != q3 {
		t.Fatalf("the reply did not resume the thread: answered by %q, note %q, server turns %d", got.AnsweredBy[2], got.Clarify, len(info.Turns))
	}
	sameCheckpoints(got, info)
	if got.Checkpoints[0].Status != string(graph.StatusDone) || got.Overflow {
		t.Errorf("after the reply: newest checkpoint %q, overflow %v", got.Checkpoints[0].Status, got.Overflow)
	}
	if path := os.Getenv("ADAPTRAG_SCREENSHOT_THREADS"); path != "" {
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err == nil {
			err = os.WriteFile(path, png, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}

	// "New conversation" starts another thread, empty.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#new-chat"))); err != nil {
		t.Fatal(err)
	}
	got = read()
	if got.Thread == id || !strings.HasPrefix(got.Thread, "web-") || got.Hash != "#thread="+got.Thread || got.Stored != got.Thread ||
		len(got.Questions) != 0 || len(got.Checkpoints) != 0 {
		t.Fatalf("a new conversation: thread %q (was %q), fragment %q, %d turns, %d checkpoints", got.Thread, id, got.Hash, len(got.Questions), len(got.Checkpoints))
	}
	if got = ask(q2, 1); got.AnsweredBy[0] == "clarify" {
		t.Errorf("the new thread inherited the old one's turns: %q", got.Answers[0])
	}
	if info := server(got.Thread); len(info.Turns) != 2 {
		t.Errorf("the new thread has %d turns, want 2", len(info.Turns))
	}
	mu.Lock()
	defer mu.Unlock()
	for _, p := range problems {
		t.Errorf("page console: %s", p)
	}
}

// startBrowser opens headless Chromium; problems returns the page's
// console errors and exceptions so far.
func startBrowser(t *testing.T, exe string) (ctx context.Context, problems func() []string) {
	actx, cancel := chromedp.NewExecAllocator(t.Context(),
		chromedp.ExecPath(exe), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 1100))
	t.Cleanup(cancel)
	ctx, cancel = chromedp.NewContext(actx)
	t.Cleanup(cancel)
	ctx, cancel = context.WithTimeout(ctx, 60*time.Second)
	t.Cleanup(cancel)
	var mu sync.Mutex
	var seen []string
	messages := chromedp.Console(ctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.IsException() || m.Type == "error" || m.Type == "warning" && strings.Contains(m.Text, "Content Security Policy") {
				mu.Lock()
				seen = append(seen, fmt.Sprintf("%s: %s (%s:%d)", m.Type, m.Text, m.URL, m.Line+1))
				mu.Unlock()
			}
		}
	}()
	return ctx, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(seen)
	}
}

// With API keys, a reload keeps the thread, and its turns are read once the
// key is there (the page keeps the key for the tab).
func TestBrowserThreadsAuth(t *testing.T) {
	exe := chromium(t)
	p := tenantParts(t)
	p.opts.Threads = graph.NewMemoryCheckpointer()
	s := newServer(t, Config{Pipeline: p.pipeline(t), Keys: []Key{keyAcme, keyGlobex}, Logger: discard()})
	ctx, problems := startBrowser(t, exe)
	const q = "How many days of annual leave?"
	if err := chromedp.Do(ctx, chromedp.Navigate(s.url), chromedp.WaitVisible(chromedp.CSS(`body[data-ready="true"]`)),
		chromedp.SendKeys(chromedp.CSS("#key"), keyAcme.Key), chromedp.Blur(chromedp.CSS("#key")),
		chromedp.SetValue(chromedp.CSS("#question"), q), chromedp.Click(chromedp.CSS("#send")),
		chromedp.WaitVisible(chromedp.CSS(`#turns .turn:nth-child(1)[data-state="done"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#checkpoints tbody tr`)),
		chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`body[data-ready="true"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#turns .turn[data-restored="true"]`)),
	); err != nil {
		t.Fatal(err)
	}
	got, err := chromedp.Run(ctx, chromedp.Evaluate[threadPage](readThread))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Questions, []string{q}) || len(got.Answers) != 1 || got.Answers[0] == "" || len(got.Checkpoints) == 0 {
		t.Fatalf("after a reload with a key: questions %q, answers %q, %d checkpoints", got.Questions, got.Answers, len(got.Checkpoints))
	}
	// Another tenant's key does not see it.
	wantError(t, s.do(t, call{method: http.MethodGet, path: "/v1/threads/" + url.PathEscape(got.Thread), key: keyGlobex.Key}), 404, CodeNotFound)
	for _, p := range problems() {
		t.Errorf("page console: %s", p)
	}
}
