package agent

import (
	"fmt"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/provider"
	"github.com/tiny-agent/tiny-go/internal/recovery"
	"github.com/tiny-agent/tiny-go/internal/session"
	"github.com/tiny-agent/tiny-go/internal/tools"
)

// Identities of the one adapter this runtime speaks (session.md §4).
const (
	AdapterIdentity = "openrouter:chat-completions:v1"
	routingPrefix   = "openrouter:"
)

// configuration is everything a model attempt is configured with, computed
// once per agent: the snapshot and digest recorded in every stepAttempt,
// the planner's view of the current configuration, and the wire tools.
type configuration struct {
	snapshot session.ConfigurationSnapshot
	digest   string
	current  recovery.Current
	wire     []provider.ToolDefinition
	byName   map[string]tools.Tool
}

func newConfiguration(model, systemPrompt, environmentIdentity string, ts []tools.Tool) (*configuration, error) {
	c := &configuration{byName: make(map[string]tools.Tool, len(ts))}
	snapTools := make([]session.ConfigurationTool, 0, len(ts))
	curTools := make([]recovery.CurrentTool, 0, len(ts))
	for _, t := range ts {
		def := t.Definition()
		if _, dup := c.byName[def.Name]; dup {
			return nil, fmt.Errorf("two tools are named %q", def.Name)
		}
		c.byName[def.Name] = t
		params := def.Parameters
		if len(params) == 0 {
			params = jsontext.Value(`{"type":"object","properties":{}}`)
		}
		dd, err := session.DefinitionDigest(def.Name, def.Description, params, def.DefinitionIdentity)
		if err != nil {
			return nil, fmt.Errorf("digest of tool %s: %w", def.Name, err)
		}
		snapTools = append(snapTools, session.ConfigurationTool{Name: def.Name, DefinitionDigest: dd})
		rp := t.Replay()
		curTools = append(curTools, recovery.CurrentTool{Name: def.Name, DefinitionDigest: dd, Replay: rp.Policy, ReplayKey: rp.Key})
		c.wire = append(c.wire, provider.ToolDefinition{Name: def.Name, Description: def.Description, Parameters: params})
	}
	promptDigest := session.StringDigest(systemPrompt)
	c.snapshot = session.ConfigurationSnapshot{
		Model:               model,
		SystemPromptDigest:  promptDigest,
		Tools:               snapTools,
		AdapterIdentity:     AdapterIdentity,
		RoutingIdentity:     routingPrefix + model,
		OutputOptionsDigest: session.EmptyObjectDigest,
	}
	c.digest = session.ConfigurationDigest(c.snapshot)
	c.current = recovery.Current{ConfigurationDigest: c.digest, EnvironmentIdentity: environmentIdentity, Tools: curTools}
	return c, nil
}

// CurrentConfiguration is the planner's view of an agent with this
// configuration, without building one: `session list` uses it to tell
// whether an open session would resume or be blocked.
func CurrentConfiguration(model, systemPrompt, environmentIdentity string, ts []tools.Tool) (recovery.Current, error) {
	c, err := newConfiguration(model, systemPrompt, environmentIdentity, ts)
	if err != nil {
		return recovery.Current{}, err
	}
	return c.current, nil
}
