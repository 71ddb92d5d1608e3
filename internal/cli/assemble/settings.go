package assemble

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/tiny-agent/tiny-go/internal/cli/cmdutil"
	"github.com/tiny-agent/tiny-go/internal/config"
	"github.com/tiny-agent/tiny-go/internal/secrets"
)

// settingFlags are the flags that set a setting of internal/config.
var SettingFlags = []struct {
	Key  config.Key
	Flag string
}{
	{config.Model, "model"}, {config.Approval, "approval"}, {config.Sandbox, "sandbox"},
	{config.Writable, "writable"}, {config.Network, "network"}, {config.ContextWindow, "context-window"},
	{config.CompactShare, "compact-share"}, {config.Reasoning, "reasoning"},
	{config.IdleTimeout, "idle-timeout"}, {config.RequestTimeout, "request-timeout"},
}

// loadSettings merges the settings files, the environment and the setting
// flags given in fl, and returns io with the merged environment (the
// files' values standing in for unset variables) and the settings.
func LoadSettings(io Stdio, cwd string, fl *pflag.FlagSet) (Stdio, error) {
	var given []config.FlagValue
	for _, sf := range SettingFlags {
		f := fl.Lookup(sf.Flag)
		if f == nil || !f.Changed {
			continue
		}
		v := config.FlagValue{Key: sf.Key, Name: "--" + sf.Flag, Value: f.Value.String()}
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			v.List = sv.GetSlice()
			v.Value = strings.Join(v.List, ", ")
		}
		given = append(given, v)
	}
	s, err := config.Load(config.Options{WorkDir: cwd, Getenv: io.Getenv, Flags: given})
	if err != nil {
		return io, cmdutil.UsageError{Err: err} // a settings file that cannot be used
	}
	// Like the catalog's tokens at start (Program).
	io.conceal(s.TokenEnvNames())
	io.Getenv = s.Getenv(io.Getenv)
	io.Settings = s
	return io, nil
}

// applyFileSettings puts the files' values of the settings that have a
// flag but no variable where the flags are read.
func ApplyFileSettings(f *Flags, s *config.Settings) {
	if s == nil {
		return
	}
	if v, ok := s.FromFile(config.Approval); ok {
		f.Approval = v.Value
	}
	if v, ok := s.FromFile(config.Sandbox); ok {
		f.Sandbox.Mode = v.Value
	}
	if v, ok := s.FromFile(config.Writable); ok {
		f.Sandbox.Writable = v.List
	}
	if v, ok := s.FromFile(config.Network); ok {
		f.Sandbox.Network = v.Value
	}
}

// settingSource tells where the value of k in effect came from (flag,
// environment variable, settings file and line, or default).
func (s Stdio) SettingSource(k config.Key) config.Source {
	if s.Settings == nil {
		return config.Source{Kind: config.Default}
	}
	return s.Settings.Source(k)
}

// conceal takes the variables names out of the environment that commands
// inherit and of /proc/<pid>/environ; getenv still reads them from memory.
func (io *Stdio) conceal(names []string) {
	if len(names) == 0 {
		return
	}
	concealed, err := secrets.Conceal(names)
	if err != nil {
		fmt.Fprintf(io.Stderr, "%s: warning: %v\n", cmdutil.ProgramName, err)
	}
	base := io.Getenv
	io.Getenv = func(name string) string {
		if v := base(name); v != "" {
			return v
		}
		return concealed(name)
	}
}
