package cli

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tiny-agent/tiny-go/internal/providertest"
)

// BenchmarkBigFileWorkloads measures issue 42's big-file rows side by side
// with plain bash in the same run: each command once with bash in the
// tree, then as a one-shot turn of tiny-go (minus a turn running `true`),
// and what the turn kept in the store. Run with -benchtime=1x:
//
//	go test -run='^$' -bench=BigFileWorkloads -benchtime=1x ./internal/cli
//	go test -run='^$' -bench=BigFileWorkloads/mv -benchtime=1x ./internal/cli  (one row)
func BenchmarkBigFileWorkloads(b *testing.B) {
	for _, r := range bigWorkloads {
		for _, tx := range []string{"overlay", "journal"} {
			b.Run(r.short+"/"+tx, func(b *testing.B) {
				for range b.N {
					dir := b.TempDir()
					bigSh(b, dir, r.seed)
					plain := bigTimed(func() { bigSh(b, dir, r.command) })
					bigSh(b, dir, "rm -rf * && "+r.seed)
					base := bigTurn(b, dir, "true", tx)
					whole := bigTurn(b, dir, r.command, tx)
					kept := treeBytes(filepath.Join(dir, ".tiny-agent", "checkpoints", "tx"))
					b.Logf("%s (%s): plain bash %v, tiny-go +%v over a turn running true (%v), %.1f MB kept",
						r.name, tx, plain.Round(time.Millisecond), (whole - base).Round(time.Millisecond), base.Round(time.Millisecond), float64(kept)/1e6)
				}
			})
		}
	}
}

// bigWorkloads are issue 42's commands whose cost over the overlay is
// the size of what they touch.
var bigWorkloads = []struct{ short, name, seed, command string }{
	{"append", "append to a 1 GB file", `dd if=/dev/urandom of=big.log bs=1M count=1024 status=none`, `echo line >> big.log`},
	{"mv", "rename a 500 MB directory", `mkdir data && for i in $(seq 50); do dd if=/dev/urandom of=data/f$i bs=1M count=10 status=none; done`, `mv data data2`},
	{"sqlite", "read-only sqlite query on 500 MB", sqliteSeed, `sqlite3 app.db "select count(*) from t"`},
	{"sqliteupdate", "update of one row of a 500 MB sqlite database", sqliteSeed, `sqlite3 app.db "update t set x=randomblob(100000) where rowid=2500"`},
}

const sqliteSeed = `sqlite3 app.db "create table t(x); with recursive c(i) as (select 1 union all select i+1 from c limit 5000) insert into t select randomblob(100000) from c;"`

func bigSh(b *testing.B, dir, script string) {
	cmd := exec.Command("bash", "-c", script)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("%s: %v %s", script, err, out)
	}
}

func bigTimed(f func()) time.Duration {
	t0 := time.Now()
	f()
	return time.Since(t0)
}

// bigTurn is the time of a one-shot turn whose one bash call runs command.
func bigTurn(b *testing.B, dir, command, tx string) time.Duration {
	srv := providertest.New(b,
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c1", "bash", fmt.Sprintf("{\"command\":%q}", command))}},
		providertest.Reply{Text: "done"},
	)
	env := map[string]string{"OPENROUTER_API_KEY": "k", "OTEL_SDK_DISABLED": "true", "TINY_ENDPOINT": srv.URL(), "PATH": os.Getenv("PATH"), "HOME": os.Getenv("HOME"), "TINY_TX": tx}
	var out, errb strings.Builder
	t0 := time.Now()
	if code := Main([]string{"--cwd", dir, "go"}, strings.NewReader(""), &out, &errb, func(k string) string { return env[k] }); code != 0 {
		b.Fatalf("exit %d: %s", code, errb.String())
	}
	return time.Since(t0)
}

// treeBytes is what the regular files below dir take beyond the tree: a
// file with another link (a renamed directory's file kept for a rewind
// as a hard link to the moved one) takes no more disk.
func treeBytes(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil && fi.Sys().(*syscall.Stat_t).Nlink == 1 {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}
