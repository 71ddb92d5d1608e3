package webfetch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/strikethrough"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/table"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
	"golang.org/x/net/html/charset"
)

// read reads resp's body into p (at most MaxBytes of it) and converts it.
func (f *Fetcher) read(p *Page, resp *http.Response) error {
	body, err := io.ReadAll(io.LimitReader(resp.Body, p.MaxBytes+1))
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
			return err
		}
		return &Refusal{Msg: fmt.Sprintf("Error: reading %s failed: %v", p.FinalURL, err)}
	}
	if int64(len(body)) > p.MaxBytes {
		body, p.Truncated = body[:p.MaxBytes], true
	}
	p.Bytes = int64(len(body))
	header := resp.Header.Get("Content-Type")
	kind, mediaType := classify(header, body)
	p.ContentType = mediaType
	switch kind {
	case kindPDF:
		return &Refusal{Msg: fmt.Sprintf("Error: %s is a PDF (%s); web_fetch reads text pages only, not PDFs.", p.FinalURL, mediaType)}
	case kindBinary:
		return &Refusal{Msg: fmt.Sprintf("Error: %s is %s, not a text page; web_fetch does not fetch binary files.", p.FinalURL, mediaType)}
	}
	text := decode(body, header)
	if kind == kindHTML {
		p.Title, p.Text, err = toMarkdown(text, p.FinalURL)
		p.Converted = true
		if err != nil {
			return &Refusal{Msg: fmt.Sprintf("Error: %s could not be converted to Markdown: %v", p.FinalURL, err)}
		}
		return nil
	}
	p.Text = text
	return nil
}

type kind int

const (
	kindText kind = iota
	kindHTML
	kindPDF
	kindBinary
)

// classify tells what a body is by its Content-Type header, sniffing
// when the header is missing or generic.
func classify(header string, body []byte) (kind, string) {
	mt, _, err := mime.ParseMediaType(header)
	if err != nil || mt == "" || mt == "application/octet-stream" || mt == "binary/octet-stream" {
		mt, _, _ = mime.ParseMediaType(http.DetectContentType(body))
	}
	switch {
	case mt == "text/html" || mt == "application/xhtml+xml":
		return kindHTML, mt
	case mt == "application/pdf":
		return kindPDF, mt
	case textual(mt):
		// A "text" body with NUL bytes is a binary someone mislabelled.
		if bytes.IndexByte(body[:min(len(body), 8192)], 0) >= 0 {
			return kindBinary, mt
		}
		return kindText, mt
	}
	return kindBinary, mt
}

// textual reports whether a media type is text passed through as is.
func textual(mt string) bool {
	if strings.HasPrefix(mt, "text/") {
		return true
	}
	switch mt {
	case "application/json", "application/xml", "application/javascript", "application/x-javascript",
		"application/ecmascript", "application/toml", "application/yaml", "application/x-yaml",
		"application/x-ndjson", "application/sql", "application/graphql":
		return true
	}
	return strings.HasSuffix(mt, "+json") || strings.HasSuffix(mt, "+xml")
}

// decode makes body UTF-8 by the charset its header or its own <meta>
// declares.
func decode(body []byte, header string) string {
	if enc, name, _ := charset.DetermineEncoding(body, header); name != "utf-8" && enc != nil {
		if out, err := enc.NewDecoder().Bytes(body); err == nil {
			body = out
		}
	}
	if !utf8.Valid(body) {
		return strings.ToValidUTF8(string(body), "\uFFFD")
	}
	return string(body)
}

// markdown converts with headings, links (made absolute), code blocks,
// tables and strikethrough kept.
var markdown = converter.NewConverter(converter.WithPlugins(
	base.NewBasePlugin(),
	commonmark.NewCommonmarkPlugin(),
	table.NewTablePlugin(),
	strikethrough.NewStrikethroughPlugin(),
))

// toMarkdown converts a page's main content.
func toMarkdown(page, pageURL string) (title, md string, err error) {
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		return "", "", err
	}
	title = strings.Join(strings.Fields(textOf(find(doc, func(n *html.Node) bool { return n.DataAtom == atom.Title }))), " ")
	root := mainContent(doc)
	prune(root)
	out, err := markdown.ConvertNode(root, converter.WithDomain(pageURL))
	if err != nil {
		return title, "", err
	}
	return title, strings.TrimSpace(string(out)), nil
}

// mainContent is the page's <main> (or role=main), else its only
// <article>, else its <body>.
func mainContent(doc *html.Node) *html.Node {
	if n := find(doc, func(n *html.Node) bool { return n.DataAtom == atom.Main || attr(n, "role") == "main" }); n != nil {
		return n
	}
	var articles []*html.Node
	for n := range doc.Descendants() {
		if n.DataAtom == atom.Article {
			articles = append(articles, n)
		}
	}
	if len(articles) == 1 {
		return articles[0]
	}
	if n := find(doc, func(n *html.Node) bool { return n.DataAtom == atom.Body }); n != nil {
		return n
	}
	return doc
}

// prune removes what is not content: navigation, side bars, footers,
// forms, buttons, pictures drawn in SVG and hidden elements.
func prune(root *html.Node) {
	var drop []*html.Node
	for n := range root.Descendants() {
		if n.Type != html.ElementNode {
			continue
		}
		switch n.DataAtom {
		case atom.Nav, atom.Aside, atom.Footer, atom.Form, atom.Button, atom.Svg, atom.Dialog, atom.Template:
			drop = append(drop, n)
			continue
		}
		switch attr(n, "role") {
		case "navigation", "banner", "contentinfo", "complementary", "search":
			drop = append(drop, n)
			continue
		}
		if _, hidden := attrOK(n, "hidden"); hidden || attr(n, "aria-hidden") == "true" {
			drop = append(drop, n)
		}
	}
	for _, n := range drop {
		if n.Parent != nil {
			n.Parent.RemoveChild(n)
		}
	}
}

func find(root *html.Node, match func(*html.Node) bool) *html.Node {
	for n := range root.Descendants() {
		if n.Type == html.ElementNode && match(n) {
			return n
		}
	}
	return nil
}

func textOf(n *html.Node) string {
	if n == nil {
		return ""
	}
	var b strings.Builder
	for d := range n.Descendants() {
		if d.Type == html.TextNode {
			b.WriteString(d.Data)
		}
	}
	return b.String()
}

func attr(n *html.Node, key string) string {
	v, _ := attrOK(n, key)
	return v
}

func attrOK(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Namespace == "" && a.Key == key {
			return strings.ToLower(strings.TrimSpace(a.Val)), true
		}
	}
	return "", false
}
