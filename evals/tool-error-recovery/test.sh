# Passes when the default timeout is 45 s and nothing else changed.
set -eu
test -z "$(gofmt -l .)" || { echo "gofmt would change: $(gofmt -l .)"; exit 1; }
cat > timeout_check_test.go <<'GO'
package server

import (
	"testing"
	"time"
)

func TestTimeoutIs45s(t *testing.T) {
	if DefaultTimeout != 45*time.Second || DefaultReadHeaderTimeout != 5*time.Second || DefaultAddr != ":8080" {
		t.Errorf("defaults: %v %v %q", DefaultTimeout, DefaultReadHeaderTimeout, DefaultAddr)
	}
}
GO
go test -count=1 ./...
changed=$(git diff --name-only HEAD)
[ "$changed" = "config.go" ] || { echo "changed files: $changed"; exit 1; }
