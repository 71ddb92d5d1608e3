package ui

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tiny-agent/tiny-go/internal/ui/uitest"
)

// diagHost answers /diagnostics; the other host commands are not used.
type diagHost struct {
	Host
	asked []string
}

func (h *diagHost) Diagnostics(_ context.Context, path string) []string {
	h.asked = append(h.asked, path)
	return []string{"main.go:4:14 error cannot use \"x\" as int (compiler)"}
}

// /diagnostics [path] asks the host for that path (or every open file)
// and prints what it answers.
func TestDiagnosticsCommand(t *testing.T) {
	if c := parseCommand("/diagnostics  main.go ", nil); c.kind != cmdDiag || c.text != "main.go" {
		t.Fatalf("parseCommand = %+v", c)
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer inR.Close()
	h := &diagHost{}
	out := &syncBuffer{}
	done := make(chan error, 1)
	go func() {
		done <- RunLines(context.Background(), Options{In: inR, Out: out, Engine: &uitest.Engine{Delay: time.Millisecond},
			Observer: NewObserver(""), Banner: Banner{SessionID: "s"}, Host: h})
	}()
	inW.WriteString("/diagnostics main.go\n/diagnostics\n")
	inW.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if len(h.asked) != 2 || h.asked[0] != "main.go" || h.asked[1] != "" {
		t.Fatalf("asked %q", h.asked)
	}
	if n := strings.Count(out.String(), "main.go:4:14 error cannot use \"x\" as int (compiler)\n"); n != 2 {
		t.Fatalf("printed %d times:\n%s", n, out.String())
	}
}
