package mcp

import (
	"context"
	"errors"
	"sync"

	"github.com/tiny-agent/tiny-go/internal/tools"
)

// Clients are the connected servers of one run.
type Clients []*Client

// ConnectAll connects to every server concurrently. If any fails, the
// others are closed and the first failure in servers order is returned.
func ConnectAll(ctx context.Context, servers []Server, opts Options) (Clients, error) {
	clients := make(Clients, len(servers))
	errs := make([]error, len(servers))
	var wg sync.WaitGroup
	for i, s := range servers {
		wg.Go(func() { clients[i], errs[i] = Connect(ctx, s, opts) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			clients.Close()
			return nil, err
		}
	}
	return clients, nil
}

// Tools are the offered tools of all clients, in server then allowlist order.
func (cs Clients) Tools() []tools.Tool {
	var out []tools.Tool
	for _, c := range cs {
		if c != nil {
			out = append(out, c.Tools()...)
		}
	}
	return out
}

// Close closes every client, also on error paths; nil entries are skipped.
func (cs Clients) Close() error {
	var errs []error
	for _, c := range cs {
		if c != nil {
			errs = append(errs, c.Close())
		}
	}
	return errors.Join(errs...)
}
