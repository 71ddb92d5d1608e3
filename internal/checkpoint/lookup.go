package checkpoint

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// A rewind looks at snapshots one path at a time instead of resolving
// each to its full list of files: a stored manifest says what changed
// since its base, so the paths that differ between two snapshots of one
// chain are those its deltas name, and a path's state is found by walking
// the chain down to the first manifest that names it.

// storedManifest is a manifest as stored: the changes since its base (or,
// without base and tree, every file).
type storedManifest struct {
	base, tree string
	files      map[string]manifestFile
	removed    map[string]bool
}

// manifestHead is the start of a stored manifest: enough to walk a chain
// without parsing its files.
type manifestHead struct {
	base, tree string
}

// headOf reads the base and tree of a stored manifest from the start of
// its blob (json.Marshal writes them before the files).
func (s *Store) headOf(h string) (manifestHead, error) {
	if m, ok := s.stored.Load(h); ok {
		sm := m.(*storedManifest)
		return manifestHead{sm.base, sm.tree}, nil
	}
	if hd, ok := s.heads.Load(h); ok {
		return hd.(manifestHead), nil
	}
	p, err := s.blobPath(h)
	if err != nil {
		return manifestHead{}, err
	}
	f, err := os.Open(p)
	if err != nil {
		return manifestHead{}, fmt.Errorf("checkpoint manifest %s: %w", h[:min(len(h), 19)], err)
	}
	defer f.Close()
	prefix, err := io.ReadAll(io.LimitReader(f, 64<<10))
	if err != nil {
		return manifestHead{}, err
	}
	var hd manifestHead
	dec := jsontext.NewDecoder(bytes.NewReader(prefix))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return manifestHead{}, fmt.Errorf("checkpoint manifest %s is damaged", h[:19])
	}
	for {
		tok, err := dec.ReadToken()
		if err != nil || tok.Kind() != '"' {
			break // the end of the object, or of the prefix read
		}
		name := tok.String() // a token is valid until the next read
		switch name {
		case "base", "tree":
			v, err := dec.ReadToken()
			if err != nil {
				return manifestHead{}, fmt.Errorf("checkpoint manifest %s is damaged", h[:19])
			}
			if name == "base" {
				hd.base = v.String()
			} else {
				hd.tree = v.String()
			}
			continue
		case "depth":
			if err := dec.SkipValue(); err == nil {
				continue
			}
		}
		break // the files follow: the head is complete
	}
	s.heads.Store(h, hd)
	return hd, nil
}

// storedManifestOf parses a stored manifest (cached: manifests are
// immutable).
func (s *Store) storedManifestOf(h string) (*storedManifest, error) {
	if m, ok := s.stored.Load(h); ok {
		return m.(*storedManifest), nil
	}
	data, err := s.readBlob(h)
	if err != nil {
		return nil, err
	}
	var m manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("manifest %s: %w", h, err)
	}
	sm := &storedManifest{base: m.Base, tree: m.Tree, files: make(map[string]manifestFile, len(m.Files)), removed: make(map[string]bool, len(m.Removed))}
	for _, f := range m.Files {
		sm.files[f.Path] = f
	}
	for _, p := range m.Removed {
		sm.removed[p] = true
	}
	s.stored.Store(h, sm)
	return sm, nil
}

// maxChainWalk bounds a chain walk (a damaged store could make a loop).
const maxChainWalk = 1 << 16

// chainOf lists the stored manifests of a snapshot, newest first, down to
// its root, and names the root: "git:<tree>" (a chain standing on a git
// tree, or a git snapshot itself) or "plain:<hash>" (a manifest listing
// every file, not in the list).
func (s *Store) chainOf(ref string) ([]string, string, error) {
	if strings.HasPrefix(ref, schemeGit) {
		return nil, ref, nil
	}
	h, ok := strings.CutPrefix(ref, "plain:")
	if !ok {
		return nil, "", fmt.Errorf("unknown snapshot %q", ref)
	}
	var chain []string
	for range maxChainWalk {
		hd, err := s.headOf(h)
		if err != nil {
			return nil, "", err
		}
		switch {
		case hd.base != "":
			chain = append(chain, h)
			h = hd.base
		case hd.tree != "":
			return append(chain, h), schemeGit + hd.tree, nil
		default:
			return chain, "plain:" + h, nil
		}
	}
	return nil, "", fmt.Errorf("manifest %s: chain too long", ref)
}

// lookup is a path's state in a snapshot; ok is false when the snapshot
// has no such file.
func (p *planner) lookup(ref, path string) (File, bool, error) {
	for range maxChainWalk {
		if oid, ok := strings.CutPrefix(ref, schemeGit); ok {
			return p.gitLookup(oid, path)
		}
		h, ok := strings.CutPrefix(ref, "plain:")
		if !ok {
			return File{}, false, fmt.Errorf("unknown snapshot %q", ref)
		}
		if m, ok := p.s.manifests.Load(h); ok { // resolved already
			mm := m.(*manifest)
			if i, ok := mm.byPath[path]; ok {
				return mm.full[i].File, true, nil
			}
			return File{}, false, nil
		}
		m, err := p.s.storedManifestOf(h)
		if err != nil {
			return File{}, false, err
		}
		if f, ok := m.files[path]; ok {
			return f.File, true, nil
		}
		switch {
		case m.removed[path]:
			return File{}, false, nil
		case m.base != "":
			ref = "plain:" + m.base
		case m.tree != "":
			ref = schemeGit + m.tree
		default:
			return File{}, false, nil // a full manifest lists every file
		}
	}
	return File{}, false, fmt.Errorf("snapshot %s: chain too long", ref)
}

// gitBatchAll is how many paths of one git tree are looked up by name; for
// more, the tree is listed whole.
const gitBatchAll = 20000

// gitLookup is a path's state in a git tree. The first lookup in a tree
// asks git for every candidate path of the plan at once.
func (p *planner) gitLookup(oid, path string) (File, bool, error) {
	if p.s.git == nil {
		return File{}, false, fmt.Errorf("snapshot %s was taken in a git work tree; %s is not one now", schemeGit+oid, p.s.cwd)
	}
	if t, ok := p.s.trees.Load(schemeGit + oid); ok {
		f, ok := t.(map[string]File)[path]
		return f, ok, nil
	}
	known := p.gitKnown[oid]
	if known == nil {
		known = map[string]*File{}
		p.gitKnown[oid] = known
	}
	if f, ok := known[path]; ok {
		if f == nil {
			return File{}, false, nil
		}
		return *f, true, nil
	}
	ask := []string{path}
	for c := range p.candidates {
		if _, ok := known[c]; !ok && c != path && !filepath.IsAbs(c) { // a file outside the tree
			ask = append(ask, c)
		}
	}
	if len(ask) > gitBatchAll {
		t, err := p.s.treeFiles(schemeGit + oid)
		if err != nil {
			return File{}, false, err
		}
		f, ok := t[path]
		return f, ok, nil
	}
	found, err := p.s.git.filesAt(context.WithoutCancel(p.ctx), oid, ask)
	if err != nil {
		return File{}, false, err
	}
	for _, a := range ask {
		if f, ok := found[a]; ok {
			known[a] = &f
		} else {
			known[a] = nil
		}
	}
	f, ok := found[path]
	return f, ok, nil
}

// diffRefs adds to out every path whose state may differ between two
// snapshots: the paths named by the deltas that are not common to both
// chains, and, when the chains stand on different roots, what differs
// between the roots.
func (p *planner) diffRefs(a, b string, out map[string]bool) error {
	if a == b {
		return nil
	}
	ca, ra, err := p.s.chainOf(a)
	if err != nil {
		return err
	}
	cb, rb, err := p.s.chainOf(b)
	if err != nil {
		return err
	}
	if ra == rb {
		for len(ca) > 0 && len(cb) > 0 && ca[len(ca)-1] == cb[len(cb)-1] {
			ca, cb = ca[:len(ca)-1], cb[:len(cb)-1]
		}
	}
	for _, h := range append(ca, cb...) {
		m, err := p.s.storedManifestOf(h)
		if err != nil {
			return err
		}
		for path := range m.files {
			out[path] = true
		}
		for path := range m.removed {
			out[path] = true
		}
	}
	if ra == rb {
		return nil
	}
	if p.s.git != nil && strings.HasPrefix(ra, schemeGit) && strings.HasPrefix(rb, schemeGit) {
		// Git compares trees by their hashes: only changed subtrees are read.
		names, _, err := p.s.git.run(context.WithoutCancel(p.ctx), nil, "diff-tree", "-r", "-z", "--no-renames", "--name-only", strings.TrimPrefix(ra, schemeGit), strings.TrimPrefix(rb, schemeGit))
		if err != nil {
			return err
		}
		for _, n := range bytes.Split(names, []byte{0}) {
			if len(n) > 0 {
				out[string(n)] = true
			}
		}
		return nil
	}
	// Different kinds of roots (a whole-tree scan between two chains):
	// compare the lists. This, and only this, costs the tree.
	p.s.listCompares.Add(1)
	ta, err := p.s.treeFiles(ra)
	if err != nil {
		return err
	}
	tb, err := p.s.treeFiles(rb)
	if err != nil {
		return err
	}
	for path, f := range ta {
		if g, ok := tb[path]; !ok || g != f {
			out[path] = true
		}
	}
	for path := range tb {
		if _, ok := ta[path]; !ok {
			out[path] = true
		}
	}
	return nil
}

// filesAt lists the blobs of a tree at the given paths (a path that is
// not a blob of the tree is left out).
func (g *gitRepo) filesAt(ctx context.Context, oid string, paths []string) (map[string]File, error) {
	out := map[string]File{}
	want := make(map[string]bool, len(paths))
	for _, p := range paths {
		want[p] = true
	}
	const chunk = 1000
	for i := 0; i < len(paths); i += chunk {
		args := append([]string{"ls-tree", "-r", "-z", "--full-tree", oid, "--"}, paths[i:min(i+chunk, len(paths))]...)
		cmd := g.command(ctx, args...)
		cmd.Env = append(cmd.Env, "GIT_LITERAL_PATHSPECS=1")
		data, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("git ls-tree: %w", err)
		}
		for path, f := range parseLsTree(data) {
			if want[path] {
				out[path] = f
			}
		}
	}
	return out, nil
}
