package headlesscmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/spf13/pflag"

	"github.com/tiny-agent/tiny-go/internal/acp"
	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/attach"
	"github.com/tiny-agent/tiny-go/internal/cctools"
	"github.com/tiny-agent/tiny-go/internal/cli/assemble"
	"github.com/tiny-agent/tiny-go/internal/cli/cmdutil"
	"github.com/tiny-agent/tiny-go/internal/cli/modelwire"
	"github.com/tiny-agent/tiny-go/internal/cli/promptwire"
	"github.com/tiny-agent/tiny-go/internal/headless"
	"github.com/tiny-agent/tiny-go/internal/session"
	"github.com/tiny-agent/tiny-go/internal/tools"
)

// headlessFlags are Claude Code's print-mode flags (docs/headless.md):
// with -p, --output-format or --input-format tiny-go speaks the
// stream-json protocol of the Claude Agent SDK.
type Flags struct {
	print          bool
	output, input  string
	verbose        bool
	partial        bool
	promptTool     string
	maxTurns       int
	allowed        []string
	disallowed     []string
	tools          string
	system, append string
	systemFile     string
	PermissionMode string
	Skip           bool
}

// ignoredSDKFlags are flags the SDK (or a Claude Code user) may pass that
// tiny-go has no use for: accepted, and named in one warning line. A
// flag that takes a value is repeatable.
var ignoredSDKFlags = []struct {
	name    string
	boolean bool
}{
	{"thinking", false}, {"max-thinking-tokens", false}, {"thinking-display", false}, {"effort", false},
	{"max-budget-usd", false}, {"task-budget", false}, {"betas", false}, {"json-schema", false},
	{"debug-file", false}, {"debug", true}, {"permission-prompts", false}, {"channels", false},
	{"mcp-config", false}, {"strict-mcp-config", true}, {"setting-sources", false}, {"settings", false},
	{"allow-dangerously-skip-permissions", true}, {"fallback-model", false}, {"include-hook-events", true},
	{"session-mirror", true}, {"project-config-root", false}, {"add-dir", false}, {"await-initialize", true},
	{"plugin-dir", false}, {"plugin-dir-no-mcp", false}, {"fork-session", true}, {"resume-session-at", false},
	{"resume-drops-turn", false}, {"session-id", false}, {"no-session-persistence", true},
	{"initialize-fields", false}, {"managed-settings-in-initialize", true}, {"managed-settings", false},
	{"replay-user-messages", true}, {"workload", false}, {"debug-to-stderr", true},
}

// addHeadlessFlags defines the print-mode flags. It runs last
// (newRootCommand) and skips a flag something else already defines:
// headlessFrom reads the values by name, whoever defined them.
func AddFlags(fl *pflag.FlagSet) {
	str := func(name, usage string) {
		if fl.Lookup(name) == nil {
			fl.String(name, "", usage)
		}
	}
	boolean := func(name, short, usage string) {
		if fl.Lookup(name) == nil {
			if short != "" && fl.ShorthandLookup(short) == nil {
				fl.BoolP(name, short, false, usage)
				return
			}
			fl.Bool(name, false, usage)
		}
	}
	list := func(name, usage string) {
		if fl.Lookup(name) == nil {
			fl.StringArray(name, nil, usage)
		}
	}
	boolean("print", "p", "print mode: run the prompt (or the stream-json input) without the terminal UI, as claude -p does (docs/headless.md)")
	str("output-format", "print mode output: text (the answer), json (the result message) or stream-json (every message)")
	str("input-format", "print mode input: text (the prompt argument) or stream-json (messages and control requests on stdin)")
	boolean("verbose", "", "accepted for Claude Code compatibility (stream-json always has every message)")
	boolean("include-partial-messages", "", "stream-json: add stream_event messages with the reply's text as it streams")
	str("permission-prompt-tool", "stdio: ask the SDK (can_use_tool) about the calls the permission mode asks about")
	if fl.Lookup("max-turns") == nil {
		fl.Int("max-turns", 0, "print mode: stop a run after this many model replies (error_max_turns)")
	}
	list("allowedTools", "tools that run without asking, in Claude Code's names: Bash, Bash(go test:*), Edit, Write, mcp__server__tool")
	list("disallowedTools", "tools that never run, in Claude Code's names (a bare name removes the tool)")
	str("tools", "the built-in tools to offer, in Claude Code's names (default: all)")
	str("system-prompt", "print mode: replace tiny-go's system prompt")
	str("system-prompt-file", "print mode: replace tiny-go's system prompt with this file's text")
	str("append-system-prompt", "print mode: append to the system prompt")
	str("permission-mode", "Claude Code's permission mode: default (--approval ask), acceptEdits (edits), plan (plan), bypassPermissions (auto); in print mode also dontAsk and auto")
	boolean("dangerously-skip-permissions", "", "the same as --permission-mode bypassPermissions")
}

// headlessFrom reads the print-mode flags of a parsed command line.
func FlagsFrom(fl *pflag.FlagSet) *Flags {
	value := func(name string) string {
		if f := fl.Lookup(name); f != nil {
			return f.Value.String()
		}
		return ""
	}
	list := func(name string) []string {
		if v, err := fl.GetStringArray(name); err == nil {
			return v
		}
		if v, err := fl.GetStringSlice(name); err == nil {
			return v
		}
		return nil
	}
	h := &Flags{
		print: value("print") == "true", output: value("output-format"), input: value("input-format"),
		verbose: value("verbose") == "true", partial: value("include-partial-messages") == "true",
		promptTool: value("permission-prompt-tool"), allowed: list("allowedTools"), disallowed: list("disallowedTools"),
		tools: value("tools"), system: value("system-prompt"), append: value("append-system-prompt"), systemFile: value("system-prompt-file"),
		PermissionMode: value("permission-mode"), Skip: value("dangerously-skip-permissions") == "true",
	}
	h.maxTurns, _ = strconv.Atoi(value("max-turns"))
	return h
}

// addIgnoredSDKFlags defines the ignored flags last (newRootCommand), and
// only those no other part of tiny-go defines: one that gains a meaning
// elsewhere keeps it.
func AddIgnoredSDKFlags(fl *pflag.FlagSet) {
	for _, f := range ignoredSDKFlags {
		if fl.Lookup(f.name) != nil {
			continue
		}
		if f.boolean {
			fl.Bool(f.name, false, ignoredUsage)
		} else {
			fl.StringArray(f.name, nil, ignoredUsage)
		}
		_ = fl.MarkHidden(f.name)
	}
}

const ignoredUsage = "accepted and ignored (Claude Code compatibility)"

// active reports whether the command line asks for print mode.
func (h *Flags) Active() bool {
	return h.print || h.output != "" || h.input != ""
}

// options validates the flags into the driver's options.
func (h *Flags) options(fl *pflag.FlagSet, f *assemble.Flags, args []string) (headless.Options, error) {
	o, err := headless.NewOptions(headless.Flags{
		Output: h.output, Input: h.input, PromptTool: h.promptTool, PermissionMode: h.PermissionMode,
		Partial: h.partial, SkipPermissions: h.Skip, AutoApproval: f.Approval == "auto",
		MaxTurns: h.maxTurns, Allowed: h.allowed, Disallowed: h.disallowed, Prompt: strings.Join(args, " "),
	}, cmdutil.Version)
	if err != nil {
		return o, cmdutil.UsageError{Err: err}
	}
	return o, h.selectTools(fl, f, o.Rules.Deny)
}

// selectTools applies --tools and the bare names of --disallowedTools to
// the built-in tools offered (as --plugin would).
func (h *Flags) selectTools(fl *pflag.FlagSet, f *assemble.Flags, deny []string) error {
	set, err := tools.Select(f.Plugins)
	if err != nil {
		return cmdutil.UsageError{Err: err}
	}
	// todo_write and task (TodoWrite, Task) come and go together: a list
	// that names neither, or a deny of either, leaves both out.
	agentTool := func(n string) bool { return n == cctools.TodoWrite || n == cctools.Task || n == cctools.Agent }
	if fl.Changed("tools") && h.tools != "default" {
		set = nil
		f.AgentTools, f.NoDiagnosticsTool, f.NoWebFetch, f.NoWebSearch = false, true, true, true
		for _, n := range headless.SplitRules([]string{h.tools}) {
			if t := cctools.TinyName(n); slices.Contains(tools.PluginNames(), t) && !slices.Contains(set, t) {
				set = append(set, t)
			}
			f.AgentTools = f.AgentTools || agentTool(n)
			f.NoDiagnosticsTool = f.NoDiagnosticsTool && n != "diagnostics"
			f.NoWebFetch = f.NoWebFetch && n != cctools.WebFetch
			f.NoWebSearch = f.NoWebSearch && n != cctools.WebSearch && n != "web_search"
		}
	}
	for _, n := range deny {
		if strings.Contains(n, "(") {
			continue // a pattern: decided per call
		}
		if agentTool(n) {
			f.AgentTools = false
		}
		if n == "diagnostics" {
			f.NoDiagnosticsTool = true
		}
		if n == cctools.WebFetch {
			f.NoWebFetch = true
		}
		if n == cctools.WebSearch || n == "web_search" {
			f.NoWebSearch = true
		}
		set = slices.DeleteFunc(set, func(t string) bool { return t == cctools.TinyName(n) || (n == cctools.Bash && t == "bg") })
	}
	f.Plugins = []string{strings.Join(set, ",") + ","}
	return nil
}

// warnIgnored names the ignored flags that were given, in one line.
func warnIgnored(fl *pflag.FlagSet, stderr io.Writer, used ...string) {
	var given []string
	for _, f := range ignoredSDKFlags {
		if fl.Changed(f.name) && fl.Lookup(f.name).Usage == ignoredUsage && !slices.Contains(used, f.name) {
			given = append(given, "--"+f.name)
		}
	}
	if len(given) > 0 {
		fmt.Fprintf(stderr, "tiny-go: ignoring %s (no use in tiny-go; see docs/headless.md)\n", strings.Join(given, ", "))
	}
}

// runHeadless is print mode: the session is built exactly as a one-shot
// run's, with the driver as its event sink and approval host.
func Run(ctx context.Context, io assemble.Stdio, cwd string, f assemble.Flags, h *Flags, fl *pflag.FlagSet, args []string, hooks *assemble.TestHooks) error {
	if f.Resume {
		return cmdutil.UsageErrorf("-p --resume needs the session's id (--resume ID); list them with `tiny-go session list`.")
	}
	opt, err := h.options(fl, &f, args)
	if err != nil {
		return err
	}
	if !opt.StreamInput && strings.TrimSpace(opt.Prompt) == "" {
		if opt.Prompt, err = pipedPrompt(io.Stdin); err != nil {
			return err
		}
	}
	if f.Session != "" && f.Cont {
		return cmdutil.UsageErrorf("--resume and --continue cannot be used together.")
	}
	used, err := sdkFlags(fl, &opt)
	if err != nil {
		return err
	}
	warnIgnored(fl, io.Stderr, used...)
	opt.In, opt.Out, opt.Log = io.Stdin, io.Stdout, io.Stderr
	opt.OutputGone = outputGone(io.Stdout)
	d := headless.New(opt)

	f.Approval, f.JSON = "ask", true // the driver decides; stdout is the protocol's
	quiet := assemble.Stdio{Stdin: strings.NewReader(""), Stdout: io.Stderr, Stderr: io.Stderr, Getenv: io.Getenv, Settings: io.Settings}
	ar, err := assemble.New(ctx, assemble.Options{IO: quiet, Flags: f, Cwd: cwd, Hooks: hooks,
		Embed: &assemble.Embedding{Host: acp.Host{Events: d.Events, Ask: d.Ask, Approve: d.Approve}, CallbackHooks: true,
			PermissionMode: func() string { return string(d.Mode()) }},
		BeforeStart: func(r *assemble.Runner) error {
			if r.Wire.Access.KeyVar == modelwire.AnthropicKeyVar && r.Wire.Access.Key != "" {
				d.SetAPIKeySource(modelwire.AnthropicKeyVar)
			}
			return resumeOrFork(fl, &runner{r}, d)
		}})
	if err != nil {
		return err
	}
	defer ar.Close()
	r := &runner{ar}
	s := &headlessSession{r: r, baseModel: r.Wire.Model}
	system := h.system
	if h.systemFile != "" {
		b, err := os.ReadFile(h.systemFile)
		if err != nil {
			return cmdutil.UsageErrorf("--system-prompt-file: %v", err)
		}
		system = string(b)
	}
	if err := s.SetSystemPrompt(system, h.append); err != nil {
		return err
	}
	return r.serveHeadless(ctx, d, s)
}

// serveHeadless serves the driver with signals routed into the durable
// abort (SIGTERM is how the SDK stops a
// process that does not exit).
func (a *runner) serveHeadless(ctx context.Context, d *headless.Driver, s *headlessSession) error {
	ctx, hardStop := context.WithCancel(ctx)
	defer hardStop()
	stop := a.OnSignals(hardStop)
	defer stop()
	// A reader that closed stdout must not kill tiny-go with SIGPIPE before
	// the running operation is aborted durably.
	pipe := make(chan os.Signal, 1)
	signal.Notify(pipe, syscall.SIGPIPE)
	defer signal.Stop(pipe)
	if code := d.Serve(ctx, s); code != 0 {
		return cmdutil.ExitError{Code: code}
	}
	return nil
}

// pipedPrompt is the prompt of `echo question | tiny-go -p`: stdin, when it
// is not a terminal.
func pipedPrompt(in io.Reader) (string, error) {
	const none = "-p needs a prompt: as an argument, piped on stdin, or as messages with --input-format stream-json"
	if f, ok := in.(*os.File); ok {
		if fi, err := f.Stat(); err != nil || fi.Mode()&os.ModeCharDevice != 0 {
			return "", cmdutil.UsageErrorf(none)
		}
	}
	b, err := io.ReadAll(io.LimitReader(in, 16<<20))
	if err != nil {
		return "", fmt.Errorf("reading the prompt from stdin: %w", err)
	}
	if strings.TrimSpace(string(b)) == "" {
		return "", cmdutil.UsageErrorf(none)
	}
	return string(b), nil
}

// headlessSession is a runner seen by the headless driver. The driver
// reads the agent from its input goroutine (interrupt, initialize) while
// the main one may rebuild it between runs: mu orders the two.
type headlessSession struct {
	r         *runner
	baseModel string
	// system is tiny-go's own system prompt, before any replacement.
	system string
	mu     sync.RWMutex
}

func (s *headlessSession) ID() string            { return s.r.Store.ID() }
func (s *headlessSession) WorkDir() string       { return s.r.Cwd }
func (s *headlessSession) Model() string         { return s.Agent().Config().Model }
func (s *headlessSession) State() *session.State { return s.r.Store.State() }
func (s *headlessSession) MCPServers() []string  { return s.r.MCPAliases }

func (s *headlessSession) Agent() *agent.Agent {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.r.Agent
}

func (s *headlessSession) Tools() []string {
	var names []string
	for _, t := range s.Agent().Config().Tools {
		names = append(names, t.Definition().Name)
	}
	return names
}

func (s *headlessSession) Recover(ctx context.Context) error {
	ag := s.Agent()
	if !ag.Pending() {
		return nil
	}
	res, err := ag.Resume(ctx)
	if err != nil {
		return fmt.Errorf("recovering the open operation of session %s: %w", s.ID(), err)
	}
	if res.Blocked != "" {
		return errors.New(assemble.BlockedMessage(s.ID(), res.Blocked))
	}
	return nil
}

func (s *headlessSession) Run(ctx context.Context, prompt string) (agent.Result, error) {
	if instructions, ok := compactCommand(prompt); ok {
		// Claude Code's print mode runs /compact as the terminal does.
		defer s.r.UserHooks.ManualCompact(instructions)()
		res, _, err := s.Agent().Compact(ctx)
		return res, err
	}
	text, err := s.r.Expand(prompt)
	if err != nil {
		return agent.Result{}, err
	}
	return s.r.Run(ctx, text)
}

// compactCommand reports whether prompt is /compact, and what follows it
// (the custom instructions hooks are told).
func compactCommand(prompt string) (string, bool) {
	p := strings.TrimSpace(prompt)
	if p == "/compact" {
		return "", true
	}
	rest, ok := strings.CutPrefix(p, "/compact ")
	return strings.TrimSpace(rest), ok
}

func (s *headlessSession) SetModel(model string) error {
	return s.rebuild(func(c *agent.Config) { c.Model = assemble.FirstNonEmpty(model, s.baseModel) })
}

// SetSystemPrompt replaces tiny-go's system prompt (when replace is set)
// and appends appendText.
func (s *headlessSession) SetSystemPrompt(replace, appendText string) error {
	if s.system == "" {
		s.system = s.Agent().Config().SystemPrompt
	}
	prompt := assemble.FirstNonEmpty(replace, s.system)
	if a := strings.TrimSpace(appendText); a != "" {
		prompt += "\n\n" + a
	}
	return s.rebuild(func(c *agent.Config) { c.SystemPrompt = prompt })
}

// rebuild makes a new agent with a changed configuration; only between
// runs.
func (s *headlessSession) rebuild(change func(*agent.Config)) error {
	cfg := s.Agent().Config()
	before := cfg
	change(&cfg)
	if cfg.Model == before.Model && cfg.SystemPrompt == before.SystemPrompt {
		return nil
	}
	ag, err := agent.New(cfg)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.r.Agent, s.r.Wire.Model = ag, cfg.Model
	s.mu.Unlock()
	return nil
}

func (s *headlessSession) StoreImage(mediaType string, data []byte, label string) (string, error) {
	return promptwire.StoreImage(s.r.Cwd, attach.Attachment{Mention: label, Kind: "image", Image: data, MediaType: mediaType})
}
