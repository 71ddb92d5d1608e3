package gitcmd

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/tiny-agent/tiny-go/internal/atomicfile"
)

// Attributes for every path of an isolated run. info/attributes outranks
// every .gitattributes of the tree, so no attribute of the repository
// names a filter or driver; a program it names would not run anyway (the
// repository's config, where drivers are defined, is not read).
const (
	// Raw hashes files byte for byte (a snapshot is restored byte for
	// byte): no filter, no end-of-line or encoding conversion, no ident,
	// no diff or merge driver.
	Raw = "* -filter -diff -merge -text -ident -working-tree-encoding\n"
	// NoFilters keeps the repository's end-of-line rules (a patch for
	// people) but runs no filter.
	NoFilters = "* -filter -ident -working-tree-encoding\n"
)

// Isolated is a private git directory for reading a repository's work
// tree: its own config, HEAD, refs, index and objects; the repository's
// objects borrowed read-only as alternates.
type Isolated struct {
	Dir        string // the private git directory, created if needed
	WorkTree   string // the top of the work tree
	Index      string // the private index ("" is Dir/index)
	Objects    string // the private object directory ("" is Dir/objects)
	Alternates string // the repository's object directory
	// Exclude is the repository's info/exclude, linked as the private
	// one so its rules apply as they change.
	Exclude    string
	Format     string // the object format: sha1 ("" too) or sha256
	Attributes string // Raw or NoFilters
}

// Isolate writes o.Dir's config, HEAD, refs/ and info/ (only what
// differs) and returns the environment (for Env's extra) that runs git on
// it with o.WorkTree as the work tree.
func Isolate(o Isolated) ([]string, error) {
	if o.Index == "" {
		o.Index = filepath.Join(o.Dir, "index")
	}
	if o.Objects == "" {
		o.Objects = filepath.Join(o.Dir, "objects")
	}
	for _, d := range []string{o.Dir, filepath.Join(o.Dir, "refs"), filepath.Join(o.Dir, "info"), o.Objects} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("private git directory: %w", err)
		}
	}
	config := "[core]\n\trepositoryformatversion = 0\n\tbare = false\n"
	if o.Format != "" && o.Format != "sha1" {
		config = fmt.Sprintf("[core]\n\trepositoryformatversion = 1\n\tbare = false\n[extensions]\n\tobjectFormat = %s\n", o.Format)
	}
	if x := readUser().excludes; x != "" && !strings.ContainsAny(x, "\n\x00") {
		config += "[core]\n\texcludesFile = " + quote(x) + "\n"
	}
	files := map[string]string{
		"HEAD":            "ref: refs/heads/tiny-go-private\n",
		"config":          config,
		"info/attributes": o.Attributes,
	}
	for name, want := range files {
		p := filepath.Join(o.Dir, name)
		if have, err := os.ReadFile(p); err == nil && bytes.Equal(have, []byte(want)) {
			continue
		}
		if err := writeFile(p, want); err != nil {
			return nil, fmt.Errorf("private git directory: %w", err)
		}
	}
	link := filepath.Join(o.Dir, "info", "exclude")
	if have, err := os.Readlink(link); err != nil || have != o.Exclude {
		os.Remove(link)
		if o.Exclude != "" {
			if err := os.Symlink(o.Exclude, link); err != nil {
				return nil, fmt.Errorf("private git directory: %w", err)
			}
		}
	}
	return []string{
		"GIT_DIR=" + o.Dir, "GIT_WORK_TREE=" + o.WorkTree, "GIT_INDEX_FILE=" + o.Index,
		"GIT_OBJECT_DIRECTORY=" + o.Objects, "GIT_ALTERNATE_OBJECT_DIRECTORIES=" + o.Alternates,
	}, nil
}

// quote is a config value in double quotes.
func quote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// writeFile replaces p by a rename: a reader never sees half of it.
func writeFile(p, data string) error {
	return atomicfile.Write(p, []byte(data), atomicfile.Options{Perm: 0o600})
}
