package assemble

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
	"github.com/tiny-agent/tiny-go/internal/statekey"
)

// ccPermissions is the wiring of Claude Code's permission rules into a
// run: the rules, where "always" answers go, and what defaultMode asked.
type ccPermissions struct {
	Set *permissions.Settings
	// local is the settings.local.json "always" answers are added to.
	local       string
	acceptEdits bool
	dontAsk     bool
}

// loadPermissions reads the permission rules in effect for cwd.
func LoadPermissions(io Stdio, cwd string) (*permissions.Settings, string) {
	home := io.Getenv("HOME")
	project := hooks.ProjectDir(cwd, home)
	return permissions.Load(permissions.Files(home, project), home, cwd), project
}

// configurePermissions reads the rules, says what cannot be used, and
// applies defaultMode where no --approval (or approval setting) chose a
// mode: plan and bypassPermissions (auto) everywhere, acceptEdits and
// dontAsk where a user can be asked (interactive mode).
func (a *Runner) configurePermissions() {
	set, project := LoadPermissions(a.IO, a.Cwd)
	for _, p := range set.Problems {
		fmt.Fprintf(a.IO.Stderr, "%s: %s\n", cmdutil.ProgramName, p)
	}
	a.Perms = &ccPermissions{Set: set, local: permissions.LocalFile(localSettingsDir(project, a.Cwd))}
	// The model's read tool runs as tiny-go, which can read its state
	// key: the key must not reach the model, which could hand it to a
	// command to seal forged state (commands never see the folder).
	if dir, err := statekey.Dir(); err == nil && filepath.IsAbs(dir) && !within(a.Cwd, dir) {
		set.DenyForProcess([]string{"Read(/" + dir + "/**)", "Edit(/" + dir + "/**)"}, KeyRuleSource)
	}
	if a.Flags.Approval != "" {
		return
	}
	interactive := a.UIObserver != nil && !a.Flags.JSON
	switch set.DefaultMode {
	case "plan":
		a.Flags.Approval = string(approval.Plan)
	case "bypassPermissions":
		a.Flags.Approval = string(approval.Auto)
	case "acceptEdits":
		a.Perms.acceptEdits = interactive
	case "dontAsk":
		a.Perms.dontAsk = interactive
	}
}

// keyRuleSource names tiny-go's own rules that keep its tools from the
// state key's folder.
const KeyRuleSource = "tiny-go (its state key's folder)"

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
func (a *Runner) additionalDirectories() []string {
	if a.Perms == nil {
		return nil
	}
	var dirs []string
	for _, d := range a.Perms.Set.AdditionalDirectories {
		if fi, err := os.Stat(d.Path); err != nil || !fi.IsDir() {
			fmt.Fprintf(a.IO.Stderr, "%s: %s: permissions.additionalDirectories: %s is not a directory; it is not used\n", cmdutil.ProgramName, d.Source, d.Path)
			continue
		}
		dirs = append(dirs, d.Path)
	}
	return dirs
}

// hiddenPaths is the sandbox's Policy.Hidden: what Read deny rules name.
func (a *Runner) hiddenPaths() func() []string {
	if a.Perms == nil {
		return nil
	}
	return a.Perms.Set.HiddenPaths
}

// warnUnhidden says, once, that commands can read what Read deny rules
// name when the sandbox cannot hide it.
func (a *Runner) warnUnhidden() {
	if a.Perms == nil || a.Sandbox.Hides() {
		return
	}
	if paths := a.Perms.Set.HiddenPaths(); len(paths) > 0 {
		fmt.Fprintf(a.IO.Stderr, "%s: warning: commands run without namespaces here, so Read deny rules keep %s from the read tool only; commands can read it\n", cmdutil.ProgramName, paths[0])
	}
}

// permissionHooks puts the rules in front of the hooks (inner, maybe nil)
// of an agent whose approval is approve.
func (a *Runner) permissionHooks(inner agent.HookRunner) agent.HookRunner {
	p := a.Perms
	var skills []permissions.Skill
	for _, s := range a.Skills {
		if len(s.AllowedTools) > 0 {
			skills = append(skills, permissions.Skill{Name: s.Name, Path: s.Path, Allowed: s.AllowedTools})
		}
	}
	if p == nil || (len(p.Set.Rules) == 0 && !p.acceptEdits && len(skills) == 0) {
		return inner
	}
	// Someone can answer where there is a gate (interactive mode, in
	// every approval mode) or an embedder.
	return &permissions.Runner{Inner: inner, Settings: p.Set, AcceptEdits: p.acceptEdits, Skills: skills, CanAsk: func() bool {
		return a.Gate != nil || a.Embed != nil
	}}
}

// keepInSettings has the gate add the "always" answers Claude Code keeps
// (commands, MCP tools) to settings.local.json.
func (a *Runner) keepInSettings(g *approval.Gate) {
	if g == nil || a.Perms == nil {
		return
	}
	local := a.Perms.local
	g.KeepAlso(func(keys [][]string) {
		var rules []string
		for _, k := range keys {
			if r := permissions.RuleOf(k); r != "" {
				rules = append(rules, r)
			}
		}
		if err := permissions.AddAllow(local, rules); err != nil {
			a.hookLine(fmt.Sprintf("warning: the answer holds for this session only: %v", err))
		}
		// A host allowed for web_fetch is a rule at once: it is what lets
		// the fetch reach a local address (netguard) and its redirects.
		var fetchRules []string
		for _, r := range rules {
			if strings.HasPrefix(r, cctools.WebFetch+"(") {
				fetchRules = append(fetchRules, r)
			}
		}
		a.Perms.Set.AllowForSession(fetchRules, local)
	})
}

// skillInUse puts the allowed-tools of the skill /skill:name (or /name)
// sent into effect for the rest of the process, as Claude Code does while
// a skill is active.
func (a *Runner) skillInUse(name string) {
	if a.Perms == nil {
		return
	}
	for _, s := range a.Skills {
		if s.Name == name && len(s.AllowedTools) > 0 {
			a.Perms.Set.AllowForSession(s.AllowedTools, "skill "+s.Name)
		}
	}
}

// dontAskAnswer is the gate's answer under defaultMode dontAsk: what no
// rule allowed is refused without asking.
func dontAskAnswer() approval.Answer {
	return approval.Answer{Choice: approval.Deny, Reason: "no permission rule allows this tool call (defaultMode dontAsk)"}
}

// printPermissions is the permissions part of `tiny-go config`: each
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
