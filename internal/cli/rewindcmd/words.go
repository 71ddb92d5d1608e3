package rewindcmd

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/tiny-agent/tiny-go/internal/checkpoint"
	"github.com/tiny-agent/tiny-go/internal/gitcmd"
	"github.com/tiny-agent/tiny-go/internal/store"
)

// maxListed is how many paths of one kind a rewind preview names; the
// rest are counted.
const maxListed = 20

// WriteWords prints what a rewind will do in a user's words (issue
// 47): git's branches, HEAD and commits by name, files by path, and the
// files inside .git only counted: "/rewind N details" lists them all
// (WriteSummary).
func WriteWords(ctx context.Context, w io.Writer, cwd string, turn TurnInfo, plan *checkpoint.Plan, read func(checkpoint.File) ([]byte, error)) (gitDone string) {
	fmt.Fprintf(w, "Rewinding files to before turn %d (%s) will:\n", turn.N, store.OneLine(turn.Prompt, 60))
	sum := plan.Preview()
	if sum.Empty() {
		fmt.Fprintln(w, "  nothing to change: no file the agent changed since differs from then")
		return ""
	}
	will, did := gitWords(ctx, cwd, plan, read)
	if will != "" {
		fmt.Fprintln(w, "  git: "+will)
	}
	var files checkpoint.Summary
	for _, a := range plan.Actions {
		files.Add(a)
	}
	writeFileWords(w, files, [3]string{"restore", "create", "delete"}, fmt.Sprintf("/rewind %d details lists them", turn.N))
	writeProblems(w, sum)
	return did
}

// WriteDone prints what a rewind did, in the preview's words.
func WriteDone(w io.Writer, turn TurnInfo, sum *checkpoint.Summary, gitDone string) {
	fmt.Fprintf(w, "Files put back to before turn %d (%s):\n", turn.N, store.OneLine(turn.Prompt, 60))
	if sum == nil || sum.Empty() {
		fmt.Fprintln(w, "  nothing to change: no file the agent changed since differs from then")
		return
	}
	if gitDone != "" {
		fmt.Fprintln(w, "  git: "+gitDone)
	}
	writeFileWords(w, *sum, [3]string{"restored", "created", "deleted"}, "")
	writeProblems(w, *sum)
}

// writeFileWords lists the paths outside .git by what happens to them
// and counts those inside.
func writeFileWords(w io.Writer, sum checkpoint.Summary, verbs [3]string, more string) {
	inGit := 0
	for i, list := range [][]string{sum.Restored, sum.Created, sum.Deleted} {
		var paths []string
		for _, p := range list {
			if p == ".git" || strings.HasPrefix(p, ".git/") {
				inGit++
				continue
			}
			paths = append(paths, p)
		}
		writePaths(w, verbs[i], paths)
	}
	if inGit == 0 {
		return
	}
	if more != "" {
		more = " (" + more + ")"
	}
	fmt.Fprintf(w, "  and put back %d of git's own files%s\n", inGit, more)
}

func writeProblems(w io.Writer, sum checkpoint.Summary) {
	for _, s := range sum.Skipped {
		fmt.Fprintf(w, "  %-9s %s: %s\n", "skip", s.Path, s.Reason)
	}
	for _, warn := range sum.Warnings {
		fmt.Fprintf(w, "  warning   %s\n", warn)
	}
}

// writePaths lists up to maxListed paths under verb, then counts the rest;
// a directory listed with what is inside it is one line.
func writePaths(w io.Writer, verb string, paths []string) {
	for i, p := range collapseDirs(paths) {
		if i == maxListed {
			fmt.Fprintf(w, "  %-9s … and %d more\n", verb, len(paths)-i)
			return
		}
		fmt.Fprintf(w, "  %-9s %s\n", verb, p)
	}
}

// foldAt is how many paths inside a listed directory fold into it.
const foldAt = 5

// collapseDirs sorts paths and folds the many paths inside a listed
// directory into it: "node_modules/ (and 33 paths inside)".
func collapseDirs(paths []string) []string {
	paths = slices.Sorted(slices.Values(paths))
	var out []string
	for i := 0; i < len(paths); {
		p, j := paths[i], i+1
		for j < len(paths) && strings.HasPrefix(paths[j], p+"/") {
			j++
		}
		if n := j - i - 1; n >= foldAt {
			out = append(out, p+"/ (and "+plural(n, "path")+" inside)")
			i = j
			continue
		}
		out = append(out, p)
		i++
	}
	return out
}

// gitChange is what a rewind does to git, gathered from its git actions
// and from the files of .git it puts back.
type gitChange struct {
	words, done []string // what it will do, what it did
	// now are the commit ids of the refs it moves or removes as they are,
	// after their ids after it; moved the refs' names.
	now, after []string
	moved      map[string]bool
}

// gitWords says what the rewind does to git: "switch back to branch
// main, remove branch feature, undo 1 commit". read gives a recorded
// state's content (nil: the .git files are not read).
func gitWords(ctx context.Context, cwd string, plan *checkpoint.Plan, read func(checkpoint.File) ([]byte, error)) (will, did string) {
	g := gitChange{moved: map[string]bool{}}
	for _, a := range plan.Git {
		g.action(a)
	}
	for _, a := range plan.Actions {
		if read != nil {
			g.file(a, read)
		}
	}
	if n := undoneCommits(ctx, cwd, g); n > 0 {
		g.say("undo "+plural(n, "commit"), "undid "+plural(n, "commit"))
	}
	return strings.Join(g.words, ", "), strings.Join(g.done, ", ")
}

// file reads a put-back file of .git as the git action it amounts to.
func (g *gitChange) file(a checkpoint.Action, read func(checkpoint.File) ([]byte, error)) {
	content := func(f checkpoint.File) string {
		if f.Absent {
			return ""
		}
		b, err := read(f)
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(b))
	}
	switch {
	case a.Path == ".git/HEAD":
		g.action(checkpoint.GitAction{Kind: checkpoint.GitHead, From: content(a.From), To: content(a.To)})
	case strings.HasPrefix(a.Path, ".git/refs/") && !a.From.Dir && !a.To.Dir:
		g.action(checkpoint.GitAction{Kind: checkpoint.GitRef, Name: strings.TrimPrefix(a.Path, ".git/"), From: content(a.From), To: content(a.To)})
	}
}

// say adds one thing the rewind does, as it will be and as it was done.
func (g *gitChange) say(will, did string) {
	g.words = append(g.words, will)
	g.done = append(g.done, did)
}

// action puts one git action in words.
func (g *gitChange) action(a checkpoint.GitAction) {
	switch a.Kind {
	case checkpoint.GitHead:
		if ref, ok := strings.CutPrefix(a.To, "ref: "); ok {
			g.say("switch back to "+refWords(ref), "switched back to "+refWords(ref))
		} else if a.To != "" {
			g.say("check out commit "+short(a.To)+" again", "checked out commit "+short(a.To)+" again")
		}
		if a.From != "" && !strings.HasPrefix(a.From, "ref: ") {
			g.now = append(g.now, a.From)
		}
	case checkpoint.GitRef:
		g.moved[a.Name] = true
		switch {
		case a.To == "":
			g.say("remove "+refWords(a.Name), "removed "+refWords(a.Name))
		case a.From == "":
			g.say("bring back "+refWords(a.Name), "brought back "+refWords(a.Name))
		default:
			g.say("put "+refWords(a.Name)+" back at "+short(a.To), "put "+refWords(a.Name)+" back at "+short(a.To))
		}
		if a.From != "" {
			g.now = append(g.now, a.From)
		}
		if a.To != "" {
			g.after = append(g.after, a.To)
		}
	case checkpoint.GitStash:
		g.say("put the stash list back", "put the stash list back")
	case checkpoint.GitIndex:
		g.say("put the staging area (git add) back", "put the staging area (git add) back")
	}
}

// refWords names a ref as git's porcelain does.
func refWords(ref string) string {
	if b, ok := strings.CutPrefix(ref, "refs/heads/"); ok {
		return "branch " + b
	}
	if t, ok := strings.CutPrefix(ref, "refs/tags/"); ok {
		return "tag " + t
	}
	if ref == "refs/stash" {
		return "the stash"
	}
	return ref
}

func short(oid string) string { return oid[:min(len(oid), 7)] }

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

// undoneCommits counts the commits the rewind leaves unreachable: those
// of the refs (and a detached HEAD) now, not reachable from their ids
// after it or from any ref it keeps. 0 when git cannot tell.
func undoneCommits(ctx context.Context, cwd string, g gitChange) int {
	if len(g.now) == 0 {
		return 0
	}
	after := g.after
	out, err := gitcmd.Repo(ctx, cwd, nil, "for-each-ref", "--format=%(objectname) %(refname)").Output()
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if oid, name, ok := strings.Cut(line, " "); ok && !g.moved[name] {
			after = append(after, oid)
		}
	}
	args := append(append([]string{"rev-list", "--count"}, g.now...), "--not")
	out, err = gitcmd.Repo(ctx, cwd, nil, append(args, after...)...).Output()
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(out)))
	return n
}

// gitDoneOf is what the rewind j of the session at path will have done to
// git, in words; worked out before it runs, while the commits it undoes
// are still there to count.
func gitDoneOf(ctx context.Context, path string, j *Journal, capBytes int64) string {
	if j == nil || j.Plan == nil {
		return ""
	}
	var read func(checkpoint.File) ([]byte, error)
	if cs, err := checkpoint.Open(SessionCwd(path), checkpoint.Options{Cap: capBytes}); err == nil {
		defer cs.Close()
		read = cs.Content
	}
	_, did := gitWords(ctx, SessionCwd(path), j.Plan, read)
	return did
}

// writeOutcomeWords is writeRewindOutcome with the files in words
// (WriteDone); --details keeps every path.
func writeOutcomeWords(w io.Writer, out *Outcome, gitDone string) {
	if out.Finished {
		fmt.Fprintf(w, "Finished an interrupted rewind to before turn %d.\n", out.Turn.N)
	}
	if out.Files != nil {
		WriteDone(w, out.Turn, out.Files, gitDone)
	}
	writeForkLines(w, out)
}
