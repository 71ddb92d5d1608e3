package attach

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func mk(t testing.TB, root, rel, content string) {
	t.Helper()
	p := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestIndexHonoursGitignore(t *testing.T) {
	root := t.TempDir()
	mk(t, root, ".gitignore", "*.log\nbuild/\n!keep.log\n")
	mk(t, root, "src/app/main.go", "")
	mk(t, root, "src/app/.gitignore", "gen_*.go\n")
	mk(t, root, "src/app/gen_x.go", "")
	mk(t, root, "build/out.bin", "")
	mk(t, root, "debug.log", "")
	mk(t, root, "keep.log", "")
	mk(t, root, ".git/HEAD", "")
	x := NewIndex(root)
	x.Wait()
	all := strings.Join(x.Find("", 100), " ")
	if all != ".gitignore keep.log src/" {
		t.Fatalf("top level: %q", all)
	}
	got := x.Find("main", 10)
	if len(got) == 0 || got[0] != "src/app/main.go" {
		t.Fatalf("Find main: %q", got)
	}
	for _, p := range append(x.Find("gen", 10), x.Find("out", 10)...) {
		if strings.Contains(p, "gen_x") || strings.Contains(p, "build") {
			t.Fatalf("ignored path offered: %q", p)
		}
	}
}

func TestResolveRefusals(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	mk(t, outside, "secret.txt", "s")
	mk(t, root, "ok.txt", "hello\n")
	mk(t, root, "fake.png", "this is text, not an image")
	mk(t, root, "blob", "\x00\x01\x02")
	os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(root, "link"))
	os.Symlink(outside, filepath.Join(root, "dirlink"))
	big := filepath.Join(root, "big.iso")
	f, _ := os.Create(big)
	f.Truncate(2 << 30) // sparse: 2 GB without the disk
	f.Close()
	for _, tc := range []struct{ mention, want string }{
		{"link", "a symlink to " + filepath.Join(outside, "secret.txt") + ", outside the working directory"},
		{"dirlink/secret.txt", "outside the working directory"},
		{"../" + filepath.Base(outside) + "/secret.txt", "outside the working directory"},
		{filepath.Join(outside, "secret.txt"), "outside the working directory"},
		{"blob", "a binary file"},
		{"fake.png", "named like an image but not a PNG, JPEG, GIF or WebP image"},
		{"big.iso", "2.0 GB is more than the 16.0 MB a mention may attach"},
	} {
		_, err := Resolve(root, tc.mention)
		var ae *Error
		if !errors.As(err, &ae) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("@%s: %v, want %q", tc.mention, err, tc.want)
		}
	}
	if _, err := Resolve(root, "missing.txt"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing path: %v", err)
	}
	a, err := Resolve(root, "ok.txt")
	if err != nil || a.Text != "<file path=\"ok.txt\">\nhello\n</file>" {
		t.Errorf("ok.txt: %+v %v", a, err)
	}
}

func TestResolveCutsLongText(t *testing.T) {
	root := t.TempDir()
	mk(t, root, "long.txt", strings.Repeat("é", MaxText)) // 2 bytes a rune: cut mid-rune
	a, err := Resolve(root, "long.txt")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(a.Text, "[cut: only the first 256.0 KB of 512.0 KB were attached]") || !strings.HasPrefix(a.Note, "attached the first 256.0 KB of long.txt") {
		t.Fatalf("note %q, text tail %q", a.Note, a.Text[len(a.Text)-80:])
	}
}

func TestMentions(t *testing.T) {
	got := Mentions("see @a.go, @b/ and mail x@y.z or @a.go again (@c)")
	if strings.Join(got, " ") != "a.go b/" {
		t.Fatalf("%q", got)
	}
}

// tree makes n files in a nested layout under root.
func tree(t testing.TB, root string, n int) {
	made := map[string]bool{}
	for i := 0; i < n; i++ {
		dir := filepath.Join(root, fmt.Sprintf("pkg%03d/sub%02d", i%300, i%37))
		if !made[dir] {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			made[dir] = true
		}
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("file%05d.go", i)))
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
}

// TestIndexFirstResultsFast: in a 100k-file tree the first results come
// long before the walk ends (the bound is generous; the figure is in
// docs/performance.md).
func TestIndexFirstResultsFast(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 100k-file tree")
	}
	root := t.TempDir()
	tree(t, root, 100_000)
	start := time.Now()
	x := NewIndex(root)
	for len(x.Find("file", 10)) == 0 {
		if time.Since(start) > 2*time.Second {
			t.Fatal("no results within 2 s")
		}
		time.Sleep(time.Millisecond)
	}
	first := time.Since(start)
	x.Wait()
	t.Logf("first results after %v; walk of %d paths done after %v", first, x.Len(), time.Since(start))
	q := time.Now()
	if got := x.Find("pkg12sub3file99", 10); len(got) == 0 {
		t.Fatal("no match")
	}
	t.Logf("a query over the whole index: %v", time.Since(q))
}

func BenchmarkFind100k(b *testing.B) {
	root := b.TempDir()
	tree(b, root, 100_000)
	x := NewIndex(root)
	x.Wait()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		x.Find("pkg12sub3file99", 10)
	}
}

func FuzzMentions(f *testing.F) {
	f.Add("see @a.go and @b/")
	f.Fuzz(func(t *testing.T, s string) {
		for _, m := range Mentions(s) {
			if m == "" || strings.ContainsAny(m, " \t\n@") {
				t.Fatalf("mention %q of %q", m, s)
			}
		}
	})
}

func TestPrepareImage(t *testing.T) {
	if _, err := PrepareImage("image/png", []byte("\x89PNG\r\n\x1a\ngarbage")); err == nil || !strings.Contains(err.Error(), "not a readable png image") {
		t.Fatalf("garbage PNG: %v", err)
	}
	refs := ImageRefs("a [image: image-" + strings.Repeat("ab", 32) + ".png (1x1, from x)] b [image: nope]")
	if len(refs) != 1 || MediaTypeOf(refs[0]) != "image/png" {
		t.Fatalf("refs %q", refs)
	}
}

// FuzzPrepareImage: whatever the bytes, PrepareImage returns an image
// within the limits or an error, and never panics.
func FuzzPrepareImage(f *testing.F) {
	f.Add([]byte("\x89PNG\r\n\x1a\n"), 0)
	f.Add([]byte("GIF89a\x01\x00\x01\x00"), 2)
	f.Add([]byte("RIFF\x00\x00\x00\x00WEBPVP8 "), 3)
	types := []string{"image/png", "image/jpeg", "image/gif", "image/webp"}
	f.Fuzz(func(t *testing.T, data []byte, kind int) {
		mt := types[(kind%4+4)%4]
		img, err := PrepareImage(mt, data)
		if err != nil {
			return
		}
		if len(img.Data) > MaxImageBytes || img.Width > MaxImageSide || img.Height > MaxImageSide || !strings.HasPrefix(img.Name, "image-") {
			t.Fatalf("%+v", img)
		}
	})
}
