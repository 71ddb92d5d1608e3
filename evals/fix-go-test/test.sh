# Passes when the package's tests pass and the tests themselves are untouched.
set -eu
if ! git diff --quiet HEAD -- calc_test.go; then
  echo "calc_test.go was changed"
  exit 1
fi
go vet ./...
go test -count=1 ./...
