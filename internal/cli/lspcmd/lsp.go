// Package lspcmd is `tiny-go lsp`: which language servers are in effect and
// which run; the language-server settings every run reads, and the servers
// a run prepares from them (servers.go).
package lspcmd

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tiny-agent/tiny-go/internal/cli/cmdutil"
	"github.com/tiny-agent/tiny-go/internal/config"
	"github.com/tiny-agent/tiny-go/internal/lsp"
)

// Settings are the [lsp] tables of the settings files over the
// project's .lsp.json (Claude Code's shape), over the defaults.
func Settings(settings *config.Settings, cwd string) (lsp.Settings, error) {
	s := lsp.DefaultSettings()
	p := filepath.Join(cwd, ".lsp.json")
	if data, err := os.ReadFile(p); err == nil {
		if err := s.ApplyLSPJSON(data); err != nil {
			return s, fmt.Errorf("%s: %w (fix it, or set TINY_LSP=off)", p, err)
		}
	}
	for _, t := range settings.LSP() {
		if err := s.ApplyTable(t.JSON); err != nil {
			return s, fmt.Errorf("%s: %w (fix it, or set TINY_LSP=off)", t.Source, err)
		}
	}
	return s, nil
}

// NewCommand is `tiny-go lsp` and its status command.
func NewCommand(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "lsp",
		Short: "Language servers: which are in effect and which run (docs/lsp.md)",
	}
	var asJSON bool
	status := &cobra.Command{
		Use:   "status",
		Short: "Show the language servers in effect and those the tiny-go processes of this directory run",
		Example: `  tiny-go lsp status
  tiny-go lsp status --json`,
		Args: cmdutil.ExactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := f.Config(cmd)
			if err != nil {
				return err
			}
			return status(f.Stdout, cfg, asJSON)
		},
	}
	status.Flags().BoolVar(&asJSON, "json", false, "print one JSON object")
	cmd.AddCommand(status)
	return cmd
}

// status prints the servers in effect and those running.
func status(w io.Writer, cfg cmdutil.Config, asJSON bool) error {
	cwd := cfg.Cwd
	settings, err := Settings(cfg.Settings, cwd)
	if err != nil {
		return err
	}
	servers := settings.Servers(nil)
	var missing []lsp.Missing
	if strings.EqualFold(strings.TrimSpace(cfg.Getenv("TINY_LSP")), "off") {
		servers = nil
	} else if !asJSON {
		missing = lsp.ProjectMissing(cwd, settings.Missing(nil))
	}
	running, err := lsp.ReadStatus(cwd)
	if err != nil {
		return err
	}
	if asJSON {
		type server struct {
			Name      string            `json:"name"`
			Command   []string          `json:"command"`
			Languages map[string]string `json:"languages"`
		}
		out := struct {
			Servers []server     `json:"servers"`
			Running []lsp.Status `json:"running"`
		}{Servers: []server{}, Running: running}
		for _, s := range servers {
			out.Servers = append(out.Servers, server{s.Name, s.Command, s.Languages})
		}
		if out.Running == nil {
			out.Running = []lsp.Status{}
		}
		return json.NewEncoder(w).Encode(out)
	}
	for _, l := range lsp.StatusLines(cwd, servers, missing, running) {
		fmt.Fprintln(w, l)
	}
	return nil
}
