package session

import (
	"encoding/binary"
	"hash/maphash"
	"math/bits"
)

// idKey is an id as the reducer's id table keeps it: a UUIDv7's 16 bytes
// (every id the codec accepts is one), so the table holds no pointers
// for the collector to scan and compares keys without reading the ids'
// text, which may be scattered over a mapped file (issue 17).
type idKey [16]byte

type idInfo struct {
	op   opRef // the operation the id belongs to
	kind idKind
}

// opRef numbers the operations of a session in the order they were
// minted, so that an id's entry names its operation in 4 bytes.
type opRef uint32

const (
	noOp      opRef = 0         // user entries belong to none
	unknownOp opRef = ^opRef(0) // an operation id that was never minted
)

// idTable is every id a fact minted, and what it names: an open-addressing
// table with linear probing, its slots in one array. A big session holds
// a million ids; unlike a Go map this table needs no initialization of
// its slots (a zero slot is empty, and fresh memory is zero), a lookup
// reads one cache line, and it holds no pointers (issue 17).
type idTable struct {
	slots []idSlot
	used  int
	seed  maphash.Seed
	// odd numbers the ids that are not lowercase UUIDv7s, which only
	// facts built in memory can have (tests). Their keys have version
	// nibble 0, which no UUIDv7 key has; "" is the zero key.
	odd map[string]idKey
	ops opRef // operations minted so far

	// The last id keyed and the last operation resolved: a fact's id
	// is keyed twice (checked, then added), and most ids of a
	// transaction belong to one operation.
	lastID    string
	lastKey   idKey
	lastOp    string
	lastOpRef opRef
}

type idSlot struct {
	key idKey
	idInfo
}

// maxLoad is the share of used slots past which the table grows: linear
// probing stays short below it.
const maxLoadNum, maxLoadDen = 3, 4

func newIDTable(size int) idTable {
	return idTable{slots: make([]idSlot, max(16, size*maxLoadDen/maxLoadNum)), seed: maphash.MakeSeed()}
}

// home is the slot where k's probe starts.
func (t *idTable) home(k idKey) int {
	hi, _ := bits.Mul64(maphash.Comparable(t.seed, k), uint64(len(t.slots)))
	return int(hi)
}

// find returns k's slot, or the empty slot where k would go.
func (t *idTable) find(k idKey) (int, bool) {
	i := t.home(k)
	for {
		s := &t.slots[i]
		if s.kind == 0 {
			return i, false
		}
		if s.key == k {
			return i, true
		}
		if i++; i == len(t.slots) {
			i = 0
		}
	}
}

func (t *idTable) lookup(k idKey) (idInfo, bool) {
	i, ok := t.find(k)
	return t.slots[i].idInfo, ok
}

// put sets what k names.
func (t *idTable) put(k idKey, info idInfo) {
	i, ok := t.find(k)
	if !ok {
		if (t.used+1)*maxLoadDen > len(t.slots)*maxLoadNum {
			t.grow()
			i, _ = t.find(k)
		}
		t.used++
	}
	t.slots[i] = idSlot{key: k, idInfo: info}
}

func (t *idTable) grow() {
	old := t.slots
	t.slots = make([]idSlot, 2*len(old))
	for _, s := range old {
		if s.kind != 0 {
			i, _ := t.find(s.key)
			t.slots[i] = s
		}
	}
}

// remove deletes k, moving later slots of its probe run back so that
// every key stays reachable from its home without tombstones.
func (t *idTable) remove(k idKey) {
	i, ok := t.find(k)
	if !ok {
		return
	}
	t.used--
	t.lastOp = "" // it may have been an operation's
	n := len(t.slots)
	for j := i; ; {
		t.slots[i] = idSlot{}
		for {
			if j++; j == n {
				j = 0
			}
			if t.slots[j].kind == 0 {
				return
			}
			// The key at j stays unless the hole at i lies cyclically
			// between its home and j.
			h := t.home(t.slots[j].key)
			if i <= j && (h <= i || h > j) || i > j && h <= i && h > j {
				break
			}
		}
		t.slots[i] = t.slots[j]
		i = j
	}
}

// key returns the key of id.
func (t *idTable) key(id string) idKey {
	if id == t.lastID && id != "" {
		return t.lastKey
	}
	if k, ok := uuidKey(id); ok {
		t.lastID, t.lastKey = id, k
		return k
	}
	if id == "" {
		return idKey{}
	}
	k, ok := t.odd[id]
	if !ok {
		if t.odd == nil {
			t.odd = make(map[string]idKey)
		}
		binary.BigEndian.PutUint64(k[8:], uint64(len(t.odd)+1))
		t.odd[id] = k
	}
	return k
}

// opRef is the ref of operation id op.
func (t *idTable) opRef(op string) opRef {
	if op == "" {
		return noOp
	}
	if op == t.lastOp {
		return t.lastOpRef
	}
	if info, ok := t.get(op); ok && info.kind == idOperation {
		t.lastOp, t.lastOpRef = op, info.op
		return info.op
	}
	return unknownOp
}

func (t *idTable) get(id string) (idInfo, bool) {
	return t.lookup(t.key(id))
}

// uuidKey decodes a lowercase UUIDv7 (isUUIDv7) into its bytes.
func uuidKey(s string) (k idKey, ok bool) {
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' || s[14] != '7' {
		return k, false
	}
	switch s[19] {
	case '8', '9', 'a', 'b':
	default:
		return k, false
	}
	var bad byte
	n := 0
	for _, g := range [5][2]int{{0, 8}, {9, 13}, {14, 18}, {19, 23}, {24, 36}} {
		for i := g[0]; i < g[1]; i += 2 {
			hi, lo := unhex[s[i]], unhex[s[i+1]]
			bad |= hi | lo
			k[n] = hi<<4 | lo
			n++
		}
	}
	return k, bad&0x80 == 0
}

// unhex maps a lowercase hex digit to its value and any other byte to 0xff.
var unhex = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = byte(c - '0')
	}
	for c := 'a'; c <= 'f'; c++ {
		t[c] = byte(c-'a') + 10
	}
	return t
}()
