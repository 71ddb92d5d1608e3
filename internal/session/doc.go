// Package session is the durable session format shared by every tiny-agent
// runtime (canonical v2, ../shared/spec/session.md): typed facts, their
// strict JSON codec, RFC 8785 digests and the pure reducer. It does no I/O;
// the file that holds a session is package store's.
//
// # File format
//
// A session is one JSONL file: strict UTF-8, every line one JSON value
// terminated by LF (CRLF and blank lines are corruption). JSON is strict:
// duplicate keys at any depth, lone surrogates and invalid UTF-8 inside
// strings are MALFORMED_JSON; counters and ids are integers in 0..2^53-1.
//
// Line 1 is the header, a closed object:
//
//	{"kind":"header","version":2,"id":<uuidv7>,"createdAt":<ms>,"cwd":…,
//	 "provider":…,"model":…,"environmentIdentity":…}
//
// Every later line is one transaction: a single fact object or a non-empty
// array of facts, applied atomically. Every fact carries kind, seq (1, 2, …
// with no gap, also inside an array), a unique UUIDv7 id and a millisecond
// timestamp, and is one of:
//
//   - entry: a model-visible message (user, settled assistant, tool result,
//     pre-execution synthetic result) or a compaction;
//   - record: operation bookkeeping never sent to the model (runStarted,
//     compactionStarted, stepAttempt, stepFailed, toolStarted,
//     abortRequested, operationFinished);
//   - usage: token counts owned by one model attempt or one tool start.
//
// Bytes after the final LF are a torn tail: uncommitted, never an error.
// A complete line that does not decode or violates an invariant is
// corruption with a code and a line number; it is never skipped.
//
// # Reduction
//
// Reduce (and the incremental Reducer that the store keeps) turns the bytes
// into a State: the transcript, the active context the next request sends,
// summed usage, and the open operation with its step and tool states. It
// is pure: the same bytes give the same State in every runtime, which the
// conformance fixtures check. Check validates a candidate transaction
// without changing anything; Apply applies it atomically.
//
// Nothing here may add a fact type or a header field: what tiny-go keeps
// beyond the contract lives beside the session file (store.SidecarDir).
package session
