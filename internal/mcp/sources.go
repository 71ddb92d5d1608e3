package mcp

import (
	"errors"
	"io/fs"
	"slices"
	"strings"
)

// Scopes of an MCP configuration file, from the highest precedence down:
// a server defined in a higher one hides the same alias below it.
const (
	ScopeEnv      = "env"      // the file named by $TINY_MCP_CONFIG
	ScopeLocal    = "local"    // .tiny-agent/mcp.json: this project, this user
	ScopeProject  = "project"  // .mcp.json: shared with the project
	ScopeSettings = "settings" // [mcp_servers] of the settings files
	ScopeUser     = "user"     // ~/.config/tiny-go/mcp.json: every project
)

// SourceFile is one configuration file to read, at its scope.
type SourceFile struct {
	Scope string
	Path  string
}

// LoadSources reads every file that exists and merges them by precedence
// (files is highest first): the first definition of an alias wins, and its
// Source says which file it came from. A file that is missing is skipped,
// except the one $TINY_MCP_CONFIG names; one that is broken is an error
// naming it.
func LoadSources(files []SourceFile, env func(string) (string, bool)) (Catalog, error) {
	var merged Catalog
	seen := make(map[string]bool)
	var paths []string
	for _, f := range files {
		c, err := LoadCatalog(f.Path, env)
		if errors.Is(err, fs.ErrNotExist) && f.Scope != ScopeEnv {
			continue
		}
		if err != nil {
			return Catalog{}, err
		}
		paths = append(paths, f.Path)
		for _, s := range c.Servers {
			if seen[s.Alias] {
				continue
			}
			seen[s.Alias] = true
			if s.Source == "" {
				s.Source = f.Scope + ": " + f.Path
			}
			merged.Servers = append(merged.Servers, s)
		}
	}
	slices.SortFunc(merged.Servers, func(a, b Server) int { return strings.Compare(a.Alias, b.Alias) })
	merged.Path = strings.Join(paths, ", ")
	return merged, nil
}

// Merge adds the servers of lower whose aliases c does not define.
func (c Catalog) Merge(lower Catalog) Catalog {
	out := Catalog{Path: c.Path, Servers: slices.Clone(c.Servers)}
	for _, s := range lower.Servers {
		if !slices.ContainsFunc(out.Servers, func(t Server) bool { return t.Alias == s.Alias }) {
			out.Servers = append(out.Servers, s)
		}
	}
	if lower.Path != "" {
		out.Path = strings.TrimPrefix(out.Path+", "+lower.Path, ", ")
	}
	slices.SortFunc(out.Servers, func(a, b Server) int { return strings.Compare(a.Alias, b.Alias) })
	return out
}
