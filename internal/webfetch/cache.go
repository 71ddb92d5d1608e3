package webfetch

import (
	"sync"
	"time"
)

// The cache's bounds: a page is at most 10 MB by default, so entries
// alone would not bound the memory it holds.
const (
	cacheEntries = 64
	cacheBytes   = 32 << 20
)

// cache keeps converted pages for CacheTTL, by the URL asked for; the
// oldest go first when it is full, and a page larger than a quarter of it
// is not kept.
type cache struct {
	mu      sync.Mutex
	now     func() time.Time
	entries map[string]cached
	bytes   int
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
	if ok && !c.now().Before(e.expires) {
		c.remove(key)
		ok = false
	}
	return e.page, ok
}

func (c *cache) put(key string, p *Page) {
	size := len(p.Text)
	if size > cacheBytes/4 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.remove(key)
	now := c.now()
	for len(c.entries) > 0 && (len(c.entries) >= cacheEntries || c.bytes+size > cacheBytes) {
		oldest := ""
		for k, e := range c.entries {
			if oldest == "" || e.expires.Before(c.entries[oldest].expires) {
				oldest = k
			}
		}
		c.remove(oldest)
	}
	c.entries[key] = cached{page: p, expires: now.Add(CacheTTL)}
	c.bytes += size
}

// remove drops key; called with mu held.
func (c *cache) remove(key string) {
	if e, ok := c.entries[key]; ok {
		c.bytes -= len(e.page.Text)
		delete(c.entries, key)
	}
}
