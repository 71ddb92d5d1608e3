// Package secrets keeps the credentials tiny-go knows (the model's API key,
// MCP token variables) out of reach of the commands it runs and out of
// everything it writes or sends: Conceal removes them from the process
// environment, including the bytes the kernel shows as /proc/<pid>/environ,
// and a Scrubber masks their values in tool results as a second line of
// defence.
package secrets

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/go-json-experiment/json"
)

// ModelKeyVars are the variables that may hold the model's API key.
var ModelKeyVars = []string{"OPENROUTER_API_KEY", "TINY_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_API_KEY"}

// SearchKeyVars are the variables that may hold a search backend's key
// (docs/web.md).
var SearchKeyVars = []string{"BRAVE_API_KEY"}

// mcpConfigVar names the MCP catalog (mcp.md).
const mcpConfigVar = "TINY_MCP_CONFIG"

// Names returns the variables that hold secrets: the model key variables
// and the tokenEnv of every server in the MCP catalog, if one is named and
// readable (a broken catalog is reported later, by the MCP client).
func Names(getenv func(string) string) []string {
	names := slices.Concat(ModelKeyVars, SearchKeyVars)
	path := getenv(mcpConfigVar)
	if path == "" {
		return names
	}
	data, err := os.ReadFile(path)
	if err != nil || len(data) > 1<<20 {
		return names
	}
	var catalog struct {
		Servers map[string]struct {
			TokenEnv string `json:"tokenEnv"`
		} `json:"servers"`
	}
	if json.Unmarshal(data, &catalog, json.RejectUnknownMembers(false)) != nil {
		return names
	}
	for _, s := range catalog.Servers {
		if s.TokenEnv != "" && !slices.Contains(names, s.TokenEnv) {
			names = append(names, s.TokenEnv)
		}
	}
	slices.Sort(names[len(ModelKeyVars)+len(SearchKeyVars):])
	return names
}

// Conceal removes the variables names from the process environment, so no
// child inherits them by accident, and overwrites them in the memory the
// kernel reads /proc/<pid>/environ from, so no process of the user can read
// them there. It returns a getenv that still answers for them from memory,
// and an error when the kernel's copy could not be cleaned (the variables
// are gone from the Go environment either way).
func Conceal(names []string) (getenv func(string) string, err error) {
	kept := make(map[string]string)
	for _, n := range names {
		if v, ok := os.LookupEnv(n); ok {
			kept[n] = v
			os.Unsetenv(n)
		}
	}
	getenv = func(name string) string {
		if v, ok := kept[name]; ok {
			return v
		}
		return os.Getenv(name)
	}
	if len(kept) == 0 {
		return getenv, nil
	}
	if runtime.GOOS != "linux" {
		// No /proc: macOS shows a process's environment only to its own
		// user, and the Seatbelt profile denies commands that look.
		return getenv, nil
	}
	return getenv, scrubProcEnviron(names)
}

// scrubProcEnviron rewrites the initial environment block of this process
// (env_start..env_end of /proc/self/stat) without the entries for names,
// padding with NUL bytes. The Go runtime copied the environment at startup,
// so nothing reads this block any more but /proc/<pid>/environ.
func scrubProcEnviron(names []string) error {
	stat, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return fmt.Errorf("concealing secrets: %w", err)
	}
	start, end, err := envBounds(stat)
	if err != nil {
		return fmt.Errorf("concealing secrets: %w", err)
	}
	mem, err := os.OpenFile("/proc/self/mem", os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("concealing secrets: %w", err)
	}
	defer mem.Close()
	block := make([]byte, end-start)
	if _, err := mem.ReadAt(block, int64(start)); err != nil {
		return fmt.Errorf("concealing secrets: reading the environment block: %w", err)
	}
	cleaned := withoutEntries(block, names)
	if bytes.Equal(cleaned, block) {
		return nil
	}
	if _, err := mem.WriteAt(cleaned, int64(start)); err != nil {
		return fmt.Errorf("concealing secrets: rewriting the environment block: %w", err)
	}
	return nil
}

// envBounds returns fields 50 and 51 of /proc/<pid>/stat (env_start and
// env_end, since Linux 3.5).
func envBounds(stat []byte) (start, end uint64, err error) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, 0, errors.New("malformed /proc/self/stat")
	}
	// Fields after the command name start at field 3.
	fields := strings.Fields(string(stat[i+1:]))
	const envStart, envEnd = 50 - 3, 51 - 3
	if len(fields) <= envEnd {
		return 0, 0, errors.New("/proc/self/stat has no environment bounds (Linux before 3.5)")
	}
	start, err1 := strconv.ParseUint(fields[envStart], 10, 64)
	end, err2 := strconv.ParseUint(fields[envEnd], 10, 64)
	if err1 != nil || err2 != nil || end < start || end-start > 64<<20 {
		return 0, 0, errors.New("malformed environment bounds in /proc/self/stat")
	}
	return start, end, nil
}

// withoutEntries returns the NUL-separated environment block without the
// NAME=value entries of names, NUL-padded to the same length.
func withoutEntries(block []byte, names []string) []byte {
	out := make([]byte, 0, len(block))
	for entry := range bytes.SplitSeq(block, []byte{0}) {
		if len(entry) == 0 {
			continue
		}
		name, _, _ := bytes.Cut(entry, []byte{'='})
		if slices.Contains(names, string(name)) {
			continue
		}
		out = append(out, entry...)
		out = append(out, 0)
	}
	for len(out) < len(block) {
		out = append(out, 0)
	}
	return out[:len(block)]
}

// Mask replaces a secret value in scrubbed text.
const Mask = "[secret removed]"

// MinLen is the shortest value ever used as a redaction pattern: a key of
// a few characters would mask ordinary words (a key "k" every k of every
// message), so such a key cannot be scrubbed at all (see Maskable).
const MinLen = 8

// Maskable reports whether v is long enough to be masked wherever it
// appears.
func Maskable(v string) bool { return len(v) >= MinLen }

// Unmaskable returns the names of the variables among names whose values
// are set but too short to be masked, for a warning.
func Unmaskable(getenv func(string) string, names []string) []string {
	var short []string
	for _, n := range names {
		if v := getenv(n); v != "" && !Maskable(v) && !slices.Contains(short, n) {
			short = append(short, n)
		}
	}
	return short
}

// Scrubber masks known secret values in text. A nil *Scrubber masks
// nothing.
type Scrubber struct {
	mu     sync.RWMutex
	values []string // longest first, so a value containing another wins
}

// NewScrubber returns a Scrubber for values; empty and very short values
// are ignored.
func NewScrubber(values ...string) *Scrubber {
	s := &Scrubber{}
	s.Add(values...)
	return s
}

// Add adds values to mask.
func (s *Scrubber) Add(values ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, v := range values {
		if Maskable(v) && !slices.Contains(s.values, v) {
			s.values = append(s.values, v)
		}
	}
	slices.SortFunc(s.values, func(a, b string) int { return len(b) - len(a) })
}

// Scrub returns text with every known secret value replaced by Mask.
func (s *Scrubber) Scrub(text string) string {
	if s == nil {
		return text
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, v := range s.values {
		if strings.Contains(text, v) {
			text = strings.ReplaceAll(text, v, Mask)
		}
	}
	return text
}
