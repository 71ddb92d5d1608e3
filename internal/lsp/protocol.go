package lsp

import "encoding/json"

// The few Language Server Protocol 3.17 shapes tiny-go sends and reads.
// They are declared here rather than taken from a protocol package: the
// Go ones are either internal to gopls (golang.org/x/tools/gopls's
// protocol) or unmaintained since 2022 with a logging stack of their own
// (go.lsp.dev/protocol v0.12.0), and tiny-go needs ten structs of them.

// Position is zero-based; Character counts UTF-16 code units.
type Position struct {
	Line      int `json:"line"`
	Character int `json:"character"`
}

// Range is a span of a document.
type Range struct {
	Start Position `json:"start"`
	End   Position `json:"end"`
}

// Severity of a diagnostic (1 error … 4 hint).
type Severity int

// The severities of the protocol.
const (
	SeverityError   Severity = 1
	SeverityWarning Severity = 2
	SeverityInfo    Severity = 3
	SeverityHint    Severity = 4
)

func (s Severity) String() string {
	switch s {
	case SeverityError:
		return "error"
	case SeverityWarning:
		return "warning"
	case SeverityInfo:
		return "info"
	case SeverityHint:
		return "hint"
	}
	return "error" // the protocol: a missing severity is the client's to choose
}

// Diagnostic is one complaint of a server about a document.
type Diagnostic struct {
	Range    Range           `json:"range"`
	Severity Severity        `json:"severity,omitzero"`
	Code     json.RawMessage `json:"code,omitzero"`
	Source   string          `json:"source,omitzero"`
	Message  string          `json:"message"`
}

// publishDiagnosticsParams is textDocument/publishDiagnostics.
type publishDiagnosticsParams struct {
	URI         string       `json:"uri"`
	Version     *int         `json:"version,omitzero"`
	Diagnostics []Diagnostic `json:"diagnostics"`
}

type workspaceFolder struct {
	URI  string `json:"uri"`
	Name string `json:"name"`
}

type textDocumentItem struct {
	URI        string `json:"uri"`
	LanguageID string `json:"languageId"`
	Version    int    `json:"version"`
	Text       string `json:"text"`
}

type versionedDocument struct {
	URI     string `json:"uri"`
	Version int    `json:"version"`
}

type documentID struct {
	URI string `json:"uri"`
}

type didOpenParams struct {
	TextDocument textDocumentItem `json:"textDocument"`
}

type contentChange struct {
	Text string `json:"text"`
}

type didChangeParams struct {
	TextDocument   versionedDocument `json:"textDocument"`
	ContentChanges []contentChange   `json:"contentChanges"`
}

type didSaveParams struct {
	TextDocument documentID `json:"textDocument"`
	Text         string     `json:"text"`
}

type didCloseParams struct {
	TextDocument documentID `json:"textDocument"`
}

type initializeParams struct {
	// ProcessID is null: in the commands' PID namespace tiny-go's pid
	// names no process, and a server watching it would exit at once.
	// The containment ends a server with tiny-go instead.
	ProcessID             *int              `json:"processId"`
	RootURI               string            `json:"rootUri"`
	RootPath              string            `json:"rootPath"`
	WorkspaceFolders      []workspaceFolder `json:"workspaceFolders"`
	Capabilities          json.RawMessage   `json:"capabilities"`
	InitializationOptions json.RawMessage   `json:"initializationOptions,omitzero"`
	ClientInfo            struct {
		Name string `json:"name"`
	} `json:"clientInfo"`
}

// clientCapabilities says what tiny-go handles: pushed diagnostics with
// versions, full-text sync with saves and workspace/configuration
// (answered with nulls).
const clientCapabilities = `{
 "textDocument": {
  "synchronization": {"didSave": true, "dynamicRegistration": false},
  "publishDiagnostics": {"versionSupport": true, "relatedInformation": false}
 },
 "workspace": {
  "configuration": true,
  "workspaceFolders": true
 },
 "window": {"workDoneProgress": false},
 "general": {"positionEncodings": ["utf-16"]}
}`

type initializeResult struct {
	Capabilities struct {
		DiagnosticProvider json.RawMessage `json:"diagnosticProvider"`
	} `json:"capabilities"`
	ServerInfo *struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"serverInfo"`
}
