package query

import (
	"sort"
)

// Vocabulary is what a knowledge base names: its plans, stores, models,
// codes and the like, each with a kind shared by its siblings (the values
// of one table column are one kind). The rules read names and kinds from
// it instead of guessing them from a word's shape, so that "What about
// Flow?" after a question on Spark replaces Spark, and "它" after two stores
// asks which store. Package vocab builds one from a knowledge base's files.
// Implementations are safe for concurrent use.
type Vocabulary interface {
	// Names returns the names of the vocabulary found in text, in order of
	// position and without overlaps.
	Names(text string) []Name
}

// Name is a name of a Vocabulary found in a text.
type Name struct {
	Text       string // as written in the text
	Kind       string // the kind it shares with its siblings ("plans/Plan")
	Start, End int    // byte offsets in the text
}

// Entity kind of a name the knowledge base's vocabulary knows.
const KnownName EntityKind = "name"

// addNames turns the vocabulary's names in t into spans: a name replaces
// the spans it overlaps (a model number read by its shape takes the
// vocabulary's kind).
func (t *text) addNames() {
	if t.voc == nil {
		return
	}
	ns := t.voc.Names(t.src)
	if len(ns) == 0 {
		return
	}
	charAt := func(off int) int {
		return sort.Search(len(t.cs), func(k int) bool { return int(t.cs[k].off) >= off })
	}
	for _, n := range ns {
		if n.Start < 0 || n.End > len(t.src) || n.Start >= n.End {
			continue
		}
		i, j := charAt(n.Start), charAt(n.End)
		kept := t.spans[:0:0]
		for _, s := range t.spans {
			if s.j <= i || s.i >= j {
				kept = append(kept, s)
			}
		}
		kept = append(kept, span{kind: KnownName, vk: n.Kind, i: i, j: j})
		sort.SliceStable(kept, func(a, b int) bool { return kept[a].i < kept[b].i })
		t.spans = kept
	}
}

// kindKeys are the kinds two candidates compete on: the vocabulary's kind
// when the name is known; else the kind read from its shape and, for an
// identifier, its letter prefix (ND-E507 and ND-E509 are one kind whatever
// the cue before each).
func (s *span) kindKeys() []string {
	if s.vk != "" {
		return []string{"v:" + s.vk}
	}
	keys := []string{string(s.kind)}
	if s.subject() {
		if pre := alphaPrefix(s.key); pre != "" && pre != s.key {
			keys = append(keys, "prefix:"+pre)
		}
	}
	return keys
}

// StandIn returns the offline rules that stand in for r when it fails: r's
// own (with its vocabulary) when r is an Offline or an LLM, else Offline
// without a vocabulary.
func StandIn(r Rewriter) Offline {
	switch x := r.(type) {
	case Offline:
		return x
	case *Offline:
		if x != nil {
			return *x
		}
	case *LLM:
		if x != nil {
			return Offline{Window: x.cfg.Window, Vocab: x.cfg.Vocab, Tenants: x.cfg.Tenants}
		}
	}
	return Offline{}
}
