package agent

import (
	"sync"

	"github.com/go-json-experiment/json/jsontext"
)

// ReasoningLog keeps the reasoning details of assistant entries
// (*reasoning.Store beside the session file).
type ReasoningLog interface {
	// Put records the details of an assistant entry that is about to be
	// committed; it returns once they are durable.
	Put(entryID string, details jsontext.Value) error
	// Details returns what Put recorded for entryID, or nil.
	Details(entryID string) jsontext.Value
}

// memoryReasoning is the ReasoningLog of an agent without a sidecar.
type memoryReasoning struct {
	mu      sync.Mutex
	details map[string]jsontext.Value
}

func (m *memoryReasoning) Put(entryID string, details jsontext.Value) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.details[entryID] = details
	return nil
}

func (m *memoryReasoning) Details(entryID string) jsontext.Value {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.details[entryID]
}
