package acp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
)

// MaxMessage bounds one JSON-RPC message (one line). The SDK reads lines
// of up to 10 MiB and drops the connection on a longer one, so frame
// answers longer lines itself and keeps the connection.
const MaxMessage = 8 << 20

// idPrefix is how much of an oversized line is kept to find its id.
const idPrefix = 4 << 10

// frame copies the client's messages from in to the SDK (w), one line
// each, and answers what the SDK would drop silently: a line that is not
// JSON (-32700), one that is not a JSON-RPC object (-32600), and one
// longer than MaxMessage (-32600, read and discarded without buffering
// it). Memory stays bounded by MaxMessage whatever the client sends.
// The responses to tiny-go's own requests go to calls.
func frame(in io.Reader, w *io.PipeWriter, out io.Writer, calls *clientCalls, log *slog.Logger) error {
	r := bufio.NewReaderSize(in, 64<<10)
	var line []byte
	var head []byte // the start of an oversized line
	oversized := false
	for {
		chunk, err := r.ReadSlice('\n')
		if len(chunk) > 0 {
			switch {
			case oversized:
			case len(line)+len(chunk) > MaxMessage:
				oversized = true
				head = append(head[:0], line[:min(len(line), idPrefix)]...)
				if len(head) < idPrefix {
					head = append(head, chunk[:min(len(chunk), idPrefix-len(head))]...)
				}
				line = line[:0]
			default:
				if n := len(line) + len(chunk); n > cap(line) && n > 1<<20 {
					// One buffer of the largest size, not a chain of
					// doublings whose garbage would double the peak.
					grown := make([]byte, len(line), MaxMessage)
					copy(grown, line)
					line = grown
				}
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		complete := len(chunk) > 0 && chunk[len(chunk)-1] == '\n'
		if complete || (err != nil && (len(line) > 0 || oversized)) {
			var reply []byte
			if oversized {
				log.Warn("message too large", "limit", MaxMessage)
				reply = errorReply(leadingID(head), -32600, fmt.Sprintf("Invalid Request: message larger than %d MiB", MaxMessage>>20))
			} else {
				var fwd []byte
				fwd, reply = check(line)
				if fwd != nil && !calls.deliver(fwd) {
					if _, werr := w.Write(fwd); werr != nil {
						return werr
					}
				}
			}
			if reply != nil {
				if _, werr := out.Write(reply); werr != nil {
					return werr
				}
			}
			line, oversized = line[:0], false
			if cap(line) > 1<<20 {
				line = nil // do not keep a large buffer for small messages
			}
		}
		if err != nil {
			w.CloseWithError(io.EOF)
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// check classifies one line: fwd is what goes to the SDK (the line with
// its newline), reply an error answer for the client. Blank lines are
// neither.
func check(line []byte) (fwd, reply []byte) {
	t := bytes.TrimSpace(line)
	if len(t) == 0 {
		return nil, nil
	}
	if !json.Valid(t) {
		return nil, errorReply(nil, -32700, "Parse error: the message is not valid JSON")
	}
	var msg struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  json.RawMessage `json:"method"`
		Result  json.RawMessage `json:"result"`
		Error   json.RawMessage `json:"error"`
	}
	if t[0] != '{' || json.Unmarshal(t, &msg) != nil {
		return nil, errorReply(nil, -32600, "Invalid Request: a message must be one JSON-RPC 2.0 object (batches are not supported)")
	}
	var method string
	methodOK := msg.Method == nil || json.Unmarshal(msg.Method, &method) == nil
	idOK := validID(msg.ID)
	switch {
	case msg.JSONRPC != "2.0":
		return nil, errorReply(goodID(msg.ID, idOK), -32600, `Invalid Request: "jsonrpc" must be "2.0"`)
	case !idOK:
		return nil, errorReply(nil, -32600, "Invalid Request: the id must be a string, a number or null")
	case !methodOK:
		return nil, errorReply(msg.ID, -32600, `Invalid Request: "method" must be a string`)
	case method == "" && msg.ID == nil:
		return nil, errorReply(nil, -32600, "Invalid Request: neither a request, a notification nor a response")
	}
	return append(t, '\n'), nil
}

func validID(id json.RawMessage) bool {
	if id == nil {
		return true
	}
	switch id[0] {
	case '"', 'n', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return true
	}
	return false
}

func goodID(id json.RawMessage, ok bool) json.RawMessage {
	if ok {
		return id
	}
	return nil
}

// leadingID finds the id of a message from its start (the rest may be
// cut off): the value of a top-level "id" member read before the cut.
func leadingID(head []byte) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(head))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return nil
		}
		var v json.RawMessage
		if k, _ := key.(string); k == "id" {
			if dec.Decode(&v) != nil || !validID(v) {
				return nil
			}
			return v
		}
		if dec.Decode(&v) != nil {
			return nil
		}
	}
	return nil
}

// errorReply is a JSON-RPC error response; a nil id is written as null.
func errorReply(id json.RawMessage, code int, message string) []byte {
	if id == nil {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: id, Error: struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{code, message}})
	return append(b, '\n')
}
