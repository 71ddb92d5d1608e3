package provider

import (
	"bytes"
	"slices"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// OpenRouter's web plugin searches before the model answers and returns
// the pages it used as url_citation annotations of the assistant message
// ({"type":"url_citation","url_citation":{"url","title","content",
// "start_index","end_index"}}), which OpenRouter takes back on the
// message in later requests. The session's assistant message has no place
// for them, so they are kept with the reasoning details (beside the
// session), as elements of the same array after them, raw, and split off
// again into the message's "annotations" when it is sent: annotation
// types (url_citation, file) never name a reasoning detail
// (reasoning.text, reasoning.encrypted, reasoning.summary).

// isAnnotation reports the annotation types kept.
func isAnnotation(typ string) bool { return typ == "url_citation" || typ == "file" }

func (a *accumulator) addAnnotations(raw []jsontext.Value) {
	for _, v := range raw {
		if v.Kind() != '{' || slices.ContainsFunc(a.annotations, func(have jsontext.Value) bool { return bytes.Equal(have, v) }) {
			continue
		}
		a.annotations = append(a.annotations, bytes.Clone(v))
	}
}

// withAnnotations appends the annotations to a details array (nil: none).
func withAnnotations(details jsontext.Value, annotations []jsontext.Value) jsontext.Value {
	if len(annotations) == 0 {
		return details
	}
	out := []byte{'['}
	if len(details) > 0 {
		inner := bytes.TrimSpace(details[1 : len(details)-1])
		if len(inner) > 0 {
			out = append(append(out, inner...), ',')
		}
	}
	out = append(out, bytes.Join(sliceOf(annotations), []byte{','})...)
	return append(out, ']')
}

func sliceOf(vs []jsontext.Value) [][]byte {
	out := make([][]byte, len(vs))
	for i, v := range vs {
		out[i] = v
	}
	return out
}

// splitAnnotations splits a kept array into the reasoning details and the
// annotations, each a JSON array of its elements as they were; an array
// without annotations is returned whole, untouched.
func splitAnnotations(details jsontext.Value) (reasoning, annotations []byte) {
	if !bytes.Contains(details, []byte("url_citation")) && !bytes.Contains(details, []byte(`"file"`)) {
		return details, nil
	}
	var items []jsontext.Value
	if json.Unmarshal(details, &items) != nil {
		return details, nil
	}
	var rs, as [][]byte
	for _, it := range items {
		if isAnnotation(typeOf(it)) {
			as = append(as, it)
		} else {
			rs = append(rs, it)
		}
	}
	if len(as) == 0 {
		return details, nil
	}
	join := func(parts [][]byte) []byte {
		if len(parts) == 0 {
			return nil
		}
		return append(append([]byte{'['}, bytes.Join(parts, []byte{','})...), ']')
	}
	return join(rs), join(as)
}

func typeOf(v jsontext.Value) string {
	var head struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal(v, &head)
	return head.Type
}

// annotationSources are the pages the url_citation annotations name,
// each once.
func annotationSources(annotations []jsontext.Value) []Source {
	var out []Source
	for _, v := range annotations {
		var a struct {
			Type        string `json:"type"`
			URLCitation struct {
				URL   string `json:"url"`
				Title string `json:"title"`
			} `json:"url_citation"`
		}
		if json.Unmarshal(v, &a) != nil || a.Type != "url_citation" || a.URLCitation.URL == "" ||
			slices.ContainsFunc(out, func(s Source) bool { return s.URL == a.URLCitation.URL }) {
			continue
		}
		out = append(out, Source{Title: a.URLCitation.Title, URL: a.URLCitation.URL})
	}
	return out
}
