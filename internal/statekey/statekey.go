// Package statekey authenticates what tiny-go keeps under .tiny-agent
// (transaction state, approvals, session integrity records) with a key
// only tiny-go holds, so that nothing there is trusted because it is
// there: a command, or any other program, that writes such a file cannot
// produce a valid record without the key.
//
// The key is 32 random bytes in $XDG_STATE_HOME/tiny-go/key (else
// ~/.local/state/tiny-go/key), mode 0600 in a 0700 directory, per user,
// created on first use atomically (a temporary file linked into place,
// so two first uses agree on one key). It lies outside the working
// directory and outside every root the sandbox lets commands write
// (docs/containment.md says what reads it).
package statekey

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/tiny-agent/tiny-go/internal/atomicfile"
)

// Size is the key's length in bytes.
const Size = 32

// EnvDir overrides where the key lives (tests, and users who keep state
// elsewhere); it must be an absolute path.
const EnvDir = "TINY_GO_KEY_DIR"

var (
	once   sync.Once
	key    []byte
	keyErr error
)

// Dir is the directory of the key.
func Dir() (string, error) {
	if d := os.Getenv(EnvDir); d != "" {
		if !filepath.IsAbs(d) {
			return "", fmt.Errorf("%s=%q is not an absolute path", EnvDir, d)
		}
		return d, nil
	}
	if d := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "tiny-go"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no home directory for tiny-go's key: %w", err)
	}
	return filepath.Join(home, ".local", "state", "tiny-go"), nil
}

// Key is this user's key, read (or created) once per process.
func Key() ([]byte, error) {
	once.Do(func() {
		dir, err := Dir()
		if err == nil {
			key, err = load(dir)
		}
		if err != nil {
			keyErr = fmt.Errorf("tiny-go's state key: %w", err)
		}
	})
	return key, keyErr
}

// load reads dir/key, creating it when missing.
func load(dir string) ([]byte, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "key")
	for range 3 {
		k, err := readKey(path)
		if !errors.Is(err, fs.ErrNotExist) {
			return k, err
		}
		if err := create(dir, path); err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
	}
	return readKey(path)
}

// keeperUID owns root's key (mode 0400): a command, which runs without
// any capability even as root, is then neither its owner nor able to
// override the mode, and cannot read it; tiny-go, root with
// CAP_DAC_OVERRIDE, reads it. Nobody else reaches it: its directory is
// root's, 0700. (An unprivileged user's commands run as that user, who
// owns the key: docs/containment.md says so.)
const keeperUID = 65534

// keep hands root's key to keeperUID, once; where that fails (a user
// namespace without that id) the key stays 0600 and root's.
func keep(path string, st *unix.Stat_t) {
	if runtime.GOOS != "linux" || os.Geteuid() != 0 || st.Uid != 0 {
		return
	}
	if os.Chmod(path, 0o400) != nil || os.Lchown(path, keeperUID, keeperUID) != nil {
		return
	}
	// A root without CAP_DAC_OVERRIDE (some containers) could not read
	// it back: give it back to root.
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		_ = os.Lchown(path, 0, 0)
		return
	}
	unix.Close(fd)
}

// readKey reads the key without following a symlink, and refuses one
// that others could read or write.
func readKey(path string) ([]byte, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.EACCES) && os.Geteuid() == 0 {
		return nil, fmt.Errorf("%s is kept by uid %d, which this root cannot read (a user namespace that does not map it, or no CAP_DAC_OVERRIDE): set %s to a folder of its own", path, keeperUID, EnvDir)
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, err
	}
	owned := int(st.Uid) == os.Geteuid() || (os.Geteuid() == 0 && st.Uid == keeperUID)
	if st.Mode&unix.S_IFMT != unix.S_IFREG || st.Mode&0o077 != 0 || !owned {
		return nil, fmt.Errorf("%s is not a file of mode 0600 owned by this user: refusing it (remove it and tiny-go makes a new one; records sealed with the old one are then unverified)", path)
	}
	buf := make([]byte, Size+1)
	n, _ := f.Read(buf)
	if n != Size {
		return nil, fmt.Errorf("%s holds %d bytes, not %d", path, n, Size)
	}
	keep(path, &st)
	return buf[:Size], nil
}

// create writes a new key beside path and links it into place: the link
// fails when another process was first, and a reader never sees half a
// key.
func create(dir, path string) error {
	k := make([]byte, Size)
	if _, err := rand.Read(k); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".key-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(k); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Link(tmp.Name(), path)
}

// Sum is the HMAC-SHA256 of parts under purpose (each part length-prefixed,
// so no two different lists of parts share a sum).
func Sum(purpose string, parts ...[]byte) ([]byte, error) {
	k, err := Key()
	if err != nil {
		return nil, err
	}
	m := hmac.New(sha256.New, k)
	var n [8]byte
	for _, p := range append([][]byte{[]byte(purpose)}, parts...) {
		binary.BigEndian.PutUint64(n[:], uint64(len(p)))
		m.Write(n[:])
		m.Write(p)
	}
	return m.Sum(nil), nil
}

// Hex is Sum in hexadecimal.
func Hex(purpose string, parts ...[]byte) (string, error) {
	s, err := Sum(purpose, parts...)
	return hex.EncodeToString(s), err
}

// Check reports whether mac (hexadecimal) is Sum of parts under purpose.
func Check(mac, purpose string, parts ...[]byte) (bool, error) {
	want, err := Sum(purpose, parts...)
	if err != nil {
		return false, err
	}
	got, err := hex.DecodeString(mac)
	return err == nil && hmac.Equal(got, want), nil
}

// sealTag starts a sealed file: the tag, the MAC in hexadecimal, a newline,
// then the data.
const sealTag = "tiny-go-sealed-1 "

// ErrUnsealed is a file without a seal (forged, or from before keys).
var ErrUnsealed = errors.New("carries no seal of tiny-go's key")

// ErrForged is a file whose seal is not tiny-go's for this content.
var ErrForged = errors.New("its seal does not match (not written by tiny-go, or changed since)")

// Seal is data with its MAC under purpose in front.
func Seal(purpose string, data []byte) ([]byte, error) {
	mac, err := Hex(purpose, data)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(sealTag)+len(mac)+1+len(data))
	out = append(append(append(out, sealTag...), mac...), '\n')
	return append(out, data...), nil
}

// Open is the data of a Seal, checked: ErrUnsealed or ErrForged when it is
// not what tiny-go sealed under purpose.
func Open(purpose string, sealed []byte) ([]byte, error) {
	rest, ok := bytes.CutPrefix(sealed, []byte(sealTag))
	if !ok {
		return nil, ErrUnsealed
	}
	mac, data, ok := bytes.Cut(rest, []byte("\n"))
	if !ok {
		return nil, ErrForged
	}
	good, err := Check(string(mac), purpose, data)
	if err != nil {
		return nil, err
	}
	if !good {
		return nil, ErrForged
	}
	return data, nil
}

// Mark records, beside the key, that tiny-go sealed the thing called name
// of kind (a session's integrity records), with what it last sealed
// (content): its records can then not be taken away, cut back or
// replaced by unsealed ones unnoticed. name is one file name.
func Mark(kind, name string, content []byte) error {
	p, err := markPath(kind, name)
	if err != nil {
		return err
	}
	if old, err := os.ReadFile(p); err == nil && bytes.Equal(old, content) {
		return nil
	}
	return atomicfile.Write(p, content, atomicfile.Options{Perm: 0o600, DirPerm: 0o700})
}

// Marked returns what Mark(kind, name) last recorded, whether there is a
// mark, and where it lies.
func Marked(kind, name string) (content []byte, ok bool, path string) {
	p, err := markPath(kind, name)
	if err != nil {
		return nil, false, ""
	}
	content, err = os.ReadFile(p)
	return content, err == nil, p
}

func markPath(kind, name string) (string, error) {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\x00") {
		return "", fmt.Errorf("bad mark name %q", name)
	}
	dir, err := Dir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, kind, name), nil
}
