package main

// The project's own training examples, written for this router. Public
// pools have no Chinese analytical questions and few questions to a service
// desk, so they are generated here from hand-written templates and topic
// lists (data/templates.tsv, data/slots.tsv) from several domains, next to
// fixed examples (data/examples.tsv). Templates mix phrasings on purpose;
// the router must learn what a question asks, not one sentence shape.

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

type example struct {
	text, label string
}

// ownExamples returns the generated and the fixed examples of c; rng makes
// sampling reproducible.
func ownExamples(c *corpus, rng *rand.Rand) []example {
	var out []example
	add := func(label string, texts ...string) {
		for _, t := range texts {
			out = append(out, example{t, label})
		}
	}
	sample := func(all []string, n int) []string {
		rng.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
		return all[:min(n, len(all))]
	}
	// compare fills the comparison templates with every pair and aspect;
	// topic fills the one-topic templates of class with every topic.
	compare := func(lang string) []string {
		var xs []string
		for _, p := range c.slots[slotKey{"pair", lang}] {
			for _, a := range c.slot("aspect", lang) {
				for _, tpl := range c.templatesOf("analytical", lang, "compare") {
					xs = append(xs, fmt.Sprintf(tpl, p[0], p[1], a))
				}
			}
		}
		return xs
	}
	topic := func(class, lang string) []string {
		var xs []string
		for _, t := range c.slot("topic", lang) {
			for _, tpl := range c.templatesOf(class, lang, "topic") {
				xs = append(xs, fmt.Sprintf(tpl, t))
			}
		}
		return xs
	}
	// Chinese analytical and factual.
	zhA := compare("zh")
	add("analytical", sample(zhA, 300)...)
	add("analytical", sample(topic("analytical", "zh"), 150)...)
	add("analytical", c.fixedOf("analytical", "zh", "general")...)
	zhFs := sample(topic("factual", "zh"), 250)
	add("factual", zhFs...)
	zhService := c.fixedOf("factual", "zh", "service")
	add("factual", zhService...)
	// English analytical and factual.
	enA := compare("en")
	add("analytical", sample(enA, 200)...)
	add("analytical", sample(topic("analytical", "en"), 100)...)
	add("analytical", c.fixedOf("analytical", "en", "general")...)
	enFs := sample(topic("factual", "en"), 150)
	add("factual", enFs...)
	enService := c.fixedOf("factual", "en", "service")
	add("factual", enService...)
	for _, lang := range []string{"en", "zh"} {
		add("factual", c.fixedOf("factual", lang, "general")...)
	}
	for _, lang := range []string{"zh", "en"} {
		add("chitchat", c.fixedOf("chitchat", lang, "general")...)
	}
	for _, lang := range []string{"zh", "en"} {
		add("factual", c.fixedOf("factual", lang, "first-person")...)
	}
	for _, lang := range []string{"en", "zh"} {
		add("analytical", c.fixedOf("analytical", lang, "how-works")...)
	}
	// Small talk alone.
	add("chitchat", c.fixedOf("chitchat", "zh", "talk")...)
	add("chitchat", c.fixedOf("chitchat", "en", "talk")...)
	// Greeting + real question: labelled by the question, never chitchat.
	// A Chinese greeting is written without a space, an English one with.
	zhG, enG := c.slot("greeting", "zh"), c.slot("greeting", "en")
	for i, q := range append(append([]string{}, zhService...), zhFs[:min(60, len(zhFs))]...) {
		add("factual", zhG[i%len(zhG)]+q)
	}
	for i, q := range sample(append([]string{}, zhA...), 40) {
		add("analytical", zhG[(i+3)%len(zhG)]+q)
	}
	for i, q := range append(append([]string{}, enService...), enFs[:min(40, len(enFs))]...) {
		g := enG[i%len(enG)]
		if i%2 == 0 {
			q = strings.ToUpper(q[:1]) + q[1:] + "?"
		}
		add("factual", g+" "+q)
	}
	for i, q := range sample(append([]string{}, enA...), 30) {
		add("analytical", enG[(i+5)%len(enG)]+" "+q)
	}
	return out
}
