package store

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"

	"github.com/tiny-agent/tiny-go/internal/session"
)

// ReadHeader reads and decodes the header of the session file at path;
// the rest of the file is not read.
func ReadHeader(path string) (session.Header, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return session.Header{}, err
	}
	defer f.Close()
	h, _, c, err := readHead(f)
	if err == nil && c != nil {
		err = fmt.Errorf("session %s: %w", path, c)
	}
	return h, err
}

// readHead decodes the header line of the session read from rd and says
// whether a committed line follows it. It reads no further than the end of
// that line and holds no more of it than a small buffer.
func readHead(rd io.Reader) (h session.Header, more bool, c *session.Corruption, err error) {
	br := bufio.NewReaderSize(rd, 4<<10)
	var head []byte
	for {
		b, err := br.ReadSlice('\n')
		head = append(head, b...)
		if err == nil {
			break
		}
		if errors.Is(err, io.EOF) {
			return h, false, &session.Corruption{Code: session.CorruptMissingHeader, Line: 1, Detail: "no complete header line"}, nil
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return h, false, nil, err
		}
	}
	if h, c = session.DecodeHeader(head[:len(head)-1]); c != nil {
		return h, false, c, nil
	}
	for {
		_, err := br.ReadSlice('\n')
		switch {
		case err == nil:
			return h, true, nil, nil
		case errors.Is(err, io.EOF):
			return h, false, nil, nil
		case !errors.Is(err, bufio.ErrBufferFull):
			return h, false, nil, err
		}
	}
}
