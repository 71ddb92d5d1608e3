package session

import (
	"crypto/sha256"
	"encoding/hex"
	"hash"
)

// canonical appends RFC 8785 (JCS) text for the format's own typed values.
// Their member names are fixed, so each appender writes them already in
// UTF-16 code-unit order; only free-form JSON (tool arguments, parameter
// schemas) goes through the generic jcs package.

const hexDigits = "0123456789abcdef"

// appendString appends s as a JCS string: only '"', '\\' and control
// characters are escaped, with the short forms where JSON has them and
// lowercase \u00xx otherwise; everything else is copied as is. Invalid
// UTF-8 is copied too, so that a line carrying it fails to decode
// (EncodeTransaction checks every line it returns by decoding it).
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		i += plainPrefix(s[i:]) // skip what is copied as is
		if i == len(s) {
			break
		}
		c := s[i]
		b = append(b, s[start:i]...)
		switch c {
		case '"':
			b = append(b, `\"`...)
		case '\\':
			b = append(b, `\\`...)
		case '\b':
			b = append(b, `\b`...)
		case '\f':
			b = append(b, `\f`...)
		case '\n':
			b = append(b, `\n`...)
		case '\r':
			b = append(b, `\r`...)
		case '\t':
			b = append(b, `\t`...)
		default:
			b = append(b, `\u00`...)
			b = append(b, hexDigits[c>>4], hexDigits[c&0xf])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// plainPrefix returns the length of the longest prefix of b without '"',
// '\\' or a control character: the bytes a string can hold as they are.
// It tests eight bytes at a time, as most of a session is string text.
// The strict reader (strictjson.go) skips string text with it too.
func plainPrefix[T string | []byte](b T) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	i := 0
	for ; i+8 <= len(b); i += 8 {
		x := uint64(b[i]) | uint64(b[i+1])<<8 | uint64(b[i+2])<<16 | uint64(b[i+3])<<24 |
			uint64(b[i+4])<<32 | uint64(b[i+5])<<40 | uint64(b[i+6])<<48 | uint64(b[i+7])<<56
		q := x ^ (ones * '"')
		s := x ^ (ones * '\\')
		// A byte of the result has its high bit set where x has a byte
		// below 0x20, or q or s a zero byte (exact as to whether any does).
		if ((x-ones*0x20)&^x|(q-ones)&^q|(s-ones)&^s)&highs != 0 {
			break
		}
	}
	for ; i < len(b); i++ {
		if c := b[i]; c < 0x20 || c == '"' || c == '\\' {
			return i
		}
	}
	return i
}

// appendMember appends `"name":` preceded by a comma unless first.
func appendMember(b []byte, first bool, name string) []byte {
	if !first {
		b = append(b, ',')
	}
	b = append(b, '"')
	b = append(b, name...)
	return append(b, '"', ':')
}

// appendStringMember appends `"name":"value"`.
func appendStringMember(b []byte, first bool, name, value string) []byte {
	return appendString(appendMember(b, first, name), value)
}

// appendIntMember appends `"name":n` (n is a safe integer, so its JCS form
// is its decimal form).
func appendIntMember(b []byte, first bool, name string, n int64) []byte {
	b = appendMember(b, first, name)
	return appendInt(b, n)
}

func appendInt(b []byte, n int64) []byte {
	if n < 0 {
		b = append(b, '-')
		n = -n
	}
	var tmp [20]byte
	i := len(tmp)
	for {
		i--
		tmp[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			break
		}
	}
	return append(b, tmp[i:]...)
}

// appendMessage appends a model-visible message in JCS form:
// content, role, tool_call_id, tool_calls.
func appendMessage(b []byte, m *Message) []byte {
	b = append(b, '{')
	b = appendMember(b, true, "content")
	if m.Content == nil {
		b = append(b, "null"...)
	} else {
		b = appendString(b, *m.Content)
	}
	b = appendStringMember(b, false, "role", string(m.Role))
	if m.ToolCallID != "" {
		b = appendStringMember(b, false, "tool_call_id", m.ToolCallID)
	}
	if len(m.ToolCalls) > 0 {
		b = appendMember(b, false, "tool_calls")
		b = append(b, '[')
		for i := range m.ToolCalls {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendToolCall(b, &m.ToolCalls[i])
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

// appendToolCall appends {"function":{"arguments","name"},"id","type"}.
func appendToolCall(b []byte, c *ToolCall) []byte {
	b = append(b, '{')
	b = appendMember(b, true, "function")
	b = append(b, '{')
	b = appendStringMember(b, true, "arguments", c.Function.Arguments)
	b = appendStringMember(b, false, "name", c.Function.Name)
	b = append(b, '}')
	b = appendStringMember(b, false, "id", c.ID)
	b = appendStringMember(b, false, "type", c.Type)
	return append(b, '}')
}

// appendSnapshot appends a configuration snapshot in JCS form.
func appendSnapshot(b []byte, c *ConfigurationSnapshot) []byte {
	b = append(b, '{')
	b = appendStringMember(b, true, "adapterIdentity", c.AdapterIdentity)
	b = appendStringMember(b, false, "model", c.Model)
	b = appendStringMember(b, false, "outputOptionsDigest", c.OutputOptionsDigest)
	b = appendStringMember(b, false, "routingIdentity", c.RoutingIdentity)
	b = appendStringMember(b, false, "systemPromptDigest", c.SystemPromptDigest)
	b = appendMember(b, false, "tools")
	b = append(b, '[')
	for i, t := range c.Tools {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '{')
		b = appendStringMember(b, true, "definitionDigest", t.DefinitionDigest)
		b = appendStringMember(b, false, "name", t.Name)
		b = append(b, '}')
	}
	b = append(b, ']')
	return append(b, '}')
}

// appendRetained appends [{"message":...,"sourceEntryId":...},...].
func appendRetained(b []byte, msgs []RetainedMessage) []byte {
	b = append(b, '[')
	for i := range msgs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '{')
		b = appendMember(b, true, "message")
		b = appendMessage(b, &msgs[i].Message)
		b = appendStringMember(b, false, "sourceEntryId", msgs[i].SourceEntryID)
		b = append(b, '}')
	}
	return append(b, ']')
}

// The running history hash: appendRetained's array written piecewise, so
// the reducer and State.HistoryDigest hash each message once.

func newHistoryHash() hash.Hash {
	h := sha256.New()
	h.Write([]byte{'['})
	return h
}

// hashHistory writes the elements of SourceDigest's array for msgs[from:]
// (ids aligned with msgs) to h, which holds the elements before them. buf
// is scratch space (nil allocates); the grown one is returned.
func hashHistory(h hash.Hash, msgs []Message, ids []string, from int, buf []byte) []byte {
	b := buf[:0]
	if cap(b) == 0 {
		b = make([]byte, 0, 32<<10)
	}
	for i := from; i < len(ids); i++ {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '{')
		b = appendMember(b, true, "message")
		b = appendMessage(b, &msgs[i])
		b = appendStringMember(b, false, "sourceEntryId", ids[i])
		b = append(b, '}')
		if len(b) >= 16<<10 {
			h.Write(b)
			b = b[:0]
		}
	}
	h.Write(b)
	return b
}

// sumHistory closes the array and returns the digest; h is used up.
func sumHistory(h hash.Hash) string {
	h.Write([]byte{']'})
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// cloneHash copies a SHA-256 state (which always clones).
func cloneHash(h hash.Hash) hash.Hash {
	c, err := h.(hash.Cloner).Clone()
	if err != nil {
		panic(err)
	}
	return c
}
