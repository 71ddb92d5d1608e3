package webfetch

import (
	"sync"
	"time"
)

// cacheEntries bounds the cache: the oldest entry goes first.
const cacheEntries = 64

// cache keeps converted pages for CacheTTL, by the URL asked for.
type cache struct {
	mu      sync.Mutex
	now     func() time.Time
	entries map[string]cached
}

type cached struct {
	page    *Page
	expires time.Time
}

func newCache(now func() time.Time) *cache {
	return &cache{now: now, entries: map[string]cached{}}
}

func (c *cache) get(key string) (*Page, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok || !c.now().Before(e.expires) {
		delete(c.entries, key)
		return nil, false
	}
	return e.page, true
}

func (c *cache) put(key string, p *Page) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	if len(c.entries) >= cacheEntries {
		oldest := ""
		for k, e := range c.entries {
			if !now.Before(e.expires) {
				delete(c.entries, k)
				continue
			}
			if oldest == "" || e.expires.Before(c.entries[oldest].expires) {
				oldest = k
			}
		}
		if len(c.entries) >= cacheEntries {
			delete(c.entries, oldest)
		}
	}
	c.entries[key] = cached{page: p, expires: now.Add(CacheTTL)}
}
