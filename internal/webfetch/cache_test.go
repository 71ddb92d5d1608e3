package webfetch

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// The cache holds at most cacheEntries pages and cacheBytes of text,
// dropping the oldest first, and keeps no page larger than a quarter of it.
func TestCacheBounds(t *testing.T) {
	now := time.Now()
	c := newCache(func() time.Time { return now })
	for i := range cacheEntries + 5 {
		now = now.Add(time.Millisecond)
		c.put(fmt.Sprint(i), &Page{Text: "x"})
	}
	if len(c.entries) != cacheEntries {
		t.Fatalf("%d entries", len(c.entries))
	}
	if _, ok := c.get("0"); ok {
		t.Error("the oldest page was kept")
	}
	if _, ok := c.get(fmt.Sprint(cacheEntries + 4)); !ok {
		t.Error("the newest page was dropped")
	}
	big := strings.Repeat("y", cacheBytes/4)
	for i := range 6 {
		now = now.Add(time.Millisecond)
		c.put(fmt.Sprint("big", i), &Page{Text: big})
	}
	if c.bytes > cacheBytes || len(c.entries) > cacheEntries {
		t.Fatalf("%d bytes in %d entries", c.bytes, len(c.entries))
	}
	if _, ok := c.get("big5"); !ok {
		t.Error("the newest big page was dropped")
	}
	c.put("huge", &Page{Text: big + "z"})
	if _, ok := c.get("huge"); ok {
		t.Error("a page over a quarter of the cache was kept")
	}
	now = now.Add(CacheTTL)
	if _, ok := c.get("big5"); ok {
		t.Error("a page older than 15 minutes was answered")
	}
}
