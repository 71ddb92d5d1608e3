# Passes when -shout works from the command line, the old behaviour is
# unchanged, and a test of the agent's own covers the flag.
set -eu
go vet ./...
go test -count=1 ./...
grep -q -- 'shout' main_test.go || { echo "no test in main_test.go uses -shout"; exit 1; }
go build -o "$EVAL_ROOT/greet" .
out=$("$EVAL_ROOT/greet" -name Ada -shout)
[ "$out" = "HELLO, ADA!" ] || { echo "greet -name Ada -shout printed: $out"; exit 1; }
out=$("$EVAL_ROOT/greet" -name Ada)
[ "$out" = "Hello, Ada!" ] || { echo "greet -name Ada printed: $out"; exit 1; }
