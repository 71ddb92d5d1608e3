package config

import (
	"strings"
	"testing"
)

// FuzzParse: any bytes give a File or one error line that names the file;
// never a panic. Line numbers stay within the input.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"model = \"m\"\ncontext_window = 1\nwritable = [\"/a\", \"b\"]\n",
		"[mcp_servers.fs]\ncommand = \"x\"\nallowedTools = [\"a\"]\n",
		"mcp_servers = { fs = { url = 3 } }\n",
		"api_key = \"k\"\n",
		"model = \n",
		"a.b.c = 1\n[[x]]\n",
		"\"quoted\\u0041\" = 1\n",
	} {
		f.Add([]byte(seed))
	}
	const path = "/p/.tiny-agent/config.toml"
	f.Fuzz(func(t *testing.T, data []byte) {
		lines := strings.Count(string(data), "\n") + 1
		file, err := Parse(path, Project, data, 0o600, "/home/me")
		if err != nil {
			msg := err.Error()
			if !strings.HasPrefix(msg, path+":") || strings.Contains(msg, "\n") {
				t.Fatalf("error %q does not name the file on one line", msg)
			}
			return
		}
		for _, v := range file.Values {
			if v.Source.Line < 1 || v.Source.Line > lines {
				t.Fatalf("%s on line %d of %d", v.Key, v.Source.Line, lines)
			}
		}
		for _, s := range file.Servers {
			if s.Source.Line < 1 || s.Source.Line > lines {
				t.Fatalf("server %s on line %d of %d", s.Alias, s.Source.Line, lines)
			}
		}
	})
}
