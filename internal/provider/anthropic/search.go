package anthropic

import (
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/provider"
)

// Anthropic's web search runs on the server: the request offers the
// web_search server tool, and the reply carries server_tool_use and
// web_search_tool_result blocks between its text blocks, whose citations
// point into the results (with encrypted indexes). The API wants all of
// it back, in order, in later requests. The session's assistant message
// has only text and tool calls, so with the server tool on, the reply's
// ReasoningDetails (kept beside the session, internal/reasoning) hold
// every block of the reply, in order, and such an assistant message is
// sent back as those blocks alone: text with its citations,
// server_tool_use, the result block as the provider sent it, thinking,
// tool_use.

// WebSearchToolType is the version of the server tool offered.
const WebSearchToolType = "web_search_20250305"

// webSearchMaxUses bounds the searches of one reply (each is billed).
const webSearchMaxUses = 5

// webSearchTool is the server tool in the request's tools.
func webSearchTool() tool {
	return tool{Type: WebSearchToolType, Name: "web_search", MaxUses: webSearchMaxUses}
}

// textBlock is a text block with its citations, if any.
func textBlock(b *blockState) []byte {
	out, _ := json.Marshal(struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}{"text", b.text.String()})
	if len(b.citations) == 0 {
		return out
	}
	out = append(out[:len(out)-1], `,"citations":[`...)
	for i, c := range b.citations {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, c...)
	}
	return append(out, "]}"...)
}

// useBlock is a tool_use or server_tool_use block with its input raw.
func useBlock(kind, id, name, args string) []byte {
	out, _ := json.Marshal(struct {
		Type string `json:"type"`
		ID   string `json:"id"`
		Name string `json:"name"`
	}{kind, id, name})
	out = append(out[:len(out)-1], `,"input":`...)
	return append(append(out, toolInput(args)...), '}')
}

// sources are the pages the reply's text cites, in order of first
// citation; when it cites none, the results its searches found.
func sources(blocks []*blockState) []provider.Source {
	var out []provider.Source
	seen := map[string]bool{}
	add := func(raw jsontext.Value) {
		var s struct {
			URL   string `json:"url"`
			Title string `json:"title"`
		}
		if json.Unmarshal(raw, &s) != nil || s.URL == "" || seen[s.URL] {
			return
		}
		seen[s.URL] = true
		out = append(out, provider.Source{Title: s.Title, URL: s.URL})
	}
	for _, b := range blocks {
		for _, c := range b.citations {
			add(c)
		}
	}
	if len(out) > 0 {
		return out
	}
	for _, b := range blocks {
		if b.kind != "web_search_tool_result" {
			continue
		}
		var res struct {
			Content []jsontext.Value `json:"content"`
		}
		if json.Unmarshal(b.raw, &res) != nil {
			continue // an error result: its content is an object
		}
		for _, c := range res.Content {
			add(c)
		}
	}
	return out
}

// replayBlocks are the blocks of a ReasoningDetails array that this API
// takes back, raw, and whether they are the whole message (a reply kept
// in full, see above) rather than its thinking blocks only.
func replayBlocks(details jsontext.Value) (blocks []jsontext.Value, whole bool) {
	if len(details) == 0 {
		return nil, false
	}
	var items []jsontext.Value
	if json.Unmarshal(details, &items) != nil {
		return nil, false
	}
	for _, it := range items {
		var head struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(it, &head) != nil || head.Type == "" {
			continue
		}
		if head.Type != "thinking" && head.Type != "redacted_thinking" {
			whole = true
		}
		blocks = append(blocks, it)
	}
	if !whole {
		return blocks, false
	}
	return items, true
}
