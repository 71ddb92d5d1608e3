package guard

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/approval"
	"github.com/tiny-agent/tiny-go/internal/cctools"
	"github.com/tiny-agent/tiny-go/internal/cli/cmdutil"
	"github.com/tiny-agent/tiny-go/internal/hooks"
	"github.com/tiny-agent/tiny-go/internal/permissions"
	"github.com/tiny-agent/tiny-go/internal/prompt"
	"github.com/tiny-agent/tiny-go/internal/statekey"
)

// Permissions is the wiring of Claude Code's permission rules into a
// run: the rules, where "always" answers go, and what defaultMode asked.
type Permissions struct {
	Set *permissions.Settings
	// local is the settings.local.json "always" answers are added to.
	local       string
	acceptEdits bool
	dontAsk     bool
}

// LoadPermissions reads the permission rules in effect for cwd.
func LoadPermissions(getenv func(string) string, cwd string) (*permissions.Settings, string) {
	home := getenv("HOME")
	project := hooks.ProjectDir(cwd, home)
	return permissions.Load(permissions.Files(home, project), home, cwd), project
}

// configurePermissions reads the rules, says what cannot be used, and
// applies defaultMode where no --approval (or approval setting) chose a
// mode: plan and bypassPermissions (auto) everywhere, acceptEdits and
// dontAsk where a user can be asked (interactive mode).
func (g *Guard) configurePermissions() {
	set, project := LoadPermissions(g.o.Getenv, g.o.Cwd)
	for _, p := range set.Problems {
		fmt.Fprintf(g.o.Stderr, "%s: %s\n", cmdutil.ProgramName, p)
	}
	g.perms = &Permissions{Set: set, local: permissions.LocalFile(localSettingsDir(project, g.o.Cwd))}
	// The model's read tool runs as tiny-go, which can read its state
	// key: the key must not reach the model, which could hand it to a
	// command to seal forged state (commands never see the folder).
	if dir, err := statekey.Dir(); err == nil && filepath.IsAbs(dir) && !within(g.o.Cwd, dir) {
		set.DenyForProcess([]string{"Read(/" + dir + "/**)", "Edit(/" + dir + "/**)"}, KeyRuleSource)
	}
	if g.o.Approval != "" {
		return
	}
	switch set.DefaultMode {
	case "plan":
		g.o.Approval = string(approval.Plan)
	case "bypassPermissions":
		g.o.Approval = string(approval.Auto)
	case "acceptEdits":
		g.perms.acceptEdits = g.interactive()
	case "dontAsk":
		g.perms.dontAsk = g.interactive()
	}
}

// KeyRuleSource names tiny-go's own rules that keep its tools from the
// state key's folder.
const KeyRuleSource = "tiny-go (its state key's folder)"

// Rules are the permission rules in effect (nil-safe).
func (g *Guard) Rules() *permissions.Settings {
	if g == nil || g.perms == nil {
		return nil
	}
	return g.perms.Set
}

// localSettingsDir is where Claude Code keeps settings.local.json: the
// project that already has .claude settings, else the repository root,
// else the working directory.
func localSettingsDir(project, cwd string) string {
	if fileExists(filepath.Join(project, ".claude", "settings.json")) || fileExists(filepath.Join(project, ".claude", "settings.local.json")) {
		return project
	}
	for dir := cwd; ; dir = filepath.Dir(dir) {
		if fileExists(filepath.Join(dir, ".git")) {
			return dir
		}
		if filepath.Dir(dir) == dir {
			return cwd
		}
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// additionalDirectories are the rules' additionalDirectories that exist,
// as writable roots of the sandbox; the others are named once.
func (g *Guard) additionalDirectories() []string {
	if g.perms == nil {
		return nil
	}
	var dirs []string
	for _, d := range g.perms.Set.AdditionalDirectories {
		if fi, err := os.Stat(d.Path); err != nil || !fi.IsDir() {
			fmt.Fprintf(g.o.Stderr, "%s: %s: permissions.additionalDirectories: %s is not a directory; it is not used\n", cmdutil.ProgramName, d.Source, d.Path)
			continue
		}
		dirs = append(dirs, d.Path)
	}
	return dirs
}

// HiddenPaths is the sandbox's Policy.Hidden: what Read deny rules name.
func (g *Guard) HiddenPaths() func() []string {
	if g.perms == nil {
		return nil
	}
	return g.perms.Set.HiddenPaths
}

// warnUnhidden says, once, that commands can read what Read deny rules
// name when the sandbox cannot hide it.
func (g *Guard) warnUnhidden() {
	if g.perms == nil || g.sandbox.Hides() {
		return
	}
	if paths := g.perms.Set.HiddenPaths(); len(paths) > 0 {
		fmt.Fprintf(g.o.Stderr, "%s: warning: commands run without namespaces here, so Read deny rules keep %s from the read tool only; commands can read it\n", cmdutil.ProgramName, paths[0])
	}
}

// PermissionHooks puts the rules in front of the hooks (inner, maybe nil)
// of an agent, with the allowed-tools of the skills; canAsk reports
// whether someone can answer (a gate or an embedder).
func (g *Guard) PermissionHooks(inner agent.HookRunner, skills []prompt.Skill, canAsk func() bool) agent.HookRunner {
	p := g.perms
	var allowed []permissions.Skill
	for _, s := range skills {
		if len(s.AllowedTools) > 0 {
			allowed = append(allowed, permissions.Skill{Name: s.Name, Path: s.Path, Allowed: s.AllowedTools})
		}
	}
	if p == nil || (len(p.Set.Rules) == 0 && !p.acceptEdits && len(allowed) == 0) {
		return inner
	}
	return &permissions.Runner{Inner: inner, Settings: p.Set, AcceptEdits: p.acceptEdits, Skills: allowed, CanAsk: canAsk}
}

// keepInSettings has the gate add the "always" answers Claude Code keeps
// (commands, MCP tools) to settings.local.json; report shows a warning.
func (g *Guard) keepInSettings(gate *approval.Gate, report func(string)) {
	if gate == nil || g.perms == nil {
		return
	}
	local := g.perms.local
	gate.KeepAlso(func(keys [][]string) {
		var rules []string
		for _, k := range keys {
			if r := permissions.RuleOf(k); r != "" {
				rules = append(rules, r)
			}
		}
		if err := permissions.AddAllow(local, rules); err != nil {
			report(fmt.Sprintf("warning: the answer holds for this session only: %v", err))
		}
		// A host allowed for web_fetch is a rule at once: it is what lets
		// the fetch reach a local address (netguard) and its redirects.
		var fetchRules []string
		for _, r := range rules {
			if strings.HasPrefix(r, cctools.WebFetch+"(") {
				fetchRules = append(fetchRules, r)
			}
		}
		g.perms.Set.AllowForSession(fetchRules, local)
	})
}

// SkillInUse puts the allowed-tools of the skill /skill:name (or /name)
// sent into effect for the rest of the process, as Claude Code does while
// a skill is active.
func (g *Guard) SkillInUse(skills []prompt.Skill, name string) {
	if g.perms == nil {
		return
	}
	for _, s := range skills {
		if s.Name == name && len(s.AllowedTools) > 0 {
			g.perms.Set.AllowForSession(s.AllowedTools, "skill "+s.Name)
		}
	}
}

// dontAskAnswer is the gate's answer under defaultMode dontAsk: what no
// rule allowed is refused without asking.
func dontAskAnswer() approval.Answer {
	return approval.Answer{Choice: approval.Deny, Reason: "no permission rule allows this tool call (defaultMode dontAsk)"}
}

// PrintPermissions is the permissions part of `tiny-go config`: each
// rule with its file, the mode and directories, then what cannot be used.
func PrintPermissions(w io.Writer, set *permissions.Settings) error {
	fmt.Fprintln(w)
	if len(set.Rules) == 0 {
		fmt.Fprintln(w, "permission rules: none (permissions of .claude/settings.json, .claude/settings.local.json, ~/.claude/settings.json)")
	} else {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "PERMISSION\tRULE\tFROM")
		for _, r := range set.Rules {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", r.Kind, cmdutil.OneLine(r.Text), r.Source)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if set.DefaultMode != "" {
		fmt.Fprintf(w, "permission defaultMode: %s (%s)\n", set.DefaultMode, set.DefaultModeSource)
	}
	for _, d := range set.AdditionalDirectories {
		fmt.Fprintf(w, "permission additionalDirectory: %s (%s)\n", d.Path, d.Source)
	}
	for _, p := range set.Problems {
		fmt.Fprintf(w, "permission problem: %s\n", p)
	}
	return nil
}
