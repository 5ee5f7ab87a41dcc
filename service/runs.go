package service

import (
	"crypto/rand"
	"encoding/hex"
	"sync"

	"github.com/adaptrag/adaptrag/graph"
)

// newRunID returns a random id for a run: 16 bytes in hex, the shape of a
// trace id, but never shared between runs the way a caller's trace is.
func newRunID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// runStore keeps the paths of the last max runs for GET /v1/graph?run=ID.
// A run is visible only to the tenant that made it.
type runStore struct {
	mu    sync.Mutex
	max   int
	ring  []string // ids, oldest at next once full
	next  int
	paths map[string]storedRun
}

type storedRun struct {
	tenant string
	path   graph.Path
}

func newRunStore(max int) *runStore {
	return &runStore{max: max, ring: make([]string, 0, max), paths: make(map[string]storedRun, max)}
}

// put records the path of run id, forgetting the oldest run when full.
func (s *runStore) put(id, tenant string, p graph.Path) {
	if s.max <= 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.paths[id]; ok {
		s.paths[id] = storedRun{tenant, p}
		return
	}
	if len(s.ring) < s.max {
		s.ring = append(s.ring, id)
	} else {
		delete(s.paths, s.ring[s.next])
		s.ring[s.next] = id
		s.next = (s.next + 1) % s.max
	}
	s.paths[id] = storedRun{tenant, p}
}

// get returns the path of run id if tenant made it.
func (s *runStore) get(id, tenant string) (graph.Path, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.paths[id]
	if !ok || r.tenant != tenant {
		return graph.Path{}, false
	}
	return r.path, true
}

func (s *runStore) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.paths)
}
