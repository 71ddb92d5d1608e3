package responses

import (
	"slices"

	"github.com/tiny-agent/tiny-go/internal/provider"
)

// OpenAI's web search runs on the server: the request offers the
// web_search tool, and the reply carries web_search_call items and
// message items whose output_text has url_citation annotations. The
// session's assistant message has only text, so such a reply's
// web_search_call items and its message items, whole, are kept in its
// ReasoningDetails (beside the session) and sent back as they came, in
// place of the session's text.

const webSearchCall = "web_search_call"

// citing reports whether the reply's messages are kept whole: some
// message item has a citation, or the reply searched.
func (d *decoder) citing(indices []int) bool {
	for _, i := range indices {
		it := d.items[i]
		if it.head.Type == webSearchCall {
			return true
		}
		for _, p := range it.head.Content {
			if len(p.Annotations) > 0 {
				return true
			}
		}
	}
	return false
}

// appendSources adds the pages a message item cites, each once.
func appendSources(ss []provider.Source, it Item) []provider.Source {
	for _, p := range it.Content {
		for _, a := range p.Annotations {
			if a.Type != "url_citation" || a.URL == "" || slices.ContainsFunc(ss, func(s provider.Source) bool { return s.URL == a.URL }) {
				continue
			}
			ss = append(ss, provider.Source{Title: a.Title, URL: a.URL})
		}
	}
	return ss
}
