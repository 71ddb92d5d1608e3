package lifecycle

import (
	"encoding/binary"
	"errors"
	"math/bits"
)

// The protobuf wire format (protobuf.dev/programming-guides/encoding),
// as much of it as the OTLP exporter needs. It is written here, on
// encoding/binary, because even google.golang.org/protobuf/encoding/protowire
// links the module's internal/detrand, whose package initialisation opens
// and hashes the executable on every start of tiny-go.

type wireType uint8

const (
	wireVarint     wireType = 0
	wireFixed64    wireType = 1
	wireBytes      wireType = 2
	wireStartGroup wireType = 3
	wireEndGroup   wireType = 4
	wireFixed32    wireType = 5
)

// maxFieldNumber is the largest field number protobuf allows (2^29-1).
const maxFieldNumber = 1<<29 - 1

var errWire = errors.New("malformed protobuf")

func appendTag(b []byte, num int, t wireType) []byte {
	return binary.AppendUvarint(b, uint64(num)<<3|uint64(t))
}

func appendVarint(b []byte, v uint64) []byte { return binary.AppendUvarint(b, v) }

func appendFixed64(b []byte, v uint64) []byte { return binary.LittleEndian.AppendUint64(b, v) }

func appendFixed32(b []byte, v uint32) []byte { return binary.LittleEndian.AppendUint32(b, v) }

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

func appendBytes(b []byte, v []byte) []byte {
	return append(binary.AppendUvarint(b, uint64(len(v))), v...)
}

// varintSize is the length of v's varint encoding.
func varintSize(v uint64) int { return (bits.Len64(v|1) + 6) / 7 }

// consumeVarint returns the varint at the start of b and its length.
func consumeVarint(b []byte) (uint64, int, error) {
	v, n := binary.Uvarint(b) // n <= 0: truncated, or more than 64 bits
	if n <= 0 {
		return 0, 0, errWire
	}
	return v, n, nil
}

// consumeTag returns the field number and wire type of the tag at the
// start of b and the tag's length.
func consumeTag(b []byte) (int, wireType, int, error) {
	v, n, err := consumeVarint(b)
	if err != nil {
		return 0, 0, 0, err
	}
	num := v >> 3
	if num < 1 || num > maxFieldNumber {
		return 0, 0, 0, errWire
	}
	return int(num), wireType(v & 7), n, nil
}

// consumeBytes returns the length-delimited value at the start of b and
// the length it took, prefix included.
func consumeBytes(b []byte) ([]byte, int, error) {
	l, n, err := consumeVarint(b)
	if err != nil || l > uint64(len(b)-n) {
		return nil, 0, errWire
	}
	return b[n : n+int(l)], n + int(l), nil
}

// skipValue returns the length of the value at the start of b of the
// field num, whose tag (of type t) was just read. A group runs to its
// matching end-group tag, nested groups included.
func skipValue(b []byte, num int, t wireType) (int, error) {
	var open []int // field numbers of the groups entered
	off := 0
	for {
		switch t {
		case wireVarint:
			_, n, err := consumeVarint(b[off:])
			if err != nil {
				return 0, err
			}
			off += n
		case wireFixed64, wireFixed32:
			size := 8
			if t == wireFixed32 {
				size = 4
			}
			if len(b)-off < size {
				return 0, errWire
			}
			off += size
		case wireBytes:
			_, n, err := consumeBytes(b[off:])
			if err != nil {
				return 0, err
			}
			off += n
		case wireStartGroup:
			open = append(open, num)
		case wireEndGroup:
			if len(open) == 0 || open[len(open)-1] != num {
				return 0, errWire
			}
			open = open[:len(open)-1]
		default:
			return 0, errWire
		}
		if len(open) == 0 {
			return off, nil
		}
		var n int
		var err error
		if num, t, n, err = consumeTag(b[off:]); err != nil {
			return 0, err
		}
		off += n
	}
}
