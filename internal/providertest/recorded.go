package providertest

import (
	"bufio"
	"bytes"
	_ "embed"
	"strings"
)

// Recorded native web search replies, in the shapes of the providers'
// documentation and SDK test fixtures (written for tiny-go, not copied),
// each with the text it shows and what a later request must send back.

//go:embed testdata/anthropic_web_search.sse
var anthropicWebSearch []byte

//go:embed testdata/responses_web_search.sse
var responsesWebSearch []byte

//go:embed testdata/openrouter_web_plugin.sse
var openRouterWebPlugin []byte

// AnthropicWebSearch is a Messages API stream in which the model calls
// the web_search server tool, gets two results and answers with text
// citing both. Some strings are JSON-escaped (\u00e9, \u002B), as only a
// byte-exact replay keeps them.
func AnthropicWebSearch() Reply {
	return Reply{Body: string(anthropicWebSearch), ContentType: "text/event-stream"}
}

// AnthropicWebSearchText is the answer text of AnthropicWebSearch.
const AnthropicWebSearchText = "I'll look up the latest Go release.The latest release is Go 1.25, from August 2025; every release is listed in the release history."

// AnthropicWebSearchReplay is the content array the assistant turn of
// AnthropicWebSearch must have in every later request: every block in
// order, the result block exactly as streamed, the citations exactly as
// their deltas carried them.
func AnthropicWebSearchReplay() string {
	result := streamedBlock(anthropicWebSearch, "web_search_tool_result")
	cite1 := streamedCitation(anthropicWebSearch, 0)
	cite2 := streamedCitation(anthropicWebSearch, 1)
	return `[{"type":"text","text":"I'll look up the latest Go release."},` +
		`{"type":"server_tool_use","id":"srvtoolu_01Go7rTq9Xb","name":"web_search","input":{"query": "go latest release"}},` +
		result + `,` +
		`{"type":"text","text":"The latest release is "},` +
		`{"type":"text","text":"Go 1.25, from August 2025","citations":[` + cite1 + `]},` +
		`{"type":"text","text":"; every release is listed in "},` +
		`{"type":"text","text":"the release history.","citations":[` + cite2 + `]}]`
}

// ResponsesWebSearch is a Responses API stream in which the model
// searches with the web_search tool and answers with one url_citation.
func ResponsesWebSearch() Reply {
	return Reply{Body: string(responsesWebSearch), ContentType: "text/event-stream"}
}

// ResponsesWebSearchText is the answer text of ResponsesWebSearch.
const ResponsesWebSearchText = "Go 1.25 is the latest release ([go.dev](https://go.dev/doc/go1.25?utm_source=openai))."

// ResponsesWebSearchReplay is the input items the reply of
// ResponsesWebSearch must be in every later request: its web_search_call
// and message items exactly as output_item.done carried them.
func ResponsesWebSearchReplay() string {
	var items []string
	for line := range dataLines(responsesWebSearch) {
		const key = `"item":`
		if i := strings.Index(line, key); i >= 0 && strings.Contains(line, `"type":"response.output_item.done"`) {
			items = append(items, line[i+len(key):len(line)-1])
		}
	}
	return strings.Join(items, ",")
}

// OpenRouterWebPlugin is a Chat Completions stream of OpenRouter's web
// plugin: the answer, then two url_citation annotations in the last
// content chunk.
func OpenRouterWebPlugin() Reply {
	return Reply{Body: string(openRouterWebPlugin), ContentType: "text/event-stream"}
}

// OpenRouterWebPluginText is the answer text of OpenRouterWebPlugin.
const OpenRouterWebPluginText = "Go 1.25 came out in August 2025 [go.dev](https://go.dev/doc/go1.25)."

// OpenRouterWebPluginReplay is the "annotations" member the assistant
// message of OpenRouterWebPlugin must carry in every later request: the
// annotations exactly as streamed.
func OpenRouterWebPluginReplay() string {
	for line := range dataLines(openRouterWebPlugin) {
		const key = `"annotations":`
		if i := strings.Index(line, key); i >= 0 {
			rest := line[i+len(key):]
			return `"annotations":` + rest[:strings.Index(rest, `]},"finish_reason"`)+1]
		}
	}
	panic("providertest: no annotations in the recording")
}

// streamedBlock is the content_block of the first content_block_start of
// kind typ, cut from the stream's bytes.
func streamedBlock(sse []byte, typ string) string {
	for line := range dataLines(sse) {
		const key = `"content_block":`
		if i := strings.Index(line, key); i >= 0 && strings.Contains(line, `"type":"`+typ+`"`) {
			return line[i+len(key) : len(line)-1]
		}
	}
	panic("providertest: no " + typ + " block in the recording")
}

// streamedCitation is the n-th citation of a citations_delta, cut from
// the stream's bytes.
func streamedCitation(sse []byte, n int) string {
	for line := range dataLines(sse) {
		const key = `"citation":`
		if i := strings.Index(line, key); i >= 0 {
			if n == 0 {
				return line[i+len(key) : len(line)-2]
			}
			n--
		}
	}
	panic("providertest: too few citations in the recording")
}

func dataLines(sse []byte) func(func(string) bool) {
	return func(yield func(string) bool) {
		sc := bufio.NewScanner(bytes.NewReader(sse))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if line, ok := strings.CutPrefix(sc.Text(), "data: "); ok && !yield(line) {
				return
			}
		}
	}
}
