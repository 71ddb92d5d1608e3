package session

import (
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestIDTableMatchesAMap drives the id table and a Go map with the same
// random puts and removes (the undo of a rejected transaction removes
// what it added), in a table small enough to wrap and grow, and compares
// every key after each step.
func TestIDTableMatchesAMap(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		rng := rand.New(rand.NewPCG(seed, 0))
		tab := newIDTable(0)
		want := map[idKey]idInfo{}
		keys := make([]idKey, 300)
		for i := range keys {
			keys[i][0], keys[i][15] = byte(i), byte(i>>8)
		}
		for step := range 5000 {
			k := keys[rng.IntN(len(keys))]
			if rng.IntN(3) == 0 {
				tab.remove(k)
				delete(want, k)
			} else {
				info := idInfo{kind: idKind(1 + rng.IntN(10)), op: opRef(step)}
				tab.put(k, info)
				want[k] = info
			}
			if tab.used != len(want) {
				t.Fatalf("seed %d step %d: %d used, want %d", seed, step, tab.used, len(want))
			}
			if step%50 == 0 || step > 4900 {
				for _, k := range keys {
					got, ok := tab.lookup(k)
					w, wok := want[k]
					if ok != wok || got != w {
						t.Fatalf("seed %d step %d key %x: %v %v, want %v %v", seed, step, k, got, ok, w, wok)
					}
				}
			}
		}
	}
}

func TestUUIDKey(t *testing.T) {
	k, ok := uuidKey("018f0000-0000-7000-8000-00000000000a")
	if !ok || fmt.Sprintf("%x", k) != "018f000000007000800000000000000a" {
		t.Fatalf("%x %v", k, ok)
	}
	for _, bad := range []string{"", "018F0000-0000-7000-8000-00000000000a", "018f0000-0000-4000-8000-00000000000a",
		"018f0000-0000-7000-c000-00000000000a", "018f0000x0000-7000-8000-00000000000a", "018f0000-0000-7000-8000-00000000000g"} {
		if _, ok := uuidKey(bad); ok != isUUIDv7(bad) || ok {
			t.Errorf("%q: ok %v", bad, ok)
		}
	}
	var tab idTable
	if a, b := tab.key("op1"), tab.key("op2"); a == b || a != tab.key("op1") || a == (idKey{}) || a[6]>>4 == 7 {
		t.Errorf("odd keys %x %x", a, b)
	}
}

// FuzzUUIDKey: uuidKey accepts exactly what isUUIDv7 accepts, and its key
// is the UUID's hex digits decoded.
func FuzzUUIDKey(f *testing.F) {
	f.Add("018f0000-0000-7000-8000-00000000000a")
	f.Add("018F0000-0000-7000-8000-00000000000a")
	f.Add("01234567-89ab-7def-bfff-ffffffffffff")
	f.Fuzz(func(t *testing.T, s string) {
		k, ok := uuidKey(s)
		if ok != isUUIDv7(s) {
			t.Fatalf("%q: uuidKey ok %v, isUUIDv7 %v", s, ok, isUUIDv7(s))
		}
		if ok {
			if want := strings.ReplaceAll(s, "-", ""); hex.EncodeToString(k[:]) != want {
				t.Fatalf("%q: key %x", s, k)
			}
		}
	})
}
