package session

import (
	"crypto/sha256"
	"encoding/hex"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/gowebpki/jcs"
)

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// TestJCSVectors checks the canonical form against RFC 8785's examples:
// member order by UTF-16 code units (the emoji's surrogates sort before
// U+FB33), ES6 number formatting and minimal string escaping.
func TestJCSVectors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{ // RFC 8785 §3.2.3
			`{"\u20ac":"Euro Sign","\r":"Carriage Return","\ufb33":"Hebrew Letter Dalet With Dagesh","1":"One","\ud83d\ude00":"Emoji: Grinning Face","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis"}`,
			"{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\u0080\":\"Control\",\"\u00f6\":\"Latin Small Letter O With Diaeresis\",\"\u20ac\":\"Euro Sign\",\"\U0001F600\":\"Emoji: Grinning Face\",\"\ufb33\":\"Hebrew Letter Dalet With Dagesh\"}",
		},
		{ // RFC 8785 §3.2.2
			`{"numbers":[333333333.33333329,1E30,4.50,2e-3,0.000000000000000000000000001],"string":"\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/","literals":[null,true,false]}`,
			`{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`,
		},
		{`{"b":[],"a":{}}`, `{"a":{},"b":[]}`},
		{`[1e21,1e-7,-0,100,0.1]`, `[1e+21,1e-7,0,100,0.1]`},
	} {
		got, err := Digest(jsontext.Value(tc.in))
		if err != nil {
			t.Fatalf("Digest(%s): %v", tc.in, err)
		}
		if want := sha(tc.want); got != want {
			canon, _ := jcs.Transform([]byte(tc.in))
			t.Errorf("Digest(%s) = %s, want %s\ncanonical: %s", tc.in, got, want, canon)
		}
	}
	if _, err := Digest(jsontext.Value(`{"a":1,"a":2}`)); err == nil {
		t.Error("Digest accepted a duplicate key")
	}
}

func TestEmptyObjectDigest(t *testing.T) {
	for _, v := range []any{map[string]any{}, struct{}{}, jsontext.Value(" { } ")} {
		if d, err := Digest(v); err != nil || d != EmptyObjectDigest {
			t.Errorf("Digest(%#v) = %s, %v; want %s", v, d, err, EmptyObjectDigest)
		}
	}
	if sha("{}") != EmptyObjectDigest {
		t.Error("EmptyObjectDigest is not sha256({})")
	}
}

// TestAppendStringIsJCS compares the hand-written string encoder with the
// jcs package on strings full of characters that need care.
func TestAppendStringIsJCS(t *testing.T) {
	alphabet := []rune("aZ09 \"\\/\b\f\n\r\t\x00\x01\x1f\x7f\u0080é€\u2028\u2029\U0001F600\ufeff'<>&")
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 2000; i++ {
		var sb strings.Builder
		for n := rng.IntN(12); n > 0; n-- {
			sb.WriteRune(alphabet[rng.IntN(len(alphabet))])
		}
		s := sb.String()
		raw, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		want, err := jcs.Transform(raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendString(nil, s); string(got) != string(want) {
			t.Fatalf("appendString(%q) = %s, want %s", s, got, want)
		}
	}
}

// TestTypedDigestsMatchGeneric checks each hand-written canonical encoder
// against marshal + jcs of the same value.
func TestTypedDigestsMatchGeneric(t *testing.T) {
	snap := ConfigurationSnapshot{
		Model:               "test/model",
		SystemPromptDigest:  StringDigest("You are \"helpful\".\n"),
		Tools:               []ConfigurationTool{{Name: "read", DefinitionDigest: EmptyObjectDigest}, {Name: "mcp:ö/x", DefinitionDigest: sha("x")}},
		AdapterIdentity:     "openrouter:chat-completions:v1",
		RoutingIdentity:     "openrouter:test/model",
		OutputOptionsDigest: EmptyObjectDigest,
	}
	if want, _ := Digest(snap); ConfigurationDigest(snap) != want {
		t.Errorf("ConfigurationDigest = %s, generic %s", ConfigurationDigest(snap), want)
	}
	if want, _ := Digest("You are \"helpful\".\n"); StringDigest("You are \"helpful\".\n") != want {
		t.Error("StringDigest differs from the generic digest")
	}
	text, empty := "done\u2028", ""
	msgs := []RetainedMessage{
		{SourceEntryID: "018f0000-0000-7000-8000-000000000002", Message: Message{Role: RoleUser, Content: &text}},
		{SourceEntryID: "018f0000-0000-7000-8000-000000000008", Message: Message{Role: RoleAssistant, ToolCalls: []ToolCall{
			{ID: "call_1", Type: "function", Function: FunctionCall{Name: "read", Arguments: `{"path":"a"}`}}}}},
		{SourceEntryID: "018f0000-0000-7000-8000-00000000000a", Message: Message{Role: RoleTool, Content: &empty, ToolCallID: "call_1"}},
	}
	if want, _ := Digest(msgs); SourceDigest(msgs) != want {
		t.Errorf("SourceDigest = %s, generic %s", SourceDigest(msgs), want)
	}
	params := jsontext.Value(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)
	for _, identity := range []string{"", "mcp:https://example.invalid/mcp"} {
		got, err := DefinitionDigest("read", "Read a file.", params, identity)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := Digest(struct {
			Name               string         `json:"name"`
			Description        string         `json:"description"`
			Parameters         jsontext.Value `json:"parameters"`
			DefinitionIdentity string         `json:"definitionIdentity,omitempty"`
		}{"read", "Read a file.", params, identity})
		if got != want {
			t.Errorf("DefinitionDigest(identity %q) = %s, generic %s", identity, got, want)
		}
	}
	if _, err := DefinitionDigest("x", "y", jsontext.Value(`{"a":`), ""); err == nil {
		t.Error("DefinitionDigest accepted invalid parameters")
	}
}

// TestFixtureDigests recomputes digests that the shared fixtures carry.
func TestFixtureDigests(t *testing.T) {
	zero := "sha256:" + strings.Repeat("0", 64)
	snap := ConfigurationSnapshot{
		Model: "test/model", SystemPromptDigest: zero,
		Tools:           []ConfigurationTool{{Name: "read", DefinitionDigest: zero}},
		AdapterIdentity: "openrouter:chat-completions:v1", RoutingIdentity: "openrouter:test/model",
		OutputOptionsDigest: zero,
	}
	if got, want := ConfigurationDigest(snap), "sha256:83d5da8892d877c5f94a6ff60ea8babcd1138107dcb80ed8f747372346bb5f75"; got != want {
		t.Errorf("fixture configurationDigest = %s, want %s", got, want)
	}
	inspect, contents, done := "inspect", "contents", "done"
	src := []RetainedMessage{
		{SourceEntryID: "018f0000-0000-7000-8000-000000000002", Message: Message{Role: RoleUser, Content: &inspect}},
		{SourceEntryID: "018f0000-0000-7000-8000-000000000008", Message: Message{Role: RoleAssistant, ToolCalls: []ToolCall{
			{ID: "call_1", Type: "function", Function: FunctionCall{Name: "read", Arguments: `{"path":"README.md"}`}}}}},
		{SourceEntryID: "018f0000-0000-7000-8000-00000000000a", Message: Message{Role: RoleTool, Content: &contents, ToolCallID: "call_1"}},
		{SourceEntryID: "018f0000-0000-7000-8000-00000000000e", Message: Message{Role: RoleAssistant, Content: &done}},
	}
	if got, want := SourceDigest(src), "sha256:db6327a0c5d143e3edccd8272ac325be493a617be09fb0de3763af44a11838a2"; got != want {
		t.Errorf("fixture sourceDigest = %s, want %s", got, want)
	}
}
