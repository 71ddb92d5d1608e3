package mcp

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Entry is one server as `tiny-go mcp add` writes it, in the .mcp.json
// shape that Claude Code, Cursor and VS Code read too.
type Entry struct {
	Type    string            `json:"type"`
	Command string            `json:"command,omitzero"`
	Args    []string          `json:"args,omitzero"`
	Env     map[string]string `json:"env,omitzero"`
	URL     string            `json:"url,omitzero"`
	Headers map[string]string `json:"headers,omitzero"`
	OAuth   *OAuthConfig      `json:"oauth,omitzero"`
}

// configDoc is a configuration file read for editing: its other members
// (and those of other tools) are kept as they are.
type configDoc struct {
	top     map[string]jsontext.Value
	servers map[string]jsontext.Value
	key     string // "mcpServers", or "servers" in tiny-go's own shape
}

func readConfigDoc(path string) (configDoc, error) {
	d := configDoc{top: map[string]jsontext.Value{}, servers: map[string]jsontext.Value{}, key: "mcpServers"}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return d, nil
	}
	if err != nil {
		return d, err
	}
	if err := json.Unmarshal(data, &d.top); err != nil {
		return d, fmt.Errorf("%s: %w", path, describeJSONError(err))
	}
	if _, ok := d.top["mcpServers"]; !ok {
		if _, ok := d.top["servers"]; ok {
			d.key = "servers"
		}
	}
	if raw, ok := d.top[d.key]; ok {
		if err := json.Unmarshal(raw, &d.servers); err != nil {
			return d, fmt.Errorf("%s: %q: %w", path, d.key, describeJSONError(err))
		}
	}
	return d, nil
}

// write replaces the file atomically; mode is kept for an existing file.
func (d configDoc) write(path string, mode os.FileMode) error {
	servers, err := json.Marshal(d.servers, json.Deterministic(true))
	if err != nil {
		return err
	}
	d.top[d.key] = servers
	data, err := json.Marshal(d.top, json.Deterministic(true))
	if err != nil {
		return err
	}
	v := jsontext.Value(data)
	if err := v.Indent(jsontext.WithIndent("  ")); err != nil {
		return err
	}
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".mcp-*.json")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(v, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// AddServer writes e as alias into the configuration file at path (created
// with mode when missing). An alias the file has already is an error: the
// user removes it first, as with `claude mcp add`. The entry is checked
// like one read back; ${VAR} references are kept for the run to expand.
func AddServer(path, alias string, e Entry, mode os.FileMode) error {
	raw, err := json.Marshal(e)
	if err != nil {
		return err
	}
	var f serverFile
	if err := json.Unmarshal(raw, &f); err != nil {
		return err
	}
	anySet := func(string) (string, bool) { return "set", true }
	if _, err := parseServer(alias, f, anySet); err != nil {
		return err
	}
	d, err := readConfigDoc(path)
	if err != nil {
		return err
	}
	if _, ok := d.servers[alias]; ok {
		return fmt.Errorf("MCP server %s already exists in %s; remove it first (tiny-go mcp remove %s)", alias, path, alias)
	}
	d.servers[alias] = raw
	return d.write(path, mode)
}

// RemoveServer deletes alias from the file at path; found is false when
// the file does not define it.
func RemoveServer(path, alias string) (found bool, err error) {
	d, err := readConfigDoc(path)
	if err != nil {
		return false, err
	}
	if _, ok := d.servers[alias]; !ok {
		return false, nil
	}
	delete(d.servers, alias)
	return true, d.write(path, 0o600)
}

// Defines reports whether the file at path defines alias (false when it
// is missing or broken).
func Defines(path, alias string) bool {
	d, err := readConfigDoc(path)
	if err != nil {
		return false
	}
	_, ok := d.servers[alias]
	return ok
}
