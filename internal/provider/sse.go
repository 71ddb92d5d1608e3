package provider

import (
	"bufio"
	"io"
)

// sseReader splits a text/event-stream (WHATWG HTML, "server-sent events")
// into the data of its events. Lines end in LF, CRLF or a lone CR; comment
// lines (":") and fields other than "data" are ignored; several data lines
// of one event are joined with LF.
type sseReader struct {
	r       *bufio.Reader
	line    []byte
	data    []byte
	hasData bool
	// skipLF is set after a CR so that a following LF does not end a
	// second, empty line.
	skipLF bool
	// partial reports that the event last returned by next was cut off by
	// the end of the stream (no blank line after it).
	partial bool
}

func newSSEReader(r io.Reader) *sseReader {
	return &sseReader{r: bufio.NewReader(r)}
}

// next returns the data of the next event that has data. It returns io.EOF
// at the end of the stream and any other read error as is.
func (s *sseReader) next() ([]byte, error) {
	for {
		line, err := s.readLine()
		if err == io.EOF {
			if len(line) > 0 {
				s.field(line)
			}
			if s.hasData {
				s.partial = true
				return s.take(), nil
			}
			return nil, io.EOF
		}
		if err != nil {
			return nil, err
		}
		if len(line) == 0 {
			if s.hasData {
				return s.take(), nil
			}
			continue
		}
		s.field(line)
	}
}

// field processes one non-empty line.
func (s *sseReader) field(line []byte) {
	if line[0] == ':' {
		return // comment, used as keep-alive
	}
	name, value := line, []byte(nil)
	for i, b := range line {
		if b == ':' {
			name, value = line[:i], line[i+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
			break
		}
	}
	if string(name) != "data" {
		return
	}
	if s.hasData {
		s.data = append(s.data, '\n')
	}
	s.data = append(s.data, value...)
	s.hasData = true
}

func (s *sseReader) take() []byte {
	d := s.data
	s.data = nil
	s.hasData = false
	return d
}

// readLine returns the next line without its terminator. At the end of the
// stream it returns the unterminated rest (possibly empty) with io.EOF.
func (s *sseReader) readLine() ([]byte, error) {
	s.line = s.line[:0]
	for {
		b, err := s.r.ReadByte()
		if err != nil {
			return s.line, err
		}
		if s.skipLF {
			s.skipLF = false
			if b == '\n' {
				continue
			}
		}
		switch b {
		case '\n':
			return s.line, nil
		case '\r':
			s.skipLF = true
			return s.line, nil
		}
		s.line = append(s.line, b)
	}
}
