package cli

import (
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
	"github.com/tiny-agent/tiny-go/internal/cli/cmdutil"
	"github.com/tiny-agent/tiny-go/internal/cli/modelwire"
)

// rootExamples are the Examples of `tiny-go --help`.
const rootExamples = `  tiny-go                                   interactive
  tiny-go "fix the failing test"            one shot: the answer on stdout, the tool log on stderr
  tiny-go --json "summarize README.md"      one shot: lifecycle events as JSON Lines
  tiny-go --continue                        resume the newest session of this directory
  tiny-go --session <id> "and now the docs"
  tiny-go --mcp fs,git "what changed?"      with only these of the configured MCP servers
  tiny-go -- help                           a one-word prompt that is also a command
  tiny-go session list --json
  tiny-go mcp list
  tiny-go completion bash > /etc/bash_completion.d/tiny-go`

// environmentHelp is the Environment section of `tiny-go --help`.
const environmentHelp = `
Environment:
  OPENROUTER_API_KEY     the OpenRouter key (required for the default endpoint)
  TINY_ENDPOINT          an OpenAI-compatible base URL (default https://openrouter.ai/api/v1)
  TINY_API_KEY           the bearer token of another endpoint, when it needs one
  TINY_MODEL             the model id (default ` + modelwire.DefaultModel + `)
  TINY_PROVIDER          openrouter (default), openai, openai-responses (the Responses
                         API) or anthropic (the Messages API)
  ANTHROPIC_API_KEY      the Anthropic key, for TINY_PROVIDER=anthropic
  OPENAI_API_KEY         the OpenAI key, for TINY_PROVIDER=openai-responses
  TINY_NATIVE_TOOLS      auto, on or off: OpenAI's apply_patch and shell tools
  TINY_MCP_CONFIG        one more MCP server file, before .tiny-agent/mcp.json, .mcp.json
                         and the user's mcp.json (every configured server is used;
                         --mcp picks some; 'tiny-go mcp list')
  TINY_CONTEXT_WINDOW, TINY_COMPACT_SHARE, TINY_IDLE_TIMEOUT, TINY_REQUEST_TIMEOUT,
  TINY_REASONING
                         defaults of the flags of the same name
  TINY_AGENT_ENVIRONMENT_IDENTITY, OTEL_*
                         the environment identity of new sessions; OpenTelemetry export
  NO_COLOR               no colours

Settings files (flags > environment > project > user > defaults; 'tiny-go config'):
  ~/.config/tiny-go/config.toml (under $XDG_CONFIG_HOME when set), .tiny-agent/config.toml
`

// configureManners makes help and completion commands (never prompts),
// adds Examples and an Environment section to --help, prints the commit
// with --version and answers a mistyped command with "did you mean".
func configureManners(a *app, root *cobra.Command) {
	root.Example = rootExamples
	root.SetHelpTemplate(root.HelpTemplate() + `{{if not .HasParent}}` + environmentHelp + `{{end}}`)
	root.Version = versionString()
	root.SetVersionTemplate("{{.Name}} {{.Version}}\n")
	root.SetHelpCommand(newHelpCommand(a))
	root.AddCommand(newVersionCommand())
	root.CompletionOptions.HiddenDefaultCmd = false
	root.CompletionOptions.DisableDefaultCmd = false
	root.SuggestionsMinimumDistance = 2

	run := root.RunE
	root.RunE = func(cmd *cobra.Command, args []string) error {
		// A word before -- that is a near miss of a command is a typo,
		// not a prompt; after -- everything is the prompt.
		if len(args) > 0 && cmd.ArgsLenAtDash() != 0 {
			if s := typoOfCommand(cmd, args[0]); s != "" {
				return cmdutil.UsageErrorf("unknown command %q (did you mean %s?); to send it as a prompt, put it after --: tiny-go -- %s",
					args[0], s, strings.Join(args, " "))
			}
		}
		return run(cmd, args)
	}
}

// typoOfCommand names the command that word misspells, or "". Only the
// long names count: a prompt's first word is often one edit away from a
// short one ("map" and "mcp").
func typoOfCommand(root *cobra.Command, word string) string {
	if len(word) < 5 || strings.ContainsAny(word, " \t\n./") {
		return ""
	}
	for _, c := range root.Commands() {
		if c.Hidden || len(c.Name()) < 5 || c.Name() == word {
			continue
		}
		if levenshtein(strings.ToLower(word), c.Name()) <= 1 {
			return c.Name()
		}
	}
	return ""
}

func levenshtein(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur := make([]int, len(rb)+1)
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(rb)]
}

// newHelpCommand is `tiny-go help [command]`. An unknown topic is a usage
// error that says how to send a prompt starting with "help".
func newHelpCommand(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "help [command]",
		Short: "Help about any command",
		Args:  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			root := cmd.Root()
			target, rest, err := root.Find(args)
			if err != nil || target == nil || len(rest) > 0 {
				return cmdutil.UsageErrorf("unknown help topic %q; to send a prompt that starts with \"help\", put it after --: tiny-go -- help %s",
					strings.Join(args, " "), strings.Join(args, " "))
			}
			target.SetOut(a.stdout)
			return target.Help()
		},
	}
}

// newVersionCommand is `tiny-go version`, as --version: the habit of go,
// docker and kubectl users, who would otherwise send "version" as a prompt.
func newVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print tiny-go's version (as --version)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "tiny-go %s\n", versionString())
			return err
		},
	}
}

// versionString is the version and, when the binary was built from a
// repository, the commit: "0.1.0-dev (commit 1a2b3c4d5e6f, modified)".
func versionString() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return cmdutil.Version
	}
	var commit string
	var modified bool
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			commit = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if commit == "" {
		return cmdutil.Version + " (commit unknown)"
	}
	if len(commit) > 12 {
		commit = commit[:12]
	}
	if modified {
		return fmt.Sprintf("%s (commit %s, modified)", cmdutil.Version, commit)
	}
	return fmt.Sprintf("%s (commit %s)", cmdutil.Version, commit)
}

// runGroup runs a command group given without a subcommand: its help on
// stderr and a usage exit; what follows it that is not one of its
// subcommands is rejected with "did you mean".
func runGroup(a *app) func(cmd *cobra.Command, args []string) error {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) > 0 {
			return cmdutil.UsageErrorf("unknown command %q for %q%s (see '%s --help')", args[0], cmd.CommandPath(), suggestion(cmd, args[0]), cmd.CommandPath())
		}
		cmd.SetOut(a.stderr)
		cmd.Help()
		return cmdutil.ExitError{Code: exitUsage}
	}
}
