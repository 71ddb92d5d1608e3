package session

import "fmt"

// wireMember is one member an entry or record object may have: its name,
// how it is read into the wire struct W and how it is written from it.
// entryMembers and recordMembers list them in the JCS order of their
// names, so bit i of a mask is member i of its table.
type wireMember[W any] struct {
	name  string
	read  func(d *txDecoder, w *W) error
	write func(b []byte, w *W) []byte
}

// stringMember is a string member read by one of the reader's checks
// (uuid, sym, interned, digest).
func stringMember[W any](name string, field func(w *W) *string, read func(r *reader, what string) (string, error)) wireMember[W] {
	return wireMember[W]{name,
		func(d *txDecoder, w *W) (err error) { *field(w), err = read(&d.rd, name); return err },
		func(b []byte, w *W) []byte { return appendString(b, *field(w)) }}
}

// memberIndex finds name in members (sorted by name) by binary search; -1
// when there is no such member.
func memberIndex[W any](members []wireMember[W], name []byte) int {
	lo, hi := 0, len(members)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		switch c := compareName(members[mid].name, name); {
		case c == 0:
			return mid
		case c < 0:
			lo = mid + 1
		default:
			hi = mid
		}
	}
	return -1
}

// compareName compares a member name with a decoded one (for these ASCII
// names, JCS order). The conversions do not allocate.
func compareName(a string, b []byte) int {
	switch {
	case a == string(b):
		return 0
	case a < string(b):
		return -1
	}
	return 1
}

// readMembers reads the members of a what object into w, setting bit i of
// *have for member i (a repeated member is an error).
func readMembers[W any](d *txDecoder, what string, members []wireMember[W], w *W, have *uint64) error {
	rd := &d.rd
	return rd.members(what, func(name []byte) error {
		i := memberIndex(members, name)
		if i < 0 {
			return shapeErr(fmt.Sprintf("unknown %s member %q", what, name))
		}
		if err := members[i].read(d, w); err != nil {
			return err
		}
		member(rd, have, 1<<uint(i))
		return nil
	})
}

// appendMembers writes the members of w that have names, in JCS order, as
// one object.
func appendMembers[W any](b []byte, members []wireMember[W], w *W, have uint64) []byte {
	b = append(b, '{')
	first := true
	for i := range members {
		if have&(1<<uint(i)) == 0 {
			continue
		}
		b = appendMember(b, first, members[i].name)
		b = members[i].write(b, w)
		first = false
	}
	return append(b, '}')
}
