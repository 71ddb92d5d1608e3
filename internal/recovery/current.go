package recovery

import (
	"errors"
	"fmt"
	"regexp"
	"sync"

	"github.com/go-json-experiment/json"
)

// Replay policies of a tool (session.md 3.2, toolStarted.replay).
const (
	ReplaySafe  = "safe"
	ReplayNever = "never"
)

// Current is the configuration a process would resume with: the digest of
// its configuration snapshot, its environment identity, and the tools it
// offers with their replay declarations (current-configuration.schema.json).
type Current struct {
	ConfigurationDigest string        `json:"configurationDigest"`
	EnvironmentIdentity string        `json:"environmentIdentity"`
	Tools               []CurrentTool `json:"tools"`
}

// CurrentTool is one tool the resuming process offers.
type CurrentTool struct {
	Name             string `json:"name"`
	DefinitionDigest string `json:"definitionDigest"`
	Replay           string `json:"replay"` // ReplaySafe or ReplayNever
	ReplayKey        string `json:"replayKey"`
}

// tool returns the current tool named name.
func (c Current) tool(name string) (CurrentTool, bool) {
	for _, t := range c.Tools {
		if t.Name == name {
			return t, true
		}
	}
	return CurrentTool{}, false
}

var digestPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^sha256:[0-9a-f]{64}$`) })

// wireCurrent mirrors Current with pointers so that missing members are
// told apart from empty ones.
type wireCurrent struct {
	ConfigurationDigest *string            `json:"configurationDigest"`
	EnvironmentIdentity *string            `json:"environmentIdentity"`
	Tools               *[]wireCurrentTool `json:"tools"`
}

type wireCurrentTool struct {
	Name             *string `json:"name"`
	DefinitionDigest *string `json:"definitionDigest"`
	Replay           *string `json:"replay"`
	ReplayKey        *string `json:"replayKey"`
}

// DecodeCurrent parses a current configuration strictly: one JSON object
// with exactly the members of current-configuration.schema.json (unknown or
// duplicate members, invalid UTF-8, a missing member, a malformed digest, an
// empty string or an unknown replay policy are errors).
func DecodeCurrent(data []byte) (Current, error) {
	var w wireCurrent
	if err := json.Unmarshal(data, &w, json.RejectUnknownMembers(true)); err != nil {
		return Current{}, fmt.Errorf("current configuration: %w", err)
	}
	var c Current
	var err error
	if c.ConfigurationDigest, err = digestMember("configurationDigest", w.ConfigurationDigest); err != nil {
		return Current{}, err
	}
	if c.EnvironmentIdentity, err = stringMember("environmentIdentity", w.EnvironmentIdentity); err != nil {
		return Current{}, err
	}
	if w.Tools == nil {
		return Current{}, errors.New("current configuration: missing tools")
	}
	c.Tools = make([]CurrentTool, 0, len(*w.Tools))
	for i, wt := range *w.Tools {
		var t CurrentTool
		prefix := fmt.Sprintf("tools[%d].", i)
		if t.Name, err = stringMember(prefix+"name", wt.Name); err != nil {
			return Current{}, err
		}
		if t.DefinitionDigest, err = digestMember(prefix+"definitionDigest", wt.DefinitionDigest); err != nil {
			return Current{}, err
		}
		if t.Replay, err = stringMember(prefix+"replay", wt.Replay); err != nil {
			return Current{}, err
		}
		if t.Replay != ReplaySafe && t.Replay != ReplayNever {
			return Current{}, fmt.Errorf("current configuration: %sreplay must be %q or %q, not %q", prefix, ReplaySafe, ReplayNever, t.Replay)
		}
		if t.ReplayKey, err = stringMember(prefix+"replayKey", wt.ReplayKey); err != nil {
			return Current{}, err
		}
		c.Tools = append(c.Tools, t)
	}
	return c, nil
}

func stringMember(name string, v *string) (string, error) {
	switch {
	case v == nil:
		return "", fmt.Errorf("current configuration: missing %s", name)
	case *v == "":
		return "", fmt.Errorf("current configuration: %s is empty", name)
	}
	return *v, nil
}

func digestMember(name string, v *string) (string, error) {
	s, err := stringMember(name, v)
	if err != nil {
		return "", err
	}
	if !digestPattern().MatchString(s) {
		return "", fmt.Errorf("current configuration: %s is not a sha256 digest", name)
	}
	return s, nil
}
