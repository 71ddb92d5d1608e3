// Package attach is what an @mention brings into a prompt: the index of
// the working directory's paths that completes a mention (fuzzy, honouring
// .gitignore, built in the background so the first results come at once
// even in a large tree), and the expansion of the mentions of a prompt
// into the file contents and directory listings that go with it — refused
// with one clear line for a path outside the working directory, a binary
// or oversized file, so nothing is sent half-built.
package attach

import (
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	ignore "github.com/sabhiram/go-gitignore"
	"github.com/sahilm/fuzzy"
)

// maxIndexed bounds the paths an index keeps.
const maxIndexed = 500_000

// Index holds the paths under a root (directories end with "/"), filled
// by a walk in the background; Find answers from what has been walked so
// far.
type Index struct {
	root  string
	mu    sync.Mutex
	paths []string
	done  bool
	ready chan struct{}
}

// NewIndex starts indexing root.
func NewIndex(root string) *Index {
	x := &Index{root: root, ready: make(chan struct{})}
	go x.walk()
	return x
}

// Root is the directory the index covers.
func (x *Index) Root() string { return x.root }

// Wait blocks until the walk is done.
func (x *Index) Wait() { <-x.ready }

// Len is the number of paths indexed so far.
func (x *Index) Len() int {
	x.mu.Lock()
	defer x.mu.Unlock()
	return len(x.paths)
}

// ignoreRule is a .gitignore file and the directory (relative to the
// root, "" for the root) it governs.
type ignoreRule struct {
	base string
	gi   *ignore.GitIgnore
}

func (x *Index) walk() {
	defer close(x.ready)
	defer func() {
		x.mu.Lock()
		x.done = true
		x.mu.Unlock()
	}()
	var rules []ignoreRule
	var batch []string
	flush := func() {
		x.mu.Lock()
		x.paths = append(x.paths, batch...)
		x.mu.Unlock()
		batch = batch[:0]
	}
	count := 0
	_ = filepath.WalkDir(x.root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		rel, rerr := filepath.Rel(x.root, path)
		if rerr != nil {
			return nil
		}
		if rel == "." {
			rules = addRules(rules, path, "")
			return nil
		}
		rel = filepath.ToSlash(rel)
		// Leave the rules of directories the walk has left.
		for len(rules) > 0 && rules[len(rules)-1].base != "" && !strings.HasPrefix(rel, rules[len(rules)-1].base+"/") {
			rules = rules[:len(rules)-1]
		}
		if d.IsDir() && (d.Name() == ".git" || ignored(rules, rel, true)) {
			return fs.SkipDir
		}
		if !d.IsDir() && ignored(rules, rel, false) {
			return nil
		}
		if d.IsDir() {
			rules = addRules(rules, path, rel)
			batch = append(batch, rel+"/")
		} else {
			batch = append(batch, rel)
		}
		count++
		if len(batch) >= 2000 || count < 200 {
			flush()
		}
		if count >= maxIndexed {
			return fs.SkipAll
		}
		return nil
	})
	flush()
}

func addRules(rules []ignoreRule, dir, rel string) []ignoreRule {
	gi, err := ignore.CompileIgnoreFile(filepath.Join(dir, ".gitignore"))
	if err != nil {
		return rules
	}
	return append(rules, ignoreRule{base: rel, gi: gi})
}

// ignored applies the rules from the root down; a deeper file's verdict
// wins (negations included, as far as the matcher reports them).
func ignored(rules []ignoreRule, rel string, dir bool) bool {
	out := false
	for _, r := range rules {
		p := rel
		if r.base != "" {
			p = strings.TrimPrefix(rel, r.base+"/")
		}
		if dir {
			p += "/"
		}
		if match, how := r.gi.MatchesPathHow(p); how != nil {
			out = match
		}
	}
	return out
}

// Find returns up to n paths that match query fuzzily, best first; an
// empty query gives the shallowest paths. It answers from the paths
// indexed so far.
func (x *Index) Find(query string, n int) []string {
	x.mu.Lock()
	paths := x.paths[:len(x.paths):len(x.paths)]
	x.mu.Unlock()
	if query == "" {
		out := make([]string, 0, n)
		for _, p := range paths {
			if strings.Count(strings.TrimSuffix(p, "/"), "/") == 0 {
				out = append(out, p)
			}
		}
		sort.Strings(out)
		if len(out) > n {
			out = out[:n]
		}
		return out
	}
	matches := fuzzy.Find(query, paths)
	if len(matches) > n {
		matches = matches[:n]
	}
	out := make([]string, len(matches))
	for i, m := range matches {
		out[i] = m.Str
	}
	return out
}
