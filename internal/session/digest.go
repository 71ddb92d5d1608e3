package session

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/gowebpki/jcs"
)

// EmptyObjectDigest is digest({}), the outputOptionsDigest of every
// configuration snapshot this runtime writes.
const EmptyObjectDigest = "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"

// Digest returns "sha256:" + hex(sha256(JCS(v))) (session.md §4). v is
// marshaled with json v2 (a jsontext.Value is taken as is) and then
// canonicalized per RFC 8785.
func Digest(v any) (string, error) {
	raw, ok := v.(jsontext.Value)
	if !ok {
		var err error
		if raw, err = json.Marshal(v, json.Deterministic(true)); err != nil {
			return "", fmt.Errorf("digest: %w", err)
		}
	}
	canon, err := canonicalize(raw)
	if err != nil {
		return "", fmt.Errorf("digest: %w", err)
	}
	return digestBytes(canon), nil
}

// StringDigest is the digest of a JSON string, e.g. the systemPromptDigest
// of a system prompt.
func StringDigest(s string) string {
	return digestBytes(appendString(nil, s))
}

// ConfigurationDigest is digest(snapshot), the configurationDigest that
// every stepAttempt carries.
func ConfigurationDigest(c ConfigurationSnapshot) string {
	return digestBytes(appendSnapshot(make([]byte, 0, 512), &c))
}

// DefinitionDigest is digest({name, description, parameters[,
// definitionIdentity]}), a tool's definitionDigest. definitionIdentity is
// omitted when empty. parameters must be one JSON value (the tool's
// parameter schema).
func DefinitionDigest(name, description string, parameters jsontext.Value, definitionIdentity string) (string, error) {
	params, err := canonicalize(parameters)
	if err != nil {
		return "", fmt.Errorf("definition digest of %q: parameters: %w", name, err)
	}
	// Members in UTF-16 order: definitionIdentity, description, name, parameters.
	b := append(make([]byte, 0, 64+len(params)), '{')
	first := true
	if definitionIdentity != "" {
		b = appendStringMember(b, true, "definitionIdentity", definitionIdentity)
		first = false
	}
	b = appendStringMember(b, first, "description", description)
	b = appendStringMember(b, false, "name", name)
	b = appendMember(b, false, "parameters")
	b = append(b, params...)
	b = append(b, '}')
	return digestBytes(b), nil
}

// SourceDigest is digest([{sourceEntryId, message}, ...]), the
// sourceDigest of a compaction over its whole source prefix in order.
func SourceDigest(msgs []RetainedMessage) string {
	return digestBytes(appendRetained(make([]byte, 0, 256*len(msgs)+2), msgs))
}

func digestBytes(canon []byte) string {
	sum := sha256.Sum256(canon)
	var out [7 + 64]byte
	copy(out[:], "sha256:")
	hex.Encode(out[7:], sum[:])
	return string(out[:])
}

// canonicalize returns the RFC 8785 form of one strict JSON value.
func canonicalize(v jsontext.Value) ([]byte, error) {
	if !validStrict(v) {
		return nil, errors.New("not a single strict JSON value")
	}
	return jcs.Transform(v)
}
