package mcpcmd

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-json-experiment/json"

	"github.com/tiny-agent/tiny-go/internal/config"
	"github.com/tiny-agent/tiny-go/internal/mcp"
)

// errNoServers is what --mcp and `mcp list` say when nothing defines a
// server.
var errNoServers = errors.New("no MCP servers are configured: add one with `tiny-go mcp add NAME -- COMMAND [ARGS...]` or `tiny-go mcp add --transport http NAME URL`, write .mcp.json, or set TINY_MCP_CONFIG (see docs/mcp.md)")

// scopeFiles are the MCP configuration files of cwd by scope.
func scopeFiles(io IO, cwd string) map[string]string {
	root := filepath.Dir(filepath.Dir(config.ProjectFile(cwd)))
	files := map[string]string{
		mcp.ScopeLocal:   filepath.Join(root, config.ProjectDir, "mcp.json"),
		mcp.ScopeProject: filepath.Join(root, ".mcp.json"),
	}
	if user := config.UserFile(io.Getenv); user != "" {
		files[mcp.ScopeUser] = filepath.Join(filepath.Dir(user), "mcp.json")
	}
	return files
}

// Catalog is the MCP catalog in effect, merged by precedence: the file
// of $TINY_MCP_CONFIG, the local file, the project's .mcp.json, the
// settings files' [mcp_servers], the user's file. ok is false when none
// defines a server.
func Catalog(io IO, cwd string) (c mcp.Catalog, ok bool, err error) {
	files := scopeFiles(io, cwd)
	var high []mcp.SourceFile
	if path := io.Getenv(mcp.ConfigEnv); path != "" {
		high = append(high, mcp.SourceFile{Scope: mcp.ScopeEnv, Path: path})
	}
	high = append(high, mcp.SourceFile{Scope: mcp.ScopeLocal, Path: files[mcp.ScopeLocal]}, mcp.SourceFile{Scope: mcp.ScopeProject, Path: files[mcp.ScopeProject]})
	if c, err = mcp.LoadSources(high, io.lookupEnv); err != nil {
		return mcp.Catalog{}, true, err
	}
	settings, err := settingsCatalog(io)
	if err != nil {
		return mcp.Catalog{}, true, err
	}
	c = c.Merge(settings)
	if user := files[mcp.ScopeUser]; user != "" {
		u, err := mcp.LoadSources([]mcp.SourceFile{{Scope: mcp.ScopeUser, Path: user}}, io.lookupEnv)
		if err != nil {
			return mcp.Catalog{}, true, err
		}
		c = c.Merge(u)
	}
	return c, len(c.Servers) > 0 || io.Getenv(mcp.ConfigEnv) != "", nil
}

// settingsCatalog is the [mcp_servers] of the settings files, one
// scope of the MCP catalog in effect (Catalog).
func settingsCatalog(io IO) (c mcp.Catalog, err error) {
	if io.Settings == nil {
		return mcp.Catalog{}, nil
	}
	var files []string
	for _, sv := range io.Settings.Servers() {
		data := append(append([]byte(`{"servers":{`+strings.TrimSpace(jsonString(sv.Alias))+`:`), sv.JSON...), "}}"...)
		one, err := mcp.ParseCatalog(data, io.lookupEnv)
		if err != nil {
			return mcp.Catalog{}, fmt.Errorf("%s: mcp_servers.%s: %w", sv.Source, sv.Alias, err)
		}
		for _, s := range one.Servers {
			s.Source = mcp.ScopeSettings + ": " + sv.Source.String()
			c.Servers = append(c.Servers, s)
		}
		if !slices.Contains(files, sv.Source.File) {
			files = append(files, sv.Source.File)
		}
	}
	c.Path = strings.Join(files, ", ")
	return c, nil
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// Select picks the servers of --mcp (names) from the catalog in effect;
// without --mcp it reads nothing.
func Select(names []string, io IO, cwd string) ([]mcp.Server, error) {
	if len(names) == 0 {
		return nil, nil
	}
	c, ok, err := Catalog(io, cwd)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errNoServers
	}
	return mcp.Select(c, names)
}
