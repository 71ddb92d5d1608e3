//go:build linux && (amd64 || arm64)

package journal

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BenchmarkWorkloads measures issue 42's workload table with plain bash and
// under the journal, in the same tree, five times each (medians): the
// time added, what the journal keeps, and what its Restore takes. Run with
//
//	go test -run='^$' -bench=Workloads -benchtime=1x ./internal/journal
//
// JOURNAL_BENCH_DIR puts the trees on another file system; JOURNAL_BENCH_ROWS
// keeps the rows whose name has that word.
func BenchmarkWorkloads(b *testing.B) {
	const sqliteSeed = `sqlite3 app.db "create table t(x); with recursive c(i) as (select 1 union all select i+1 from c limit 5000) insert into t select randomblob(100000) from c;"`
	type row struct{ name, seed, command, reset string }
	rows := []row{
		{"nothing", "", "true", ""},
		{"append to a 1 GB file", `dd if=/dev/urandom of=big.log bs=1M count=1024 status=none`, `echo line >> big.log`, ""},
		{"rename a 500 MB directory", `mkdir data && for i in $(seq 50); do dd if=/dev/urandom of=data/f$i bs=1M count=10 status=none; done`, `mv data data2`, `mv data2 data`},
		{"read-only sqlite query on 500 MB", sqliteSeed, `sqlite3 app.db "select count(*) from t"`, ""},
		{"one-row sqlite update on 500 MB", sqliteSeed, `sqlite3 app.db "update t set x=randomblob(100000) where rowid=2500"`, ""},
		{"truncate a 500 MB file", `dd if=/dev/urandom of=big.bin bs=1M count=500 status=none && sync big.bin`, `: > big.bin`, `rm big.bin && dd if=/dev/urandom of=big.bin bs=1M count=500 status=none && sync big.bin`},
		{"create 1,000 small files", "", `mkdir out && for i in $(seq 1000); do echo $i > out/f$i; done`, `rm -r out`},
		{"rewrite 1,000 small files", `mkdir out && for i in $(seq 1000); do echo $i > out/f$i; done`, `for i in $(seq 1000); do echo x$i > out/f$i; done`, ""},
	}
	if f := os.Getenv("JOURNAL_BENCH_ROWS"); f != "" {
		rows = slices.DeleteFunc(rows, func(r row) bool { return !strings.Contains(r.name, f) })
	}
	for range b.N {
		for _, r := range rows {
			base := benchBase(b)
			tree := filepath.Join(base, "tree")
			if err := os.Mkdir(tree, 0o755); err != nil {
				b.Fatal(err)
			}
			benchSh(b, tree, r.seed)
			var plain, journaled, restore []time.Duration
			var kept int64
			for i := range 5 {
				plain = append(plain, timed(func() { benchSh(b, tree, r.command) }))
				benchSh(b, tree, r.reset)
				jdir := filepath.Join(base, "journal"+strconv.Itoa(i))
				journaled = append(journaled, timed(func() { benchJournal(b, tree, jdir, r.command) }))
				kept = max(kept, keptBytesB(jdir))
				restore = append(restore, timed(func() {
					if err := Restore(jdir); err != nil {
						b.Fatal(err)
					}
				}))
			}
			p, j := median(plain), median(journaled)
			b.Logf("%s: plain bash %v, journal %v (+%v), %.1f kB kept, restore %v",
				r.name, p.Round(time.Microsecond*100), j.Round(time.Microsecond*100), (j - p).Round(time.Microsecond*100),
				float64(kept)/1e3, median(restore).Round(time.Microsecond*100))
		}
	}
}

func benchSh(b *testing.B, dir, script string) {
	if script == "" {
		return
	}
	cmd := exec.Command("bash", "-c", script)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("%s: %v %s", script, err, out)
	}
}

func benchJournal(b *testing.B, tree, jdir, script string) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(bash, "-c", script)
	cmd.Dir = tree
	s, err := Start(cmd, tree, jdir)
	if err != nil {
		b.Fatal(err)
	}
	if err := s.Wait(); err != nil {
		b.Fatal(err)
	}
}

func timed(f func()) time.Duration {
	t0 := time.Now()
	f()
	return time.Since(t0)
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

// benchBase is a fresh directory, on the file system JOURNAL_BENCH_DIR
// names (one with reflinks, say) or in the test's temporary directory.
func benchBase(b *testing.B) string {
	root := os.Getenv("JOURNAL_BENCH_DIR")
	if root == "" {
		return b.TempDir()
	}
	dir, err := os.MkdirTemp(root, "bench")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// keptBytesB is the disk the journal takes (blocks: a reflink shares its
// pre-image's).
func keptBytesB(dir string) int64 {
	var n int64
	_ = filepath.Walk(dir, func(_ string, info os.FileInfo, err error) error {
		if err == nil && info.Mode().IsRegular() {
			n += info.Sys().(*syscall.Stat_t).Blocks * 512
		}
		return nil
	})
	return n
}
