package session

// The lines of a session are decoded on one goroutine and applied on
// another (issue 17): decoding is about half of a load and needs nothing
// of the state, so on two cores a load takes about as long as the larger
// half instead of both.
//
// The applier sees exactly what the sequential loop saw: each line's Line
// hook, then its facts applied, then its Transaction hook, in file order,
// and nothing after the first corrupt line. The decoder may run ahead; it
// is told to stop when the applier stops.

// lineBatch carries decoded lines from the decoder to the applier.
type lineBatch struct {
	buf   []byte // the lines, back to back (unless they alias a mapping)
	lines [][]byte
	facts []Fact
	ends  []int // ends[i] is the end of line i's facts in facts
	// bad is the decoding corruption of the line after the last one in
	// lines (whose bytes are badLine); err a read error after them.
	bad     *Corruption
	badLine []byte
	err     error
	n       int64 // bytes read through the batch (the decoder's count)
	last    bool
}

const (
	batchBytes = 64 << 10
	batchLines = 256
	inFlight   = 4 // batches between the goroutines, and in the free list
)

func (b *lineBatch) reset() {
	b.buf, b.lines, b.facts, b.ends = b.buf[:0], b.lines[:0], b.facts[:0], b.ends[:0]
	b.bad, b.badLine, b.err, b.last = nil, nil, nil, false
}

// readBody reads the lines after the header, decoding them on a goroutine
// of their own; n is the number of bytes read, as lr counts them, through
// the corrupt line when there is one.
func (r *Reducer) readBody(lr *lineReader, hooks ReadHooks) (n int64, c *Corruption, err error) {
	full := make(chan *lineBatch, inFlight)
	free := make(chan *lineBatch, inFlight)
	for range inFlight {
		b := &lineBatch{}
		if lr.data == nil {
			// Room for a batch's lines, so that they are not copied
			// twice (a longer line grows its batch's buffer once).
			b.buf = make([]byte, 0, 2*batchBytes)
		}
		free <- b
	}
	n = lr.n // the header, read before the decoder starts
	stop, done := make(chan struct{}), make(chan struct{})
	defer func() {
		// The decoder is the reducer's (r.dec): it is done before the
		// reducer is handed out.
		close(stop)
		<-done
	}()
	go func() {
		defer close(done)
		if lr.data != nil {
			restore := faultsPanic()
			defer restore()
		}
		r.decodeLines(lr, full, free, stop)
	}()

	for {
		b := <-full
		for i, line := range b.lines {
			if hooks.Line != nil {
				hooks.Line(line)
			}
			n += int64(len(line))
			lineNo := r.lines + 1
			facts := b.facts[:b.ends[i]]
			if i > 0 {
				facts = facts[b.ends[i-1]:]
			}
			if c := r.apply(facts, true); c != nil {
				if r.needText {
					return n, nil, ErrReleasedTextNeeded
				}
				c.Line = lineNo
				return n, c, nil
			}
			r.lines++
			r.st.RepairedLength += int64(len(line))
			r.publish()
			if hooks.Transaction != nil {
				hooks.Transaction(lineNo, facts)
			}
		}
		switch {
		case b.bad != nil:
			if hooks.Line != nil {
				hooks.Line(b.badLine)
			}
			b.bad.Line = r.lines + 1
			return n + int64(len(b.badLine)), b.bad, nil
		case b.err != nil:
			return b.n, nil, b.err
		case b.last:
			return b.n, nil, nil
		}
		free <- b
	}
}

// decodeLines is the decoder's goroutine: it fills batches from lr until
// the end, a read error or a corrupt line, or until stop is closed.
func (r *Reducer) decodeLines(lr *lineReader, full, free chan *lineBatch, stop chan struct{}) {
	dec := &r.dec
	dec.rd.alias = lr.alias
	defer func() {
		// Later lines are the store's own commits, decoded from buffers
		// it reuses: never alias those. Nor keep the last line read: the
		// mapping may be gone once the read returns (ReadHooks.Copy).
		dec.rd.alias, dec.hist, dec.histKeys = false, nil, nil
		dec.forget()
	}()
	// The decoder's own list of the history ids (the message entries, in
	// order), which a compactionStarted repeats: on a valid file it is
	// the reducer's, and where it is not, it only costs the sharing.
	hist := make([]string, 0, cap(r.histIDs)/2)
	keys := make([]idKey, 0, cap(r.histIDs)/2)
	for {
		var b *lineBatch
		select {
		case b = <-free:
		case <-stop:
			return
		}
		b.reset()
		if err := r.fillBatch(b, lr, &hist, &keys); err != nil {
			b.err, b.last = err, true
		}
		b.n = lr.n
		select {
		case full <- b:
		case <-stop:
			return
		}
		if b.last {
			return
		}
	}
}

// fillBatch decodes lines into b; a fault on a mapped file ends it with
// ErrMappingFault.
func (r *Reducer) fillBatch(b *lineBatch, lr *lineReader, hist *[]string, keys *[]idKey) (err error) {
	dec := &r.dec
	defer catchFault(&err)
	for size := 0; size < batchBytes && len(b.lines) < batchLines; {
		line, ok, err := lr.next()
		if err != nil || !ok {
			b.err, b.last = err, true
			break
		}
		if lr.data == nil {
			// The reader reuses its buffer; keep the line.
			start := len(b.buf)
			b.buf = append(b.buf, line...)
			line = b.buf[start:len(b.buf):len(b.buf)]
		}
		size += len(line)
		dec.hist, dec.histKeys = *hist, *keys
		facts, c := dec.decode(line[:len(line)-1])
		if c != nil {
			b.bad, b.badLine, b.last = c, line, true
			break
		}
		b.lines = append(b.lines, line)
		b.facts = append(b.facts, facts...)
		b.ends = append(b.ends, len(b.facts))
		for i := range facts {
			switch facts[i].Entry.(type) {
			case *UserEntry, *AssistantEntry, *ToolResultEntry, *SyntheticEntry:
				k, _ := uuidKey(facts[i].ID)
				*hist, *keys = append(*hist, facts[i].ID), append(*keys, k)
			}
		}
	}
	return nil
}
