package cli

import (
	"fmt"
	"text/tabwriter"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/spf13/cobra"
	"github.com/tiny-agent/tiny-go/internal/cli/assemble"
	"github.com/tiny-agent/tiny-go/internal/cli/cmdutil"
	"github.com/tiny-agent/tiny-go/internal/cli/guard"
	"github.com/tiny-agent/tiny-go/internal/cli/hookwire"
	"github.com/tiny-agent/tiny-go/internal/cli/modelwire"
	"github.com/tiny-agent/tiny-go/internal/cli/promptwire"
	"github.com/tiny-agent/tiny-go/internal/config"
	"github.com/tiny-agent/tiny-go/internal/hooks"
	"github.com/tiny-agent/tiny-go/internal/mcp"
	"github.com/tiny-agent/tiny-go/internal/permissions"
	"github.com/tiny-agent/tiny-go/internal/prompt"
)

// settingsHere is the working directory of a subcommand and the settings
// in effect there, as every subcommand that reads them starts.
func (a *app) settingsHere(cmd *cobra.Command) (assemble.Stdio, string, error) {
	cwd, err := a.workDir()
	if err != nil {
		return assemble.Stdio{}, "", err
	}
	io, err := assemble.LoadSettings(a.stdio(), cwd, cmd.Flags())
	return io, cwd, err
}

// newConfigCommand is `tiny-go config`: the settings in effect and where
// each came from.
func newConfigCommand(a *app) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Show the settings in effect and where each came from (flag, environment, file:line, default)",
		Long: `Show the settings in effect and where each came from. Settings are read from
~/.config/tiny-go/config.toml (under $XDG_CONFIG_HOME when set) and
.tiny-agent/config.toml of the project; flags win over environment variables,
which win over the project's file, then the user's, then the defaults.
See docs/configuration.md.`,
		Example: `  tiny-go config
  tiny-go config --json
  tiny-go config --model x-ai/grok-4   # what a run with this flag would use`,
		Args: cmdutil.ExactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			io, cwd, err := a.settingsHere(cmd)
			if err != nil {
				return err
			}
			hookCfg, _ := hookwire.Load(io.Getenv, io.Settings, cwd)
			perms, _ := guard.LoadPermissions(io.Getenv, cwd)
			ins, insErr := prompt.ReadInstructions(cwd, io.Getenv("HOME"))
			return printSettings(io, asJSON, hookCfg, perms, configExtras{ins, insErr})
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&asJSON, "json", false, "print one JSON object")
	// The setting flags of a run, so the command shows what a run with
	// them would use; they are checked where a run uses them.
	for _, sf := range assemble.SettingFlags {
		if sf.Key == config.Writable {
			fl.StringArray(sf.Flag, nil, "as for a run")
			continue
		}
		fl.String(sf.Flag, "", "as for a run")
	}
	return cmd
}

// settingDefaults are the defaults, for people.
func settingDefaults() map[config.Key]string {
	return map[config.Key]string{
		config.Model:          modelwire.DefaultModel,
		config.Endpoint:       modelwire.DefaultEndpoint + " (anthropic: the Messages API)",
		config.Provider:       "openrouter (anthropic when the endpoint is Anthropic's); openai-responses for the Responses API",
		config.Approval:       "ask (interactive), auto (one-shot, --json)",
		config.Sandbox:        "workspace",
		config.Network:        "on",
		config.ContextWindow:  "the endpoint's model list, else 128000",
		config.CompactShare:   fmt.Sprint(assemble.DefaultCompactShare),
		config.Reasoning:      "the model's default",
		config.IdleTimeout:    "120s",
		config.RequestTimeout: "10m",
		config.HookFailClosed: "false",
		config.Notify:         "bell (when stderr is a terminal)",
		config.NotifyAfter:    "30s",

		config.NativeTools: "auto (on for GPT-5.1 and later and the codex models, with openai-responses)",

		config.WebFetchMaxBytes: "10485760 (10 MB)",
		config.WebFetchTimeout:  "30s",
		config.WebSearch:        "auto (the provider's own search on its own API, else searxng_url, else BRAVE_API_KEY, else not offered)",
		config.SearXNGURL:       "(none)",
	}
}

type mcpServerSetting struct {
	Alias  string        `json:"alias"`
	Source config.Source `json:"source"`
}

// configExtras are the parts of `tiny-go config` beyond settings, hooks
// and permissions.
type configExtras struct {
	instructions    *prompt.Instructions
	instructionsErr error
}

func printSettings(io assemble.Stdio, asJSON bool, hookCfg *hooks.Config, perms *permissions.Settings, extra configExtras) error {
	s := io.Settings
	all := s.All(settingDefaults())
	var servers []mcpServerSetting
	mcpSource := io.SettingSource(config.MCPServers)
	if mcpSource.Kind != config.Env {
		for _, sv := range s.Servers() {
			servers = append(servers, mcpServerSetting{sv.Alias, sv.Source})
		}
	}
	if asJSON {
		return printSettingsJSON(io, all, servers, mcpSource, hookCfg, perms, extra)
	}
	for _, f := range s.Files {
		state := ""
		if !f.Exists {
			state = " (none)"
		}
		fmt.Fprintf(io.Stdout, "%s settings: %s%s\n", f.Scope, f.Path, state)
	}
	fmt.Fprintln(io.Stdout)
	w := tabwriter.NewWriter(io.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "SETTING\tVALUE\tFROM")
	for _, v := range all {
		value := v.Value
		switch {
		case v.Secret && v.Set:
			value = "(set, not shown)"
		case v.Secret:
			value = "(none)"
		case value == "":
			value = "-"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\n", v.Key, value, v.Source)
	}
	switch {
	case mcpSource.Kind == config.Env:
		fmt.Fprintf(w, "%s\t%s\t%s\n", config.MCPServers, io.Getenv(mcp.ConfigEnv), mcpSource)
	case len(servers) == 0:
		fmt.Fprintf(w, "%s\t-\tdefault\n", config.MCPServers)
	}
	for _, sv := range servers {
		fmt.Fprintf(w, "%s.%s\t\t%s\n", config.MCPServers, sv.Alias, sv.Source)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if err := hookwire.Print(io.Stdout, hookCfg); err != nil {
		return err
	}
	if err := guard.PrintPermissions(io.Stdout, perms); err != nil {
		return err
	}
	return promptwire.PrintInstructions(io.Stdout, extra.instructions, extra.instructionsErr)
}

// printSettingsJSON is settings --json: the files, every setting with
// where it came from, the MCP servers, hooks, permissions and instruction
// files.
func printSettingsJSON(io assemble.Stdio, all []config.Setting, servers []mcpServerSetting, mcpSource config.Source, hookCfg *hooks.Config, perms *permissions.Settings, extra configExtras) error {
	type from struct {
		config.Setting
		From string `json:"from"`
	}
	out := struct {
		Files      []config.FileInfo  `json:"files"`
		Settings   []from             `json:"settings"`
		MCPCatalog string             `json:"mcpCatalog,omitzero"`
		MCPServers []mcpServerSetting `json:"mcpServers"`
		Hooks      []hooks.Hook       `json:"hooks"`
		Problems   []string           `json:"hookProblems,omitzero"`
		// Permissions are Claude Code's permission rules, each with
		// its file.
		Permissions *permissions.Settings `json:"permissions"`
		// Instructions are the instruction files the system prompt
		// holds, with their sizes.
		Instructions []promptwire.InstructionFile `json:"instructions"`
	}{Files: io.Settings.Files, MCPServers: servers, Hooks: hookCfg.Hooks, Problems: hookCfg.Problems, Permissions: perms,
		Instructions: promptwire.InstructionFiles(extra.instructions)}
	if perms.Rules == nil {
		perms.Rules = []permissions.Rule{}
	}
	if out.Hooks == nil {
		out.Hooks = []hooks.Hook{}
	}
	if out.Files == nil {
		out.Files = []config.FileInfo{}
	}
	if out.MCPServers == nil {
		out.MCPServers = []mcpServerSetting{}
	}
	for _, v := range all {
		out.Settings = append(out.Settings, from{v, v.Source.String()})
	}
	if mcpSource.Kind == config.Env {
		out.MCPCatalog = io.Getenv(mcp.ConfigEnv)
	}
	if err := json.MarshalWrite(io.Stdout, out, jsontext.WithIndent("  ")); err != nil {
		return err
	}
	fmt.Fprintln(io.Stdout)
	return nil
}
