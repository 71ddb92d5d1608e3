package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/tiny-agent/tiny-go/internal/conformance"
)

// scriptCommands are the programs this test binary can run as, for
// testscript (and for any test that re-executes os.Args[0]). Test files add
// their own in init functions; TestMain dispatches on the program name.
var scriptCommands = map[string]func(){
	// tiny-go <args>: the program, exactly as the binary runs it.
	"tiny-go": func() {
		os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv))
	},
	// tiny-go-exit <code> <args>: the program, failing unless it exits
	// with code (testscript's "! exec" cannot tell 1 from 2).
	"tiny-go-exit": func() {
		want, err := strconv.Atoi(os.Args[1])
		if err != nil {
			fmt.Fprintln(os.Stderr, "tiny-go-exit: first argument must be the expected exit code")
			os.Exit(100)
		}
		if got := Main(os.Args[2:], os.Stdin, os.Stdout, os.Stderr, os.Getenv); got != want {
			fmt.Fprintf(os.Stderr, "tiny-go-exit: exit code %d, want %d\n", got, want)
			os.Exit(1)
		}
		os.Exit(0)
	},
}

// childEnv marks processes that tests start from this binary. A child
// whose program name matches no script command would otherwise run the
// whole suite again (and start children of its own).
const childEnv = "TINY_GO_TEST_CHILD"

func TestMain(m *testing.M) {
	// The tests' key stays out of the user's state directory: testenv's
	// init gives this binary a folder of its own.
	if os.Getenv(childEnv) != "" {
		if _, ok := scriptCommands[filepath.Base(os.Args[0])]; !ok {
			fmt.Fprintf(os.Stderr, "test child started as %q, which is no script command\n", os.Args[0])
			os.Exit(3)
		}
	}
	testscript.Main(m, scriptCommands)
}

// TestSessionScripts runs testdata/script/session_*.txtar. $FIXTURES and
// $PLANNER are the shared conformance folders (read in place, never
// copied into the repository).
func TestSessionScripts(t *testing.T) {
	session := filepath.Join(conformance.Dir(t), "session")
	testscript.Run(t, testscript.Params{
		Files: globScripts(t, "session_*.txtar"),
		Setup: func(env *testscript.Env) error {
			env.Setenv("FIXTURES", filepath.Join(session, "fixtures"))
			env.Setenv("PLANNER", filepath.Join(session, "planner-fixtures"))
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"jsoneq": cmdJSONEq,
		},
	})
}

func globScripts(t *testing.T, pattern string) []string {
	files, err := filepath.Glob(filepath.Join("testdata", "script", pattern))
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts match %s: %v", pattern, err)
	}
	return files
}

// cmdJSONEq compares two JSON files semantically: jsoneq <got> <want>,
// where a file named stdout or stderr is the last command's output.
func cmdJSONEq(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: jsoneq <got> <want>")
	}
	var vals [2]any
	for i, name := range args {
		data := ts.ReadFile(name)
		if err := json.Unmarshal([]byte(data), &vals[i]); err != nil {
			ts.Fatalf("%s is not JSON: %v", name, err)
		}
	}
	if eq := reflect.DeepEqual(vals[0], vals[1]); eq == neg {
		if neg {
			ts.Fatalf("%s and %s are equal JSON", args[0], args[1])
		}
		ts.Fatalf("%s and %s differ:\n%s\n%s", args[0], args[1], ts.ReadFile(args[0]), ts.ReadFile(args[1]))
	}
}

// TestCLIScripts runs testdata/script/cli_*.txtar: help, completion,
// --version and typos.
func TestCLIScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{Files: globScripts(t, "cli_*.txtar")})
}
