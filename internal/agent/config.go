package agent

import (
	"fmt"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/provider"
	"github.com/tiny-agent/tiny-go/internal/recovery"
	"github.com/tiny-agent/tiny-go/internal/session"
	"github.com/tiny-agent/tiny-go/internal/tools"
)

// Identities of the default adapter, OpenRouter's Chat Completions
// (session.md §4).
const (
	AdapterIdentity = "openrouter:chat-completions:v1"
	routingPrefix   = "openrouter:"
)

// Identity is the adapter a model request goes through, as the
// configuration snapshot records it: adapterIdentity, and the prefix of
// routingIdentity (followed by the model). A session resumes only under
// the identity its open step was started with (configuration_changed).
type Identity struct {
	Adapter       string
	RoutingPrefix string
}

// Resolved is id, or the default identity when id is zero.
func (id Identity) Resolved() Identity {
	if id.Adapter == "" {
		return Identity{Adapter: AdapterIdentity, RoutingPrefix: routingPrefix}
	}
	return id
}

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

func newConfiguration(id Identity, model, systemPrompt, environmentIdentity string, ts []tools.Tool) (*configuration, error) {
	id = id.Resolved()
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
		Model:              model,
		SystemPromptDigest: promptDigest,
		Tools:              snapTools,
		AdapterIdentity:    id.Adapter,
		RoutingIdentity:    id.RoutingPrefix + model,
		// Reasoning effort is deliberately not an output option here: the
		// snapshot's shape is shared with the other runtimes (digest({})),
		// and a different effort does not change what a recorded reply
		// means, so it must not block a resume.
		OutputOptionsDigest: session.EmptyObjectDigest,
	}
	c.digest = session.ConfigurationDigest(c.snapshot)
	c.current = recovery.Current{ConfigurationDigest: c.digest, EnvironmentIdentity: environmentIdentity, Tools: curTools}
	return c, nil
}

// CurrentConfiguration is the planner's view of an agent with this
// configuration, without building one: `session list` uses it to tell
// whether an open session would resume or be blocked.
func CurrentConfiguration(id Identity, model, systemPrompt, environmentIdentity string, ts []tools.Tool) (recovery.Current, error) {
	c, err := newConfiguration(id, model, systemPrompt, environmentIdentity, ts)
	if err != nil {
		return recovery.Current{}, err
	}
	return c.current, nil
}
