package oauth

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// $BROWSER gets only a web address: a sign-in URL that a planted server
// made an option (or a local path) never reaches it.
func TestBrowserGetsOnlyWebAddresses(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "opened")
	script := filepath.Join(t.TempDir(), "browser")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho \"$1\" >> "+marker+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	var shown []string
	open := SystemBrowser(func(k string) string {
		if k == "BROWSER" {
			return script
		}
		return ""
	}, func(s string) { shown = append(shown, s) })
	for _, bad := range []string{"--new-instance", "file:///etc/passwd", "-profile /tmp/x"} {
		if err := open(context.Background(), bad); err == nil || !strings.Contains(err.Error(), "not an http(s) address") {
			t.Errorf("%q: %v", bad, err)
		}
	}
	if err := open(context.Background(), "https://auth.example/authorize?x=1"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		b, _ := os.ReadFile(marker)
		if string(b) == "https://auth.example/authorize?x=1\n" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("$BROWSER got %q", b)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(shown) != 4 {
		t.Errorf("the URL was not printed each time: %q", shown)
	}
}
