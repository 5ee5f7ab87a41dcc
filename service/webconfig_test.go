package service

import (
	"testing"

	"github.com/adaptrag/adaptrag/graph"
)

// /ui/config.json says whether the server keeps threads, so that the page
// sends "thread" only to a server that takes it.
func TestUIConfigThreads(t *testing.T) {
	for _, store := range []bool{false, true} {
		p := sampleParts(t)
		if store {
			p.opts.Threads = graph.NewMemoryCheckpointer()
		}
		s := newServer(t, Config{Pipeline: p.pipeline(t), Logger: discard()})
		var cfg uiConfig
		wantOK(t, s.do(t, call{method: "GET", path: "/ui/config.json"}), &cfg)
		if cfg.Threads != store || cfg.Limits.MaxQuestionRunes == 0 {
			t.Errorf("store %v: ui config %+v", store, cfg)
		}
	}
}
