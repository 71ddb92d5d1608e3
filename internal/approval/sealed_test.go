package approval

import "testing"

func TestUnsealed(t *testing.T) {
	for cmd, want := range map[string]bool{
		"go test ./...":                               false,
		"make && ./run.sh > out.txt":                  false,
		"git commit -am x && git log | head":          false,
		"rm -rf build; mkdir build":                   false,
		"curl -X POST https://x/deploy; rm -f /tmp/x": true,
		"cd web && npm install":                       true,
		"npm test":                                    false,
		"git -C sub push origin main":                 true,
		"/usr/bin/wget http://x":                      true,
		"python3 -m pip install requests":             true,
		"python3 -m pytest":                           false,
		"echo $(sudo id)":                             true,
		"$TOOL run":                                   true,
		"for f in *.go; do gofmt -l $f; done":         false,
		"go mod download":                             true,
		"if true; then":                               true,
	} {
		if got := Unsealed(cmd); got != want {
			t.Errorf("Unsealed(%q) = %v, want %v", cmd, got, want)
		}
	}
}

func FuzzUnsealed(f *testing.F) {
	for _, s := range []string{"go test", "curl x", "a | b && c", "$(x) y", "git -C"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, cmd string) { _ = Unsealed(cmd) })
}
