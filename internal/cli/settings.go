package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/tiny-agent/tiny-go/internal/config"
	"github.com/tiny-agent/tiny-go/internal/secrets"
)

// settingFlags are the flags that set a setting of internal/config.
var settingFlags = []struct {
	key  config.Key
	flag string
}{
	{config.Model, "model"}, {config.Approval, "approval"}, {config.Sandbox, "sandbox"},
	{config.Writable, "writable"}, {config.Network, "network"}, {config.ContextWindow, "context-window"},
	{config.CompactShare, "compact-share"}, {config.Reasoning, "reasoning"},
	{config.IdleTimeout, "idle-timeout"}, {config.RequestTimeout, "request-timeout"},
}

// loadSettings merges the settings files, the environment and the setting
// flags given in fl, and returns io with the merged environment (the
// files' values standing in for unset variables) and the settings.
func loadSettings(io stdio, cwd string, fl *pflag.FlagSet) (stdio, error) {
	var given []config.FlagValue
	for _, sf := range settingFlags {
		f := fl.Lookup(sf.flag)
		if f == nil || !f.Changed {
			continue
		}
		v := config.FlagValue{Key: sf.key, Name: "--" + sf.flag, Value: f.Value.String()}
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			v.List = sv.GetSlice()
			v.Value = strings.Join(v.List, ", ")
		}
		given = append(given, v)
	}
	s, err := config.Load(config.Options{WorkDir: cwd, Getenv: io.getenv, Flags: given})
	if err != nil {
		return io, usageError{Err: err} // a settings file that cannot be used
	}
	// Like the catalog's tokens at start (Program).
	io.conceal(s.TokenEnvNames())
	io.getenv = s.Getenv(io.getenv)
	io.settings = s
	return io, nil
}

// applyFileSettings puts the files' values of the settings that have a
// flag but no variable where the flags are read.
func applyFileSettings(f *runFlags, s *config.Settings) {
	if s == nil {
		return
	}
	if v, ok := s.FromFile(config.Approval); ok {
		f.approval = v.Value
	}
	if v, ok := s.FromFile(config.Sandbox); ok {
		f.sandbox.mode = v.Value
	}
	if v, ok := s.FromFile(config.Writable); ok {
		f.sandbox.writable = v.List
	}
	if v, ok := s.FromFile(config.Network); ok {
		f.sandbox.network = v.Value
	}
}

// settingSource tells where the value of k in effect came from (flag,
// environment variable, settings file and line, or default).
func (s stdio) settingSource(k config.Key) config.Source {
	if s.settings == nil {
		return config.Source{Kind: config.Default}
	}
	return s.settings.Source(k)
}

// conceal takes the variables names out of the environment that commands
// inherit and of /proc/<pid>/environ; getenv still reads them from memory.
func (io *stdio) conceal(names []string) {
	if len(names) == 0 {
		return
	}
	concealed, err := secrets.Conceal(names)
	if err != nil {
		fmt.Fprintf(io.stderr, "%s: warning: %v\n", programName, err)
	}
	base := io.getenv
	io.getenv = func(name string) string {
		if v := base(name); v != "" {
			return v
		}
		return concealed(name)
	}
}
