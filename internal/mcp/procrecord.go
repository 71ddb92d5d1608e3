package mcp

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/go-json-experiment/json"

	"github.com/tiny-agent/tiny-go/internal/store"
)

// A process record lets a later run of tiny-go kill a stdio server that
// outlived a tiny-go killed with SIGKILL: .tiny-agent/mcp/pid-<pid>.json
// names the server's process group and the tiny-go that owns it, each with
// its start time so a recycled pid is never mistaken for them.
type procRecord struct {
	Alias           string `json:"alias"`
	PID             int    `json:"pid"` // leader of its own session and group
	StartTicks      uint64 `json:"startTicks"`
	Owner           int    `json:"owner"` // the tiny-go that started it
	OwnerStartTicks uint64 `json:"ownerStartTicks"`
}

const procRecordPrefix = "pid-"

func writeProcRecord(dir, alias string, pid int) (string, error) {
	start, err := startTicks(pid)
	if err != nil {
		return "", err
	}
	owner := os.Getpid()
	ownerStart, err := startTicks(owner)
	if err != nil {
		return "", err
	}
	data, err := json.Marshal(procRecord{Alias: alias, PID: pid, StartTicks: start, Owner: owner, OwnerStartTicks: ownerStart})
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, procRecordPrefix+strconv.Itoa(pid)+".json")
	f, err := openNoFollow(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC)
	if err != nil {
		return "", err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(path)
		return "", err
	}
	if err := f.Close(); err != nil {
		os.Remove(path)
		return "", err
	}
	return path, nil
}

// ReapOrphans kills the stdio servers that a tiny-go killed earlier in
// workDir left behind (its process records name them) and removes their
// records. Servers of a tiny-go that still runs are left alone. It returns
// how many process groups it killed.
func ReapOrphans(workDir string) (int, error) {
	dir, err := store.StateDir(workDir, "mcp", false)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	killed := 0
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, procRecordPrefix) || !strings.HasSuffix(name, ".json") || !e.Type().IsRegular() {
			continue
		}
		path := filepath.Join(dir, name)
		f, err := openNoFollow(path, os.O_RDONLY)
		if err != nil {
			continue
		}
		var rec procRecord
		err = json.UnmarshalRead(f, &rec)
		f.Close()
		if err != nil || rec.PID <= 1 {
			os.Remove(path) // unreadable: nothing can be done with it
			continue
		}
		if alive(rec.Owner, rec.OwnerStartTicks) {
			continue
		}
		if killOrphanGroup(rec) {
			killed++
		}
		os.Remove(path)
	}
	return killed, nil
}

// killOrphanGroup kills rec's process group if it is still the one tiny-go
// started: its leader alive with the recorded start time, or the leader
// gone while the group lives on (its pid cannot be reused meanwhile).
func killOrphanGroup(rec procRecord) bool {
	if start, err := startTicks(rec.PID); err == nil && start != rec.StartTicks {
		return false // the pid now names another process
	}
	return syscall.Kill(-rec.PID, syscall.SIGKILL) == nil
}

// alive reports whether pid runs and started at start.
func alive(pid int, start uint64) bool {
	if pid <= 0 {
		return false
	}
	got, err := startTicks(pid)
	return err == nil && got == start
}

// startTicks reads field 22 of /proc/<pid>/stat: when the process started,
// in clock ticks after boot.
func startTicks(pid int) (uint64, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	// The command name (field 2) is parenthesized and may hold spaces.
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, errors.New("malformed /proc stat")
	}
	fields := strings.Fields(string(data[i+1:]))
	const startField = 22 - 3 // fields counted from field 3
	if len(fields) <= startField {
		return 0, errors.New("malformed /proc stat")
	}
	return strconv.ParseUint(fields[startField], 10, 64)
}

// openNoFollow opens path (0600 when created) without following a symlink;
// only a regular file is opened.
func openNoFollow(path string, flag int) (*os.File, error) {
	return store.OpenSidecarFile(filepath.Dir(path), filepath.Base(path), flag)
}
