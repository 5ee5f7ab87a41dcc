package graph

import (
	"context"
	"slices"
	"sync"
)

// MemoryCheckpointer keeps checkpoints in the process's memory: for tests,
// and for threads that need not outlive the process. It is safe for
// concurrent use; the zero value is not ready, use NewMemoryCheckpointer.
type MemoryCheckpointer struct {
	mu      sync.Mutex
	threads map[string]*memThread
}

type memThread struct {
	head string
	cps  []Checkpoint // oldest first
}

// NewMemoryCheckpointer returns an empty in-memory checkpointer.
func NewMemoryCheckpointer() *MemoryCheckpointer {
	return &MemoryCheckpointer{threads: map[string]*memThread{}}
}

func copyCheckpoint(c Checkpoint) Checkpoint {
	c.Next = slices.Clone(c.Next)
	c.State = slices.Clone(c.State)
	c.Run = slices.Clone(c.Run)
	return c
}

// Put stores cp as the thread's new head if head is its current head.
func (m *MemoryCheckpointer) Put(ctx context.Context, cp Checkpoint, head string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := ValidateCheckpoint(cp); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.threads[cp.Thread]
	cur := ""
	if t != nil {
		cur = t.head
	}
	if cur != head {
		return &ConflictError{Thread: cp.Thread, Want: head, Head: cur}
	}
	if t == nil {
		t = &memThread{}
		m.threads[cp.Thread] = t
	}
	for _, c := range t.cps {
		if c.ID == cp.ID {
			return &ConflictError{Thread: cp.Thread, Want: head, Head: cur}
		}
	}
	t.cps = append(t.cps, copyCheckpoint(cp))
	t.head = cp.ID
	return nil
}

// Latest returns the thread's head.
func (m *MemoryCheckpointer) Latest(ctx context.Context, thread string) (Checkpoint, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.threads[thread]
	if t == nil {
		return Checkpoint{}, noCheckpoint(thread, "")
	}
	return m.get(t, thread, t.head)
}

func (m *MemoryCheckpointer) get(t *memThread, thread, id string) (Checkpoint, error) {
	for _, c := range t.cps {
		if c.ID == id {
			return copyCheckpoint(c), nil
		}
	}
	return Checkpoint{}, noCheckpoint(thread, id)
}

// Get returns one checkpoint of the thread.
func (m *MemoryCheckpointer) Get(ctx context.Context, thread, id string) (Checkpoint, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.threads[thread]
	if t == nil {
		return Checkpoint{}, noCheckpoint(thread, id)
	}
	return m.get(t, thread, id)
}

// List returns the thread's checkpoints, newest first.
func (m *MemoryCheckpointer) List(ctx context.Context, thread string) ([]Checkpoint, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.threads[thread]
	if t == nil {
		return nil, nil
	}
	out := make([]Checkpoint, 0, len(t.cps))
	for i := len(t.cps) - 1; i >= 0; i-- {
		out = append(out, copyCheckpoint(t.cps[i]))
	}
	return out, nil
}

// Delete removes the thread.
func (m *MemoryCheckpointer) Delete(ctx context.Context, thread string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.threads, thread)
	return nil
}
