package permissions

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/atomicfile"
	"github.com/tiny-agent/tiny-go/internal/cctools"
)

// RuleOf is the Claude Code allow rule an "always" answer of tiny-go's
// approval gate stands for (its rule key split at NUL: "bash","cmd","go"
// is Bash(go:*)), or "" for answers Claude Code keeps for the session
// only (file edits, bg actions).
func RuleOf(key []string) string {
	switch {
	case len(key) == 3 && key[1] == "cmd" && (key[0] == "bash" || key[0] == "bg"):
		return "Bash(" + key[2] + ":*)"
	case len(key) == 2 && key[1] == "tool" && strings.HasPrefix(cctools.ClaudeName(key[0]), "mcp__"):
		return cctools.ClaudeName(key[0])
	case len(key) == 3 && key[0] == "web_fetch" && key[1] == "domain":
		return DomainRule(key[2])
	}
	return ""
}

// AddAllow adds rules to permissions.allow of the settings file at path
// (made when missing), keeping whatever else it holds, as Claude Code's
// "Yes, and don't ask again" does.
func AddAllow(path string, rules []string) error {
	if len(rules) == 0 {
		return nil
	}
	doc := map[string]jsontext.Value{}
	mode := fs.FileMode(0o644)
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return fmt.Errorf("keep the rule in %s: %w", path, err)
	default:
		if fi, err := os.Stat(path); err == nil {
			mode = fi.Mode().Perm()
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			return fmt.Errorf("keep the rule in %s: not valid JSON: %w", path, err)
		}
	}
	perms := map[string]jsontext.Value{}
	if v, ok := doc["permissions"]; ok {
		if err := json.Unmarshal(v, &perms); err != nil {
			return fmt.Errorf("keep the rule in %s: permissions: %w", path, err)
		}
	}
	var allow []string
	if v, ok := perms["allow"]; ok {
		if err := json.Unmarshal(v, &allow); err != nil {
			return fmt.Errorf("keep the rule in %s: permissions.allow: %w", path, err)
		}
	}
	for _, r := range rules {
		if !slices.Contains(allow, r) {
			allow = append(allow, r)
		}
	}
	if perms["allow"], err = json.Marshal(allow); err != nil {
		return err
	}
	if doc["permissions"], err = json.Marshal(perms, json.Deterministic(true)); err != nil {
		return err
	}
	out, err := json.Marshal(doc, json.Deterministic(true))
	if err != nil {
		return err
	}
	if err := (*jsontext.Value)(&out).Indent(jsontext.WithIndentPrefix(""), jsontext.WithIndent("  ")); err != nil {
		return err
	}
	return writeAtomic(path, append(out, '\n'), mode)
}

func writeAtomic(path string, data []byte, mode fs.FileMode) error {
	if err := atomicfile.Write(path, data, atomicfile.Options{Perm: mode, Sync: true, DirPerm: 0o755}); err != nil {
		return fmt.Errorf("keep the rule in %s: %w", path, err)
	}
	return nil
}
