package prompt

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// MaxProjectInstructionsBytes bounds AGENTS.md: it is sent with every
// request, so a file larger than this is a mistake worth reporting rather
// than silently truncating.
const MaxProjectInstructionsBytes = 256 << 10

// ProjectInstructions is the AGENTS.md of the working directory.
type ProjectInstructions struct {
	Path    string // absolute path of the file
	Content string // its text, invalid UTF-8 replaced by U+FFFD
}

// ReadProjectInstructions reads AGENTS.md from the working directory cwd. It
// returns nil and no error when there is no such file.
func ReadProjectInstructions(cwd string) (*ProjectInstructions, error) {
	path, err := filepath.Abs(filepath.Join(cwd, "AGENTS.md"))
	if err != nil {
		return nil, fmt.Errorf("AGENTS.md: %w", err)
	}
	text, err := readBounded(path, MaxProjectInstructionsBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &ProjectInstructions{Path: path, Content: text}, nil
}

// errTooLarge is wrapped by readBounded when a file exceeds its limit.
var errTooLarge = errors.New("file too large")

// readBounded reads a regular file of at most limit bytes as text. Invalid
// UTF-8 is replaced so the text can always be sent as JSON.
func readBounded(path string, limit int64) (string, error) {
	data, err := readRegular(path, limit+1)
	if err != nil {
		return "", err
	}
	if int64(len(data)) > limit {
		return "", fmt.Errorf("%s is larger than %d KiB: %w", path, limit>>10, errTooLarge)
	}
	return strings.ToValidUTF8(data, "\uFFFD"), nil
}

// readRegular reads at most n bytes from the start of the regular file
// path.
func readRegular(path string, n int64) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return "", err
	}
	if !info.Mode().IsRegular() {
		return "", fmt.Errorf("%s is not a regular file", path)
	}
	data, err := io.ReadAll(io.LimitReader(f, n))
	if err != nil {
		return "", fmt.Errorf("reading %s: %w", path, err)
	}
	return string(data), nil
}
