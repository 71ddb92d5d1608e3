package recovery

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

const validCurrent = `{"configurationDigest":"sha256:83d5da8892d877c5f94a6ff60ea8babcd1138107dcb80ed8f747372346bb5f75","environmentIdentity":"fixture","tools":[{"name":"read","definitionDigest":"sha256:0000000000000000000000000000000000000000000000000000000000000000","replay":"safe","replayKey":"builtin:read:v1"}]}`

func TestDecodeCurrent(t *testing.T) {
	got, err := DecodeCurrent([]byte(validCurrent))
	if err != nil {
		t.Fatal(err)
	}
	want := Current{
		ConfigurationDigest: digestA,
		EnvironmentIdentity: "fixture",
		Tools:               []CurrentTool{{Name: "read", DefinitionDigest: zero, Replay: ReplaySafe, ReplayKey: "builtin:read:v1"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}

	noTools, err := DecodeCurrent([]byte(`{"configurationDigest":"` + digestA + `","environmentIdentity":"e","tools":[]}`))
	if err != nil || noTools.Tools == nil || len(noTools.Tools) != 0 {
		t.Errorf("empty tools: %+v, %v", noTools, err)
	}
}

func TestDecodeCurrentRejects(t *testing.T) {
	tests := []struct {
		name, in, wantErr string
	}{
		{"not JSON", `{`, "current configuration"},
		{"not an object", `[]`, "current configuration"},
		{"trailing data", validCurrent + `{}`, "current configuration"},
		{"unknown member", strings.Replace(validCurrent, `"tools"`, `"extra":1,"tools"`, 1), "extra"},
		{"unknown tool member", strings.Replace(validCurrent, `"replay":"safe"`, `"replay":"safe","x":true`, 1), "x"},
		{"duplicate member", strings.Replace(validCurrent, `"environmentIdentity":"fixture"`, `"environmentIdentity":"fixture","environmentIdentity":"other"`, 1), "duplicate"},
		{"missing tools", `{"configurationDigest":"` + digestA + `","environmentIdentity":"e"}`, "missing tools"},
		{"null tools", `{"configurationDigest":"` + digestA + `","environmentIdentity":"e","tools":null}`, "missing tools"},
		{"missing digest", `{"environmentIdentity":"e","tools":[]}`, "missing configurationDigest"},
		{"bad digest", strings.Replace(validCurrent, `sha256:83d5`, `sha256:83D5`, 1), "configurationDigest is not a sha256 digest"},
		{"short tool digest", strings.Replace(validCurrent, `0000000000000000"`, `"`, 1), "tools[0].definitionDigest is not a sha256 digest"},
		{"empty environment", strings.Replace(validCurrent, `"fixture"`, `""`, 1), "environmentIdentity is empty"},
		{"empty name", strings.Replace(validCurrent, `"read"`, `""`, 1), "tools[0].name is empty"},
		{"missing replay key", strings.Replace(validCurrent, `,"replayKey":"builtin:read:v1"`, ``, 1), "missing tools[0].replayKey"},
		{"unknown replay", strings.Replace(validCurrent, `"safe"`, `"always"`, 1), `tools[0].replay must be "safe" or "never"`},
		{"wrong type", strings.Replace(validCurrent, `"fixture"`, `7`, 1), "current configuration"},
		{"invalid UTF-8", strings.Replace(validCurrent, `fixture`, "fix\xffture", 1), "current configuration"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeCurrent([]byte(tt.in))
			if err == nil {
				t.Fatalf("DecodeCurrent(%s) succeeded", tt.in)
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error %q does not mention %q", err, tt.wantErr)
			}
		})
	}
}

// FuzzDecodeCurrent checks that DecodeCurrent never panics and that what it
// accepts round-trips through its JSON form.
func FuzzDecodeCurrent(f *testing.F) {
	f.Add([]byte(validCurrent))
	f.Add([]byte(`{"configurationDigest":"` + digestA + `","environmentIdentity":"e","tools":[]}`))
	f.Add([]byte(`{"tools":[{}]}`))
	f.Add([]byte(`null`))
	// Every current configuration of the planner fixtures.
	inputs, _ := filepath.Glob(filepath.Join(conformanceDir(f), "session", "planner-fixtures", "*.json"))
	for _, path := range inputs {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		var in struct {
			Current jsontext.Value `json:"current"`
		}
		if json.Unmarshal(data, &in) == nil && len(in.Current) > 0 {
			f.Add([]byte(in.Current))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := DecodeCurrent(data)
		if err != nil {
			return
		}
		again, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		c2, err := DecodeCurrent(again)
		if err != nil {
			t.Fatalf("re-decoding %s: %v", again, err)
		}
		if !reflect.DeepEqual(c, c2) {
			t.Fatalf("round trip changed %+v to %+v", c, c2)
		}
	})
}
