package main

import (
	"os/exec"
	"strings"
	"testing"
)

func TestBinaryDoesNotLinkStartupHeavyPackages(t *testing.T) {
	// Import-path prefixes that must stay out of the binary, because Go
	// runs the initialisation of every linked package at each start, even
	// for --help (docs/performance.md §12): each costs tens of
	// milliseconds, or links gRPC. (goldmark is linked: its init is
	// 0.8 ms, well within the first request's 40 ms budget.)
	notLinked := []struct{ prefix, why string }{
		{"google.golang.org/grpc", "gRPC registers codecs, balancers and resolvers at init"},
		{"google.golang.org/protobuf/", "the registry registers every generated type; internal/detrand hashes the executable (even protowire links it)"},
		{"go.opentelemetry.io/proto/otlp", "generated OTLP types pull in the protobuf registry; internal/lifecycle writes OTLP/JSON from plain structs"},
		{"go.opentelemetry.io/otel/exporters/otlp", "the official OTLP exporters link the generated OTLP types"},
		{"github.com/grpc-ecosystem/", "grpc-gateway comes with the OTLP exporters"},
		{"github.com/alecthomas/chroma/v2/lexers", "chroma's lexers package parses every lexer it has at init (53-60 ms); internal/highlight builds the few it needs on first use from chroma's core package"},
		{"github.com/alecthomas/chroma/v2/styles", "chroma's styles package parses every style at init (27-86 ms); internal/highlight has its own"},
		{"github.com/alecthomas/chroma/v2/formatters", "chroma's formatters register at init and pull in styles; internal/highlight writes its own SGR"},
		{"github.com/alecthomas/chroma/v2/quick", "quick links lexers, styles and formatters"},
		{"github.com/charmbracelet/glamour", "glamour links chroma"},
		{"go.temporal.io/", "the Temporal SDK links gRPC and the generated Temporal API; it lives in cmd/tiny-go-fleet (docs/fleet.md)"},
		{"gocloud.dev/", "the blob store is the fleet's; it lives in cmd/tiny-go-fleet"},
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH")
	}
	out, err := exec.Command(gobin, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		for _, n := range notLinked {
			if strings.HasPrefix(pkg, n.prefix) {
				t.Errorf("tiny-go links %s: %s", pkg, n.why)
			}
		}
	}
}
