package prompt

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/tiny-agent/tiny-go/internal/beneath"
)

// nestedNames are the instruction files of a directory, in the order the
// system message gives them.
var nestedNames = []string{"CLAUDE.md", ".claude/CLAUDE.md", "AGENTS.md", "CLAUDE.local.md"}

// Nested gives the instruction files of the directories below the working
// directory the first time the agent works there, as Claude Code does
// with a nested CLAUDE.md: a read, write or edit under such a directory
// adds its files to that call's result. The result is a committed fact,
// so the system message never changes mid-session and a resume replays
// exactly what the model saw.
//
// The files a command could have planted are read as a command would
// see them, never more: beneath the working directory without following
// a symlink, and not where a Read deny rule hides a path; imports too.
type Nested struct {
	cwd    string
	hidden func() []string

	mu    sync.Mutex
	given map[string]bool // relative paths the conversation already has
}

// givenRef finds the files a conversation already has.
var givenRef = regexp.MustCompile(`<project_instructions path="([^"]+)">`)

// NewNested starts after the messages of the active context, whose
// results may already carry nested files (a resume). hidden may be nil.
func NewNested(cwd string, hidden func() []string, context []string) *Nested {
	n := &Nested{cwd: cwd, hidden: hidden, given: map[string]bool{}}
	for _, text := range context {
		if !strings.Contains(text, "<project_instructions") {
			continue
		}
		for _, m := range givenRef.FindAllStringSubmatch(text, -1) {
			n.given[unescapeXML(m[1])] = true
		}
	}
	return n
}

// For is the text to add to the result of a call that worked on path
// (relative to the working directory or absolute): the instruction files
// of each directory from just below the working directory down to path's
// own that the conversation does not have yet; "" when there are none.
func (n *Nested) For(path string) string {
	if n == nil || path == "" {
		return ""
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(n.cwd, path)
	}
	rel, err := filepath.Rel(n.cwd, filepath.Dir(filepath.Clean(path)))
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, "../") {
		return ""
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	root, err := beneath.Root(n.cwd)
	if err != nil {
		return ""
	}
	defer unix.Close(root)
	r := &nestedReader{n: n, root: root}
	parts := strings.Split(filepath.ToSlash(rel), "/")
	for i := range parts {
		dir := strings.Join(parts[:i+1], "/")
		for _, name := range nestedNames {
			r.file(dir+"/"+name, 0)
		}
	}
	if len(r.files) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n\n<system-reminder>\nInstructions of the directory worked in, from its instruction files (they hold for files under it):\n")
	for _, f := range r.files {
		fmt.Fprintf(&b, "<project_instructions path=\"%s\">\n%s", escapeXML(f.Path), f.Content)
		if !strings.HasSuffix(f.Content, "\n") {
			b.WriteString("\n")
		}
		b.WriteString("</project_instructions>\n")
	}
	b.WriteString("</system-reminder>")
	return b.String()
}

type nestedReader struct {
	n     *Nested
	root  int
	files []ProjectInstructions
}

// file reads rel (slash-separated, beneath the working directory) once,
// then its imports that stay beneath it.
func (r *nestedReader) file(rel string, depth int) {
	rel = filepath.ToSlash(filepath.Clean(rel))
	if r.n.given[rel] || rel == ".." || strings.HasPrefix(rel, "../") || r.n.isHidden(rel) {
		return
	}
	text, ok := r.read(rel)
	if !ok {
		return
	}
	r.n.given[rel] = true
	r.files = append(r.files, ProjectInstructions{Path: rel, Content: text})
	if depth >= MaxImportDepth {
		return
	}
	for _, imp := range imports(text) {
		if strings.HasPrefix(imp, "~/") || filepath.IsAbs(imp) {
			continue // outside the tree: what a planted file could reach
		}
		r.file(filepath.Join(filepath.Dir(rel), imp), depth+1)
	}
}

// read opens rel beneath the root with no symlink anywhere on its way: a
// regular file up to MaxProjectInstructionsBytes.
func (r *nestedReader) read(rel string) (string, bool) {
	dir, name, err := beneath.Parent(r.root, rel, false)
	if err != nil {
		return "", false
	}
	defer unix.Close(dir)
	fd, err := unix.Openat(dir, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return "", false
	}
	f := os.NewFile(uintptr(fd), rel)
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return "", false
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxProjectInstructionsBytes+1))
	if err != nil || len(data) > MaxProjectInstructionsBytes {
		return "", false
	}
	return string(data), true
}

// isHidden: a Read deny rule hides rel, or a directory above it.
func (n *Nested) isHidden(rel string) bool {
	if n.hidden == nil {
		return false
	}
	abs := filepath.Join(n.cwd, rel)
	for _, h := range n.hidden() {
		if abs == h || strings.HasPrefix(abs, strings.TrimSuffix(h, "/")+"/") {
			return true
		}
	}
	return false
}
