package checkpoint

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// Operations of a rewind action.
const (
	OpRestore = "restore" // put earlier content back
	OpCreate  = "create"  // the file was deleted since; bring it back
	OpDelete  = "delete"  // the file did not exist before
)

// Action puts one path back.
type Action struct {
	Path string `json:"path"`
	Op   string `json:"op"`
	// From is the path's state when the rewind was planned (its content
	// is stored, so the rewind itself can be undone); To is the state it
	// is put back to.
	From File `json:"from"`
	To   File `json:"to"`
	// KeepDirs: deleting the path leaves the directories above it, even
	// empty. A transaction recorded every directory it made (they are
	// actions of their own), so one left empty was there before the turn
	// (.git/objects/pack after a git gc).
	KeepDirs bool `json:"keepDirs,omitempty"`
	// Patches put a big file back in place, newest first (tx_patch.go).
	Patches []string `json:"patches,omitempty"`
}

// Skip is a path the rewind leaves alone, and why.
type Skip struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// Plan is what a rewind will do.
type Plan struct {
	Actions []Action `json:"actions"`
	// Git puts the repository's refs, HEAD, stash list and index back.
	Git      []GitAction `json:"git,omitempty"`
	Skipped  []Skip      `json:"skipped,omitempty"`
	Warnings []string    `json:"warnings,omitempty"`
}

// view is what one record says about paths. A snapshot's files are not
// listed up front: they are looked up one path at a time (lookup), and
// what differs between two snapshots comes from the manifest deltas that
// separate them (diffRefs), so a plan costs what changed, not the tree.
type view struct {
	tree    bool            // covers every (non-ignored) path of the working directory
	all     bool            // covers the git-ignored paths too
	ref     string          // the snapshot ("git:<oid>" or "plain:<hash>"); "" for a files record
	files   map[string]File // the record's own files (they take precedence over ref)
	missing string          // the snapshot could not be taken
	tx      bool            // a transaction's states: its directories are listed too
}

func newView(rec Record) *view {
	v := &view{files: map[string]File{}}
	switch {
	case rec.Missing != "":
		v.tree, v.missing = true, rec.Missing
		return v
	case rec.Tree != "":
		v.tree, v.ref, v.all = true, rec.Tree, rec.All
	}
	for _, f := range rec.Files {
		v.files[f.Path] = f
	}
	return v
}

// treeFiles lists a snapshot's files whole; parsed trees are cached. A
// plan needs it only to compare two chains that stand on different kinds
// of roots.
func (s *Store) treeFiles(ref string) (map[string]File, error) {
	if t, ok := s.trees.Load(ref); ok {
		return t.(map[string]File), nil
	}
	var files map[string]File
	switch {
	case strings.HasPrefix(ref, schemeGit):
		if s.git == nil {
			return nil, fmt.Errorf("snapshot %s was taken in a git work tree; %s is not one now", ref, s.cwd)
		}
		t, err := s.git.files(strings.TrimPrefix(ref, schemeGit))
		if err != nil {
			return nil, err
		}
		files = t
	case strings.HasPrefix(ref, "plain:"):
		m, err := s.readManifest(strings.TrimPrefix(ref, "plain:"))
		if err != nil {
			return nil, err
		}
		files = make(map[string]File, len(m.full))
		for _, f := range m.full {
			files[f.Path] = f.File
		}
	default:
		return nil, fmt.Errorf("unknown snapshot %q", ref)
	}
	s.trees.Store(ref, files)
	return files, nil
}

// pair is one effect: the state before it and after it (nil when the
// process died before the after record).
type pair struct {
	label         string
	tool          string
	before, after *view
	changed       map[string]bool // the paths that may differ between before and after
}

// planner carries the caches of one plan.
type planner struct {
	s       *Store
	ctx     context.Context
	ignored map[string]bool
	trees   []*view // the plan's snapshots
	// inTree caches whether a path is in some snapshot of the plan: git
	// does not ignore those, so no snapshot needs to ask.
	inTree map[string]bool
	// candidates are the paths the plan looks at; the first lookup in a
	// git tree asks for all of them at once.
	candidates map[string]bool
	gitKnown   map[string]map[string]*File // git tree -> path -> state (nil: absent)
	current    *view                       // a fresh snapshot, taken when an effect has no after record
	txDirs     map[string]bool             // directories transactions recorded: snapshots (files only) do not know them
	err        error                       // the first failed lookup
}

func (p *planner) fail(err error) {
	if p.err == nil {
		p.err = err
	}
}

// get is what v itself records about path; ok is false when it has no
// such file.
func (p *planner) get(v *view, path string) (File, bool) {
	if f, ok := v.files[path]; ok {
		return f, true
	}
	if v.ref == "" || filepath.IsAbs(path) {
		return File{}, false
	}
	f, ok, err := p.lookup(v.ref, path)
	if err != nil {
		p.fail(err)
		return File{}, false
	}
	return f, ok
}

// coveredBy returns what v says about path, or ok=false when v does not
// know it. A tree knows every path inside the working directory that git
// does not ignore.
func (p *planner) coveredBy(v *view, path string) (File, bool) {
	if f, ok := p.get(v, path); ok {
		if v.missing != "" {
			f.Missing = v.missing
		}
		return f, true
	}
	if !v.tree || filepath.IsAbs(path) || p.txDirs[path] || (!v.all && p.ignoredUnlessKnown(path)) {
		return File{}, false
	}
	if v.missing != "" {
		return File{Path: path, Missing: v.missing}, true
	}
	return File{Path: path, Absent: true}, true
}

// ignoredUnlessKnown reports whether snapshots leave path out: it is
// ignored and no snapshot of the plan has it.
func (p *planner) ignoredUnlessKnown(path string) bool {
	if p.s.git == nil {
		return p.isIgnored(path) // cheap: only the store's own directory
	}
	known, ok := p.inTree[path]
	if !ok {
		for _, v := range p.trees {
			if _, has := p.get(v, path); has {
				known = true
				break
			}
		}
		p.inTree[path] = known
	}
	return !known && p.isIgnored(path)
}

func (p *planner) isIgnored(path string) bool {
	if path == ".git" || strings.HasPrefix(path, ".git/") {
		return true // snapshots never hold it; transactions do
	}
	if p.s.git == nil {
		return path == stateDirName || strings.HasPrefix(path, stateDirName+"/")
	}
	if v, ok := p.ignored[path]; ok {
		return v
	}
	cmd := p.s.git.command(context.Background(), "check-ignore", "-q", "--no-index", "--", path)
	ign := cmd.Run() == nil || strings.HasPrefix(path, stateDirName+"/")
	p.ignored[path] = ign
	return ign
}

// PlanRewind plans putting back every file that the effects of recs (a
// session's records from the first effect of the turn being rewound, in
// order) changed: each to its state before the first of those effects
// that knew it. A file whose current state is not the one the agent left
// is skipped unless force.
//
// The plan costs what differs: the paths an effect may have changed are
// those the manifest deltas between its two snapshots name (two git trees
// are compared by git), and each is then looked up in the snapshots it
// needs. Only two chains on different kinds of roots (a whole-tree scan
// in between) are compared as whole lists.
func (s *Store) PlanRewind(ctx context.Context, recs []Record, force bool) (*Plan, error) {
	_, rerr := s.RecoverTx()
	refused, rerr := splitRefused(rerr)
	if rerr != nil {
		return nil, rerr
	}
	p := &planner{s: s, ctx: ctx, ignored: map[string]bool{}, inTree: map[string]bool{}, candidates: map[string]bool{}, gitKnown: map[string]map[string]*File{}, txDirs: map[string]bool{}}
	plan, err := p.plan(recs, force)
	if err == nil {
		err = p.err
	}
	if err == nil {
		err = s.planGit(ctx, s.applyCutoff(recs), force, plan)
		plan.Warnings = append(plan.Warnings, beyondWarnings(recs)...)
		plan.Warnings = append(plan.Warnings, refused...)
	}
	if err != nil {
		return nil, err
	}
	return plan, nil
}

// plan pairs the records into effects, finds the paths the effects
// changed, and plans putting each back.
func (p *planner) plan(recs []Record, force bool) (*Plan, error) {
	plan := &Plan{}
	pairs, err := p.pairs(recs)
	if err != nil {
		return nil, err
	}
	live, err := p.livePairs(plan, pairs)
	if err != nil {
		return nil, err
	}
	lastAgent, order := p.agentStates(live)
	for _, path := range order {
		if err := p.planPath(plan, pairs, path, lastAgent[path], force); err != nil {
			return nil, err
		}
	}
	return plan, nil
}

// pairs matches each effect's before record with its after record, in
// the order the effects began.
func (p *planner) pairs(recs []Record) ([]*pair, error) {
	var pairs []*pair
	byKey := map[string]*pair{}
	for _, rec := range p.s.applyCutoff(recs) {
		v := newView(rec)
		if rec.Tx != "" && rec.Missing == "" { // a dropped one says so (applyCutoff)
			var err error
			if v, err = p.txView(rec); err != nil {
				return nil, err
			}
		}
		if v.ref != "" {
			p.trees = append(p.trees, v)
		}
		switch rec.Phase {
		case PhaseBefore:
			pr := &pair{label: describeRecord(rec), tool: rec.Tool, before: v}
			pairs = append(pairs, pr)
			byKey[rec.Key()] = pr
		case PhaseAfter:
			if pr := byKey[rec.Key()]; pr != nil {
				pr.after = v
			}
		}
	}
	return pairs, nil
}

// livePairs lists what each effect may have changed (cheap: deltas and
// record files), before any lookup, so git trees are asked once for all
// of it. An effect with no checkpoint before it is left out, with a
// warning in plan.
func (p *planner) livePairs(plan *Plan, pairs []*pair) ([]*pair, error) {
	var live []*pair
	for i, pr := range pairs {
		if pr.tool == "bg" {
			pr.after = nextSnapshot(pairs[i+1:])
		}
		if pr.before.missing != "" {
			plan.Warnings = append(plan.Warnings, fmt.Sprintf("no checkpoint before %s (%s): what it changed cannot be put back", pr.label, pr.before.missing))
			continue
		}
		if pr.after == nil || pr.after.missing != "" {
			cur, err := p.currentView(pr.before)
			if err != nil {
				return nil, err
			}
			pr.after = cur
		}
		changed, err := p.candidatePaths(pr.before, pr.after)
		if err != nil {
			return nil, err
		}
		pr.changed = changed
		for path := range changed {
			p.candidates[path] = true
		}
		live = append(live, pr)
	}
	return live, nil
}

// nextSnapshot is the after view of a background process: it goes on
// changing files after its call returned, so what changed until the next
// snapshot is its doing (nil: no later snapshot).
func nextSnapshot(later []*pair) *view {
	for _, next := range later {
		if next.before.tree && next.before.missing == "" {
			return next.before
		}
	}
	return nil
}

// agentStates is the state the agent last left each changed path in, and
// the changed paths in order, so a path changed since can be told apart.
func (p *planner) agentStates(live []*pair) (map[string]File, []string) {
	lastAgent := map[string]File{}
	var order []string
	for _, pr := range live {
		for _, path := range p.changedPaths(pr) {
			a, _ := p.coveredBy(pr.after, path)
			if _, seen := lastAgent[path]; !seen {
				order = append(order, path)
			}
			lastAgent[path] = a
		}
	}
	slices.Sort(order)
	return lastAgent, order
}

// planPath plans putting path back to its state before the first effect
// that knew it, or says in plan why it is skipped; agent is the state the
// agent last left it in.
func (p *planner) planPath(plan *Plan, pairs []*pair, path string, agent File, force bool) error {
	s := p.s
	target, fromTx, found := p.firstBefore(pairs, path)
	if !found {
		return nil
	}
	if target.Patch != "" {
		p.planPatched(plan, pairs, path, target)
		return nil
	}
	if why := s.notKept(target); why != "" {
		plan.Skipped = append(plan.Skipped, Skip{path, why})
		return nil
	}
	cur, data, err := s.stat(path)
	if err != nil {
		return err
	}
	if cur.Missing != "" {
		plan.Skipped = append(plan.Skipped, Skip{path, cur.Missing})
		return nil
	}
	if !cur.Absent && !cur.Dir {
		cur.Hash = sha256Hash(data)
	}
	if s.same(cur, target) {
		return nil // already as it was
	}
	if !s.same(cur, agent) && !force {
		reason := "changed since tiny-go last changed it"
		if cur.Absent {
			reason = "deleted since tiny-go last changed it"
		}
		plan.Skipped = append(plan.Skipped, Skip{path, reason + " (--force overwrites)"})
		return nil
	}
	if err := s.addAction(plan, path, cur, target, data); err != nil {
		return err
	}
	plan.Actions[len(plan.Actions)-1].KeepDirs = fromTx
	return nil
}

// firstBefore is path's state before the first effect that knew it: the
// state a rewind puts back.
// fromTx says it is a transaction's record.
func (p *planner) firstBefore(pairs []*pair, path string) (f File, fromTx, ok bool) {
	for _, pr := range pairs {
		if f, ok := p.coveredBy(pr.before, path); ok {
			return f, pr.before.tx, true
		}
	}
	return File{}, false, false
}

// notKept says why target's content cannot be put back ("": it can).
func (s *Store) notKept(target File) string {
	if target.Missing != "" {
		return "its earlier content was not kept (" + target.Missing + ")"
	}
	if !target.Absent && !target.Dir && target.Special == "" && !s.hasBlob(target.Hash) {
		return "its earlier content is no longer in the checkpoint store"
	}
	if strings.HasPrefix(target.Hash, schemeTx) && s.linkKeptChanged(target.Hash) {
		return "its earlier content was kept as a hard link to the file a command moved with its folder, and that file was written in place since"
	}
	return ""
}

// addAction adds the action that turns cur into target, first keeping
// what it overwrites: the rewind itself can be undone.
func (s *Store) addAction(plan *Plan, path string, cur, target File, data []byte) error {
	op := OpRestore
	switch {
	case target.Absent:
		op = OpDelete
	case cur.Absent:
		op = OpCreate
	}
	if !cur.Absent && !cur.Dir && cur.Special == "" {
		if _, _, err := s.putBlob(data); err != nil {
			return fmt.Errorf("keep %s before the rewind: %w", path, err)
		}
	}
	plan.Actions = append(plan.Actions, Action{Path: path, Op: op, From: cur, To: target})
	return nil
}

// currentView is a fresh snapshot standing in for the missing after record
// of an effect whose process died.
func (p *planner) currentView(before *view) (*view, error) {
	if !before.tree {
		v := &view{files: map[string]File{}}
		for path := range before.files {
			f, data, err := p.s.stat(path)
			if err != nil {
				return nil, err
			}
			if !f.Absent && !f.Dir && f.Missing == "" {
				f.Hash = sha256Hash(data)
			}
			v.files[path] = f
		}
		return v, nil
	}
	if p.current == nil {
		p.current = newView(p.s.Snapshot(p.ctx))
		if p.current.ref != "" {
			p.trees = append(p.trees, p.current)
		}
	}
	return p.current, nil
}

// candidatePaths lists the paths whose state may differ between two views
// of one effect: the files the records list and, between two snapshots,
// the paths their deltas name.
func (p *planner) candidatePaths(before, after *view) (map[string]bool, error) {
	out := map[string]bool{}
	for path := range before.files {
		out[path] = true
	}
	if !before.tree {
		return out, nil
	}
	for path := range after.files {
		out[path] = true
	}
	if before.ref != "" && after.ref != "" {
		if err := p.diffRefs(before.ref, after.ref, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// changedPaths lists the candidate paths of one effect whose state
// differs between its two views.
func (p *planner) changedPaths(pr *pair) []string {
	var out []string
	for path := range pr.changed {
		b, okb := p.coveredBy(pr.before, path)
		a, oka := p.coveredBy(pr.after, path)
		if !okb || !oka {
			continue
		}
		if !p.s.same(b, a) {
			out = append(out, path)
		}
	}
	return out
}

// same reports whether two states are the same file: both absent, or the
// same kind, executable bit and content. Hashes of different schemes are
// compared by content.
func (s *Store) same(a, b File) bool {
	if a.Absent || b.Absent {
		return a.Absent == b.Absent
	}
	if a.Dir || b.Dir {
		return a.Dir == b.Dir && a.Missing == "" && b.Missing == "" && a.Mode == b.Mode
	}
	if a.Special != "" || b.Special != "" {
		return a.Special == b.Special && a.Mode == b.Mode
	}
	if strings.HasPrefix(a.Hash, schemeTx) || strings.HasPrefix(b.Hash, schemeTx) {
		return s.sameTx(a, b)
	}
	if a.Missing != "" || b.Missing != "" || a.Hash == "" || b.Hash == "" {
		return false
	}
	if a.Link != b.Link || (!a.Link && (a.Mode&0o111 != 0) != (b.Mode&0o111 != 0)) {
		return false
	}
	if a.Hash == b.Hash {
		return true
	}
	if strings.HasPrefix(a.Hash, schemeGit) == strings.HasPrefix(b.Hash, schemeGit) {
		return false
	}
	data, err := s.readBlob(b.Hash)
	if err != nil {
		return false
	}
	return s.hashLike(a.Hash, data) == a.Hash
}

func describeRecord(r Record) string {
	if r.Rewind != "" {
		return "rewind " + r.Rewind
	}
	return r.Tool + " (" + r.ToolStartedID + ")"
}
