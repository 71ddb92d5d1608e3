package tools

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/tiny-agent/tiny-go/internal/procs"
	"github.com/tiny-agent/tiny-go/internal/sandbox"
	"github.com/tiny-agent/tiny-go/internal/store"
)

// Background process states as the bg tool reports them.
const (
	BgRunning = "running" // the recorded process is alive
	BgExited  = "exited"  // it ended on its own
	BgStopped = "stopped" // bg stop or StopAll ended it
	BgStale   = "stale"   // the recorded pid is gone or now names another process
)

// bgStopGrace is how long stop waits between SIGTERM and SIGKILL.
const bgStopGrace = 2 * time.Second

// bgRecord is the metadata file .tiny-agent/bg/<id>.json.
type bgRecord struct {
	ID      string `json:"id"`
	Command string `json:"command"`
	Dir     string `json:"cwd"`
	PID     int    `json:"pid"`
	// StartTicks is field 22 of /proc/<pid>/stat when the process was
	// started: a pid whose start time differs was recycled.
	StartTicks uint64    `json:"startTicks"`
	StartedAt  time.Time `json:"startedAt"`
	Log        string    `json:"log"`
	// State is BgRunning, BgExited or BgStopped as last recorded; whether a
	// BgRunning record is really alive is decided by checking the pid.
	State    string     `json:"state"`
	ExitCode *int       `json:"exitCode,omitzero"`
	EndedAt  *time.Time `json:"endedAt,omitzero"`
}

// bgProc is a process started by this Manager.
type bgProc struct {
	rec      bgRecord
	marker   string        // in the environment of all its processes
	done     chan struct{} // closed once the exit is recorded
	stopping bool          // set before stop signals it, so the exit reads "stopped"
}

// Manager owns the background processes of one working directory: it
// starts them, records them under <workDir>/.tiny-agent/bg and stops the
// ones it started when the program exits (StopAll). Records left by other
// runs are listed and can be stopped, but are never signalled unless their
// pid still names the recorded process.
type Manager struct {
	workDir string
	dir     string

	mu      sync.Mutex
	owned   map[string]*bgProc
	env     []string // nil: the process environment
	sandbox *sandbox.Sandbox
	procs   *procs.Tracker
}

// setProcs sets the tracker of the processes started from now on.
func (m *Manager) setProcs(t *procs.Tracker) {
	m.mu.Lock()
	m.procs = t
	m.mu.Unlock()
}

// setSandbox sets the sandbox of the processes started from now on.
func (m *Manager) setSandbox(s *sandbox.Sandbox) {
	m.mu.Lock()
	m.sandbox = s
	m.mu.Unlock()
}

// setEnv sets the environment of the processes started from now on.
func (m *Manager) setEnv(env []string) {
	m.mu.Lock()
	m.env = env
	m.mu.Unlock()
}

// NewManager returns a Manager for the absolute working directory workDir.
func NewManager(workDir string) (*Manager, error) {
	if !filepath.IsAbs(workDir) {
		return nil, fmt.Errorf("tools: background working directory %q is not absolute", workDir)
	}
	return &Manager{
		workDir: workDir,
		dir:     filepath.Join(workDir, ".tiny-agent", "bg"),
		owned:   make(map[string]*bgProc),
	}, nil
}

// start launches command detached (new session, so its own process group,
// stdin from /dev/null, stdout and stderr appended to its log).
func (m *Manager) start(command string) (bgRecord, error) {
	if _, err := m.stateDir(true); err != nil {
		return bgRecord{}, err
	}
	id, logFile, err := m.newLog()
	if err != nil {
		return bgRecord{}, err
	}
	defer logFile.Close() // the child has its own copy
	cmd := exec.Command("sh", "-c", command)
	cmd.Dir = m.workDir
	m.mu.Lock()
	marker := m.procs.NewMarker()
	cmd.Env = withMarker(m.env, marker)
	m.mu.Unlock()
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// Pdeathsig: the process dies with tiny-go even when tiny-go is
	// killed with SIGKILL.
	cmd.SysProcAttr = procs.DiesWithUs(&syscall.SysProcAttr{Setsid: true})

	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.sandbox.Start(cmd); err != nil {
		os.Remove(logFile.Name())
		return bgRecord{}, err
	}
	// Not yet reaped, so /proc/<pid> exists even if it already exited.
	st, err := readProcStat(cmd.Process.Pid)
	if err != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
		return bgRecord{}, fmt.Errorf("reading process start time: %w", err)
	}
	rec := bgRecord{
		ID:         id,
		Command:    command,
		Dir:        m.workDir,
		PID:        cmd.Process.Pid,
		StartTicks: st.StartTicks,
		StartedAt:  time.Now().UTC(),
		Log:        logFile.Name(),
		State:      BgRunning,
	}
	if err := m.save(rec); err != nil {
		syscall.Kill(-rec.PID, syscall.SIGKILL)
		cmd.Wait()
		return bgRecord{}, err
	}
	m.procs.Started(rec.PID, command)
	p := &bgProc{rec: rec, marker: marker, done: make(chan struct{})}
	m.owned[id] = p
	go m.reap(p, cmd)
	return rec, nil
}

// newLog picks a fresh id and creates its log file exclusively.
func (m *Manager) newLog() (string, *os.File, error) {
	for range 10 {
		var b [4]byte
		rand.Read(b[:])
		id := hex.EncodeToString(b[:])
		f, err := store.OpenSidecarFile(m.dir, id+".log", os.O_CREATE|os.O_EXCL|os.O_WRONLY|os.O_APPEND)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return id, f, err
	}
	return "", nil, errors.New("no free background process id")
}

// reap waits for an owned process and records how it ended.
func (m *Manager) reap(p *bgProc, cmd *exec.Cmd) {
	err := cmd.Wait()
	if lines := m.sandbox.NetworkRefusals(cmd); len(lines) > 0 {
		// What --network rules refused it ends its log, where bg logs
		// shows it.
		if f, ferr := os.OpenFile(p.rec.Log, os.O_WRONLY|os.O_APPEND, 0); ferr == nil {
			f.WriteString(strings.Join(lines, "\n") + "\n")
			f.Close()
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now().UTC()
	p.rec.EndedAt = &now
	if p.stopping {
		p.rec.State = BgStopped
	} else {
		code := exitCode(err)
		p.rec.State, p.rec.ExitCode = BgExited, &code
	}
	m.save(p.rec) // best effort: a stale record is reported as stale
	close(p.done)
}

// save writes rec atomically.
func (m *Manager) save(rec bgRecord) error {
	data, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	return m.writeRecord(rec.ID+".json", append(data, '\n'))
}

// stateDir checks (and with create makes) the private directory of the
// records and logs: 0700, this user's, no symlinks on the way, so nothing
// planted there redirects a log or a record.
func (m *Manager) stateDir(create bool) (string, error) {
	return store.StateDir(m.workDir, "bg", create)
}

// writeRecord replaces a record atomically with a private (0600) file.
func (m *Manager) writeRecord(name string, data []byte) error {
	if _, err := m.stateDir(true); err != nil {
		return err
	}
	tmp := "." + name + ".tmp"
	f, err := store.OpenSidecarFile(m.dir, tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(filepath.Join(m.dir, tmp), filepath.Join(m.dir, name))
	}
	if err != nil {
		os.Remove(filepath.Join(m.dir, tmp))
	}
	return err
}

// errNoProcess is returned for an id without a record.
type errNoProcess string

func (e errNoProcess) Error() string {
	return fmt.Sprintf("No background process with id %s.", string(e))
}

// validID reports whether id can name a record file (no path tricks).
func validID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// load reads the record of id.
func (m *Manager) load(id string) (bgRecord, error) {
	if !validID(id) {
		return bgRecord{}, errNoProcess(id)
	}
	m.mu.Lock()
	p, ok := m.owned[id]
	var rec bgRecord
	if ok {
		rec = p.rec
	}
	m.mu.Unlock()
	if ok {
		return rec, nil
	}
	if _, err := m.stateDir(false); errors.Is(err, fs.ErrNotExist) {
		return bgRecord{}, errNoProcess(id)
	} else if err != nil {
		return bgRecord{}, err
	}
	f, err := store.OpenSidecarFile(m.dir, id+".json", os.O_RDONLY)
	if errors.Is(err, fs.ErrNotExist) {
		return bgRecord{}, errNoProcess(id)
	}
	if err != nil {
		return bgRecord{}, err
	}
	data, err := io.ReadAll(io.LimitReader(f, 1<<20))
	f.Close()
	if err != nil {
		return bgRecord{}, err
	}
	if err := json.Unmarshal(data, &rec); err != nil || rec.ID != id {
		return bgRecord{}, fmt.Errorf("the record of %s is unreadable", id)
	}
	return rec, nil
}

// records returns every readable record, oldest first, and how many record
// files could not be read.
func (m *Manager) records() ([]bgRecord, int, error) {
	if _, err := m.stateDir(false); errors.Is(err, fs.ErrNotExist) {
		return nil, 0, nil
	} else if err != nil {
		return nil, 0, err
	}
	entries, err := os.ReadDir(m.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	var recs []bgRecord
	bad := 0
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || !validID(id) {
			continue
		}
		rec, err := m.load(id)
		if err != nil {
			bad++
			continue
		}
		recs = append(recs, rec)
	}
	slices.SortFunc(recs, func(a, b bgRecord) int {
		return cmp.Or(a.StartedAt.Compare(b.StartedAt), cmp.Compare(a.ID, b.ID))
	})
	return recs, bad, nil
}

// liveState decides the state of rec now: a BgRunning record is running
// only while its pid names a live process with the recorded start time. It
// returns the freshest record too: for a process of this Manager that just
// exited, the one its reaper writes.
func (m *Manager) liveState(rec bgRecord) (bgRecord, string) {
	if rec.State != BgRunning {
		return rec, rec.State
	}
	m.mu.Lock()
	p := m.owned[rec.ID]
	m.mu.Unlock()
	st, err := readProcStat(rec.PID)
	switch {
	case p != nil && (err != nil || st.Dead()):
		// Ours and exited, but maybe not reaped yet. Until it is, its pid
		// cannot be reused.
		select {
		case <-p.done:
		case <-time.After(time.Second):
		}
		m.mu.Lock()
		rec = p.rec
		m.mu.Unlock()
		if rec.State == BgRunning {
			return rec, BgStale // the reaper is stuck; say what we know
		}
		return rec, rec.State
	case err != nil || st.StartTicks != rec.StartTicks:
		return rec, BgStale
	case st.Dead():
		// A zombie of an earlier run (some inits never reap): its exit
		// code is lost.
		return rec, BgStale
	}
	return rec, BgRunning
}

// describeState renders a state with its exit code.
func describeState(rec bgRecord, state string) string {
	if state == BgExited && rec.ExitCode != nil {
		return fmt.Sprintf("exited (code %d)", *rec.ExitCode)
	}
	return state
}

// stopOutcome says what stop did.
type stopOutcome int

const (
	stopNotRunning stopOutcome = iota // nothing to signal
	stopTerminated                    // ended after SIGTERM
	stopKilled                        // needed SIGKILL
)

// stop ends the process of rec: SIGTERM to its group, up to bgStopGrace
// (cut short if ctx is done), then SIGKILL. It signals only a process whose
// pid still has the recorded start time, or, for a process this Manager
// started whose shell already exited, what is left of its group (jobs the
// command put in the background). It returns the record and the state it
// was in.
func (m *Manager) stop(ctx context.Context, rec bgRecord) (bgRecord, string, stopOutcome) {
	rec, state := m.liveState(rec)
	m.mu.Lock()
	p := m.owned[rec.ID]
	tracker := m.procs
	if p != nil && state == BgRunning {
		p.stopping = true
	}
	m.mu.Unlock()
	switch {
	case state == BgRunning:
	case p != nil && state != BgStale && sessionLeaderGroupAlive(rec.PID):
		// The pgid cannot have been reused while members remain.
	default:
		return rec, state, stopNotRunning
	}
	outcome := stopTerminated
	if terminateGroup(ctx, rec.PID, bgStopGrace) {
		outcome = stopKilled
	}
	if p != nil {
		// What it started outside its group goes with it.
		tracker.KillMarked(p.marker)
		if !sessionLeaderGroupAlive(rec.PID) {
			tracker.Ended(rec.PID)
		}
		// The reaper records the end; after SIGKILL this is quick.
		select {
		case <-p.done:
		case <-time.After(time.Second):
		}
		return rec, state, outcome
	}
	// Another run's process: nobody reaps it here, so record the stop.
	now := time.Now().UTC()
	rec.State, rec.EndedAt = BgStopped, &now
	m.mu.Lock()
	m.save(rec)
	m.mu.Unlock()
	return rec, state, outcome
}

// leftovers reports whether an owned process whose shell exited still has
// live processes in its group.
func (m *Manager) leftovers(rec bgRecord) bool {
	m.mu.Lock()
	_, owned := m.owned[rec.ID]
	m.mu.Unlock()
	return owned && rec.State != BgRunning && sessionLeaderGroupAlive(rec.PID)
}

// StopAll stops every still-running process this Manager started (and
// what is left of their groups), all at once, and returns when they are
// gone. If ctx is done before the 2 s grace period ends, they are killed at
// once and ctx.Err() is returned. The CLI calls it on exit.
func (m *Manager) StopAll(ctx context.Context) error {
	m.mu.Lock()
	var recs []bgRecord
	for _, p := range m.owned {
		recs = append(recs, p.rec)
	}
	m.mu.Unlock()
	var wg sync.WaitGroup
	for _, rec := range recs {
		// stop is a no-op for a process that is gone with its group.
		wg.Go(func() { m.stop(ctx, rec) })
	}
	wg.Wait()
	return ctx.Err()
}
