package adaptrag_test

import (
	"context"
	"strings"
	"testing"

	"github.com/adaptrag/adaptrag"
)

// Replies are keyed by language tag: an entry for English replaces what it
// sets (the tag's case does not matter), the fields it leaves empty and
// the other languages keep the built-in wording.
func TestTextsByLanguage(t *testing.T) {
	f := newFixture(t)
	f.opts.Texts = adaptrag.Texts{Langs: map[string]adaptrag.Wording{"EN": {Greeting: "Howdy! Ask me about {topics}."}}}
	p := f.pipeline(t)
	greet := func(q string) string {
		t.Helper()
		res, err := p.Ask(context.Background(), adaptrag.Request{Question: q})
		if err != nil {
			t.Fatal(err)
		}
		return res.Answer
	}
	if got := greet("hello"); !strings.HasPrefix(got, "Howdy! Ask me about ") || strings.Contains(got, "{topics}") {
		t.Errorf("English greeting %q, want the configured one with the topics filled in", got)
	}
	def := adaptrag.DefaultTexts()
	zhGreeting, _, _ := strings.Cut(def.Langs["zh"].Greeting, "{topics}")
	if got := greet("你好"); !strings.HasPrefix(got, zhGreeting) {
		t.Errorf("Chinese greeting %q, want the built-in %q…", got, zhGreeting)
	}
	res, err := p.Ask(context.Background(), adaptrag.Request{Question: "What is the airspeed of an unladen zeppelin?"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Answer != def.Langs["en"].NotFound {
		t.Errorf("an English field left empty: %q, want the built-in %q", res.Answer, def.Langs["en"].NotFound)
	}
	if def.Default != adaptrag.DefaultLang || len(def.Langs) != 2 {
		t.Errorf("built-in texts: default %q, %d languages", def.Default, len(def.Langs))
	}
}
