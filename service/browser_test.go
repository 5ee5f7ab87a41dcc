package service

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

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
