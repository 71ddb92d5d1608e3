package mcpcmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sync"

	"github.com/spf13/cobra"

	"github.com/tiny-agent/tiny-go/internal/cli/cmdutil"
	"github.com/tiny-agent/tiny-go/internal/config"
	"github.com/tiny-agent/tiny-go/internal/mcp"
	"github.com/tiny-agent/tiny-go/internal/oauth"
	"github.com/tiny-agent/tiny-go/internal/procs"
	"github.com/tiny-agent/tiny-go/internal/sandbox"
	"github.com/tiny-agent/tiny-go/internal/secrets"
	"github.com/tiny-agent/tiny-go/internal/ui"
)

// IO is what MCP takes of the process: the standard streams, the
// environment with the settings files' values standing in for unset
// variables, and the settings (nil where none were loaded).
type IO struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Getenv         func(string) string
	Settings       *config.Settings
}

func (io IO) lookupEnv(name string) (string, bool) {
	v := io.Getenv(name)
	return v, v != ""
}

// here is the IO and working directory of a command of cmd, as every
// mcp command starts.
func here(f *cmdutil.Factory, cmd *cobra.Command) (IO, string, error) {
	cfg, err := f.Config(cmd)
	if err != nil {
		return IO{}, "", err
	}
	return IO{Stdin: f.Stdin, Stdout: f.Stdout, Stderr: f.Stderr, Getenv: cfg.Getenv, Settings: cfg.Settings}, cfg.Cwd, nil
}

// Options are the options of every MCP connection of this run: stdio
// servers start in the working directory with a minimal environment that
// never holds a secret tiny-go knows, and a server that goes away
// mid-session is reported once: through display (the interactive UI, nil
// otherwise) while it is attached, else on stderr.
func Options(cwd string, io IO, servers []mcp.Server, sb *sandbox.Sandbox, tr *procs.Tracker, display *ui.Observer) mcp.Options {
	var mu sync.Mutex
	return mcp.Options{
		ClientName:    "tiny-go",
		ClientVersion: cmdutil.Version,
		WorkDir:       cwd,
		LookupEnv:     io.lookupEnv,
		Secrets:       secretValues(io, servers),
		Sandbox:       sb,
		Procs:         tr,
		Notice: func(line string) {
			if display.Notice(line) {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			fmt.Fprintln(io.Stderr, line)
		},
		OAuth:  oauthOptions(io, false),
		Elicit: elicit(io, display),
	}
}

// elicit puts a server's form to the user: in the interactive UI while
// it runs (a form to fill in), else on the terminal a line per field;
// without a terminal it is declined with one line on stderr.
func elicit(io IO, display *ui.Observer) mcp.ElicitFunc {
	return func(ctx context.Context, f mcp.Form) (mcp.ElicitAnswer, error) {
		ans, err := display.AskForm(ctx, f)
		if !errors.Is(err, ui.ErrNotAttached) {
			return ans, err
		}
		if !ui.IsTerminal(io.Stdin, io.Stderr) {
			fmt.Fprintf(io.Stderr, "MCP %s asked for input (%s); declined: there is no terminal to answer on\n", f.Server, ui.OneLine(f.Message))
			return mcp.ElicitAnswer{Action: mcp.ElicitDecline}, nil
		}
		return ui.AskForm(ctx, io.Stdin, io.Stderr, f)
	}
}

// secretValues are the values of the model's key variables and of the MCP
// token variables: no stdio server may get them.
func secretValues(io IO, servers []mcp.Server) []string {
	// Every key variable (OpenRouter, endpoint, Anthropic) and every
	// token of the catalog.
	names := append(secrets.Names(io.Getenv), io.Settings.TokenEnvNames()...)
	for _, s := range servers {
		if s.TokenEnv != "" {
			names = append(names, s.TokenEnv)
		}
	}
	var values []string
	for _, name := range names {
		if v := io.Getenv(name); v != "" {
			values = append(values, v)
		}
	}
	return values
}

// oauthOptions is where MCP sign-ins are kept (the user's config
// directory) and how the browser is shown; nil without a home directory.
func oauthOptions(io IO, interactive bool) *mcp.OAuthOptions {
	user := config.UserFile(io.Getenv)
	if user == "" {
		return nil
	}
	return &mcp.OAuthOptions{
		Store:       &oauth.Store{Dir: oauth.StoreDir(filepath.Dir(user))},
		Interactive: interactive,
		Browser:     oauth.SystemBrowser(io.Getenv, func(line string) { fmt.Fprintln(io.Stderr, line) }),
	}
}
