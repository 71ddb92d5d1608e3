package lsp

import (
	"context"
	"time"
)

// Servers that only answer for diagnostics (TypeScript 7's `tsc --lsp`)
// publish nothing of a document: after each change tiny-go asks for the
// document's diagnostics and takes the answer as the publish of the
// version it asked about, so the waits of check.go work unchanged.

// pullsOnly reports whether a server offers diagnostics on request. Such
// a server may publish as well (gopls does neither; pyright does both
// when asked to): tiny-go announces no pull support, so one that still
// offers it is taken to answer only then.
func pullsOnly(res initializeResult) bool {
	d := res.Capabilities.DiagnosticProvider
	return len(d) > 0 && string(d) != "null" && string(d) != "false"
}

// pullTimeout bounds one request for a document's diagnostics.
const pullTimeout = 2 * time.Minute

type documentDiagnosticParams struct {
	TextDocument documentID `json:"textDocument"`
}

type documentDiagnosticReport struct {
	Kind  string       `json:"kind"` // "full" (no previous result is named, so never "unchanged")
	Items []Diagnostic `json:"items"`
}

// pullDiagnostics asks for path's diagnostics at version and publishes
// the answer; a failed request publishes nothing, so the wait ends at
// its bound and says the diagnostics are pending.
func (c *client) pullDiagnostics(path string, version int) {
	ctx, cancel := context.WithTimeout(context.Background(), pullTimeout)
	defer cancel()
	var rep documentDiagnosticReport
	uri := fileURI(path)
	err := c.call(ctx, "textDocument/diagnostic", documentDiagnosticParams{TextDocument: documentID{URI: uri}}, &rep)
	if err != nil {
		return
	}
	if rep.Kind != "full" {
		return
	}
	if rep.Items == nil {
		rep.Items = []Diagnostic{}
	}
	c.publish(publishDiagnosticsParams{URI: uri, Version: &version, Diagnostics: rep.Items})
}
