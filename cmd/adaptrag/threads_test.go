package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// ask --thread keeps the conversation across invocations: the second
// invocation's follow-up gets the first one's turns, a clarifying question
// is answered by the next invocation, and --history is refused beside it.
func TestAskThreadAcrossInvocations(t *testing.T) {
	db := "sqlite:" + filepath.Join(t.TempDir(), "threads.db")
	type v1 struct {
		Answer     string `json:"answer"`
		AnsweredBy string `json:"answered_by"`
		Query      struct {
			Text string `json:"text"`
		} `json:"query"`
	}
	ask := func(q string) v1 {
		t.Helper()
		out, errs, code := cli(t, "ask", "--json", "--thread", "t1", "--threads", db, q)
		if code != 0 {
			t.Fatalf("ask %q: exit %d: %s", q, code, errs)
		}
		var r v1
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		return r
	}
	ask("P-204 和 P-205 哪个更便宜？")
	r := ask("那这个能换吗？")
	if r.AnsweredBy != "clarify" {
		t.Fatalf("the follow-up did not see the first turn: answered by %s: %q", r.AnsweredBy, r.Answer)
	}
	r = ask("P-205")
	if r.AnsweredBy == "clarify" || !strings.Contains(r.Query.Text, "P-205") {
		t.Fatalf("the reply did not resume the clarification: %+v", r)
	}
	if _, errs, code := cli(t, "ask", "--thread", "t1", "--threads", db, "--history", "x", "q"); code != 2 || !strings.Contains(errs, "--thread") {
		t.Fatalf("--thread with --history: exit %d: %s", code, errs)
	}
	// Without --thread nothing is remembered.
	out, _, code := cli(t, "ask", "--json", "那这个能换吗？")
	if code != 0 || strings.Contains(out, `"answered_by": "clarify"`) {
		t.Fatalf("a question without a thread used one: %s", out)
	}
}
