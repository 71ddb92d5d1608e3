# Passes when Reverse works and the agent followed AGENTS.md: a doc comment
# that starts with the name, a CHANGELOG line under Unreleased, gofmt-clean
# code, and a test of its own.
set -eu
grep -q '^// Reverse ' strutil/strutil.go || { echo "Reverse has no doc comment starting with its name"; exit 1; }
grep -q 'func TestReverse' strutil/*_test.go || { echo "no TestReverse"; exit 1; }
awk '/^## Unreleased/{u=1; next} /^## /{u=0} u && /^- .*Reverse/{found=1} END{exit !found}' CHANGELOG.md || { echo "CHANGELOG.md has no line about Reverse under Unreleased"; exit 1; }
test -z "$(gofmt -l .)" || { echo "gofmt would change: $(gofmt -l .)"; exit 1; }
cat > strutil/reverse_check_test.go <<'GO'
package strutil

import "testing"

func TestReverseHidden(t *testing.T) {
	for in, want := range map[string]string{"": "", "abc": "cba", "héllo": "olléh", "日本": "本日"} {
		if got := Reverse(in); got != want {
			t.Errorf("Reverse(%q) = %q, want %q", in, got, want)
		}
	}
}
GO
go test -count=1 ./...
