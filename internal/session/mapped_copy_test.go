package session

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"unsafe"
)

// checkNothingAliases fails if any string or byte slice reachable from r
// (its state, its caches, its id table: every field, exported or not)
// has its bytes inside m. A reducer read with ReadHooks.Copy must hold
// none: its caller unmaps m as soon as the read returns.
func checkNothingAliases(t testing.TB, r *Reducer, m []byte) {
	t.Helper()
	w := aliasWalk{lo: uintptr(unsafe.Pointer(&m[0])), seen: map[walked]bool{}}
	w.hi = w.lo + uintptr(len(m))
	w.walk(reflect.ValueOf(r), "reducer")
	if w.found != "" {
		t.Fatalf("%s still references the mapped file", w.found)
	}
}

type aliasWalk struct {
	lo, hi uintptr
	seen   map[walked]bool
	found  string // the path of the first reference into [lo, hi)
}

// walked is a pointer walked, with its type.
type walked struct {
	p uintptr
	t reflect.Type
}

func (w *aliasWalk) in(p uintptr) bool { return p >= w.lo && p < w.hi }

func (w *aliasWalk) walk(v reflect.Value, path string) {
	if w.found != "" || !v.IsValid() {
		return
	}
	switch v.Kind() {
	case reflect.String:
		if s := v.String(); s != "" && w.in(uintptr(unsafe.Pointer(unsafe.StringData(s)))) {
			w.found = path
		}
	case reflect.Pointer:
		if v.IsNil() || w.visited(v.Pointer(), v.Type()) {
			return
		}
		w.walk(v.Elem(), path)
	case reflect.Interface:
		w.walk(v.Elem(), path)
	case reflect.Struct:
		for i := range v.NumField() {
			w.walk(v.Field(i), path+"."+v.Type().Field(i).Name)
		}
	case reflect.Slice:
		if v.Cap() == 0 {
			return
		}
		if w.in(v.Pointer()) {
			w.found = path
			return
		}
		if v.Type().Elem().Kind() == reflect.Uint8 || w.visited(v.Pointer(), v.Type()) {
			return
		}
		w.elems(v.Slice(0, v.Cap()), path)
	case reflect.Array:
		if v.Type().Elem().Kind() != reflect.Uint8 {
			w.elems(v, path)
		}
	case reflect.Map:
		if v.IsNil() || w.visited(v.Pointer(), v.Type()) {
			return
		}
		for it := v.MapRange(); it.Next(); {
			w.walk(it.Key(), path+"[key]")
			w.walk(it.Value(), path+"[value]")
		}
	}
}

func (w *aliasWalk) elems(v reflect.Value, path string) {
	for i := range v.Len() {
		w.walk(v.Index(i), fmt.Sprintf("%s[%d]", path, i))
	}
}

func (w *aliasWalk) visited(p uintptr, t reflect.Type) bool {
	k := walked{p, t}
	if w.seen[k] {
		return true
	}
	w.seen[k] = true
	return false
}

// The walk finds what a read without Copy references (so its silence on
// a Copy read means something).
func TestAliasWalkFindsTheMapping(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "scenarios", "repeated-compaction.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	m := readOnlyCopy(t, data)
	r, _, c, err := ReadMapped(m, ReadHooks{})
	if err != nil || c != nil {
		t.Fatal(err, c)
	}
	w := aliasWalk{lo: uintptr(unsafe.Pointer(&m[0])), seen: map[walked]bool{}}
	w.hi = w.lo + uintptr(len(m))
	w.walk(reflect.ValueOf(r), "reducer")
	if w.found == "" {
		t.Fatal("a read that aliases the mapping was not caught")
	}
}
