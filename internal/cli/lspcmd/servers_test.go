package lspcmd

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/tools"
)

func getenv(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

// Off (TINY_LSP=off, or neither write nor edit offered) is a nil
// Servers, which passes the checkpoint hook through untouched.
func TestServersOff(t *testing.T) {
	for _, o := range []RunOptions{
		{Getenv: getenv(map[string]string{"TINY_LSP": "Off"}), Plugins: []string{tools.PluginWrite}},
		{Getenv: getenv(nil), Plugins: []string{tools.PluginBash, tools.PluginRead}},
	} {
		o.Cwd = t.TempDir()
		s, err := NewServers(o)
		if s != nil || err != nil {
			t.Fatalf("%v: servers %v, %v", o.Plugins, s, err)
		}
		called := false
		hook := s.Before(func(context.Context, string, string, jsontext.Value) func() { called = true; return nil })
		hook(context.Background(), "1", "bash", nil)
		if !called || s.Tools() != nil || s.Note() != nil {
			t.Fatal("nil servers must pass the hook through and add nothing")
		}
		s.Close()
	}
	if DefaultTools(getenv(map[string]string{"TINY_LSP": "off"})) != nil {
		t.Fatal("default tools with TINY_LSP=off")
	}
}

// On, the run offers the diagnostics tool a resume is checked against,
// keeps the checkpoint hook, and asks the checkpoints which files a
// command changed.
func TestServersOn(t *testing.T) {
	cwd := t.TempDir()
	var asked []string
	s, err := NewServers(RunOptions{Getenv: getenv(nil), Cwd: cwd, Plugins: []string{tools.PluginEdit},
		Changed: func(_ context.Context, id string) ([]string, error) {
			asked = append(asked, id)
			return []string{"notes.txt"}, nil
		}})
	if err != nil || s == nil {
		t.Fatalf("servers %v, %v", s, err)
	}
	defer s.Close()
	def := DefaultTools(getenv(nil))
	if len(s.Tools()) != 1 || len(def) != 1 || s.Tools()[0].Definition().Name != def[0].Definition().Name {
		t.Fatalf("tools %v, default %v", s.Tools(), def)
	}
	afterRan := false
	hook := s.Before(func(context.Context, string, string, jsontext.Value) func() { return func() { afterRan = true } })
	after := hook(context.Background(), "call-1", "bash", jsontext.Value(`{"command":"true"}`))
	if after == nil {
		t.Fatal("the checkpoint's after func was lost")
	}
	after()
	if !afterRan {
		t.Fatal("the checkpoint's after func is not the one returned")
	}
	if note := s.Note()(context.Background(), "call-1", "bash", nil, false); note != "" {
		t.Fatalf("note for a file no server checks: %q", note)
	}
	if len(asked) != 1 || asked[0] != "call-1" {
		t.Fatalf("Changed asked %v", asked)
	}
}

// A broken .lsp.json stops the run with a line naming the file and the
// way out.
func TestServersBadProjectFile(t *testing.T) {
	cwd := t.TempDir()
	if err := os.WriteFile(filepath.Join(cwd, ".lsp.json"), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := NewServers(RunOptions{Getenv: getenv(nil), Cwd: cwd, Plugins: []string{tools.PluginWrite}})
	if err == nil || !strings.Contains(err.Error(), ".lsp.json") || !strings.Contains(err.Error(), "TINY_LSP=off") {
		t.Fatalf("err = %v", err)
	}
}
