package adaptrag_test

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/adaptrag/adaptrag/plan"
)

// The defaults table of docs/architecture.md states what the code does:
// every plan.Settings field (by its JSON name) is in it, with the value
// plan.New gives a zero Settings, so the documentation cannot drift again
// (it said 0.25 for min_context_score while the code had 0.3).
func TestDocumentedDefaults(t *testing.T) {
	b, err := os.ReadFile("docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	start := strings.Index(doc, "Defaults (all in `plan.Settings`")
	if start < 0 {
		t.Fatal("docs/architecture.md has no defaults table")
	}
	documented := map[string]string{}
	cell := regexp.MustCompile("`([a-z_]+)`")
	for _, line := range strings.Split(doc[start:], "\n")[1:] {
		line = strings.TrimSpace(line)
		if line == "" && len(documented) > 0 {
			break
		}
		if !strings.HasPrefix(line, "|") || strings.HasPrefix(line, "|---") || strings.HasPrefix(line, "| setting") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := 0; i+1 < len(cells); i += 3 { // setting | default | (gap) | setting | default
			names := cell.FindAllStringSubmatch(cells[i], -1)
			values := strings.Split(cells[i+1], "/")
			if len(names) != len(values) {
				t.Fatalf("table row %q: %d settings, %d values", line, len(names), len(values))
			}
			for j, n := range names {
				documented[n[1]] = strings.TrimSpace(values[j])
			}
		}
	}
	raw, err := json.Marshal(plan.New(plan.Settings{}).Settings())
	if err != nil {
		t.Fatal(err)
	}
	var code map[string]any
	if err := json.Unmarshal(raw, &code); err != nil {
		t.Fatal(err)
	}
	for name, v := range code {
		want := fmt.Sprint(v)
		if v == nil {
			want = "none"
		}
		got, ok := documented[name]
		switch {
		case !ok:
			t.Errorf("plan.Settings field %s (default %s) is not in the table of docs/architecture.md", name, want)
		case got != want:
			t.Errorf("docs/architecture.md: %s = %s, the code's default is %s", name, got, want)
		}
		delete(documented, name)
	}
	for name := range documented {
		t.Errorf("docs/architecture.md documents %s, which plan.Settings does not have", name)
	}
}
