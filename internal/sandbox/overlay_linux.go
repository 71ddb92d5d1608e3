package sandbox

import (
	"errors"
	"os/exec"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/tiny-agent/tiny-go/internal/overlay"
	"github.com/tiny-agent/tiny-go/internal/sandbox/nsinit"
)

// Overlay is a command's private view of its working directory: Lower
// (the tree) under Upper, where everything the command writes lands
// (package overlay reads and applies it).
type Overlay struct {
	Lower, Upper, Work string
}

// OverlayRefusal says why commands cannot run over an overlay here; nil
// when they can (as far as namespaces go: the kernel and the file system
// have the last word, which a probe asks).
func (s *Sandbox) OverlayRefusal() error {
	switch {
	case s == nil || s.mode == Off:
		return errors.New("the sandbox is off (--sandbox off)")
	case s.spawner == nil:
		return errors.New("this kernel has no Landlock, so commands start without namespaces")
	case s.spawner.cont == nil || !s.spawner.cont.ns:
		reason := "namespaces are unavailable"
		if s.spawner.cont != nil && s.spawner.cont.lostReason != "" {
			reason = "no namespaces for commands: " + s.spawner.cont.lostReason
		}
		return errors.New(reason)
	}
	return nil
}

// StartOverlay is Start with ov mounted over ov.Lower in the command's
// mount namespace, before it is confined, by the init (the static one
// where there is one). An init that cannot mount exits with
// nsinit.ExitSetup and one line on standard error; the command then never
// ran.
func (s *Sandbox) StartOverlay(cmd *exec.Cmd, ov Overlay) error {
	if err := s.OverlayRefusal(); err != nil {
		return err
	}
	c := s.spawner.cont
	opts, err := overlay.Options(ov.Lower, ov.Upper, ov.Work, c.userNS)
	if err != nil {
		return err
	}
	// Landlock's rule for the working directory does not reach through
	// the overlay mounted over it (a rule is held by the inode it was
	// made on, and the overlay's root is another one): the init adds the
	// overlay's root to a ruleset of this command's own, after mounting,
	// when the tree is writable at all (not in read-only mode).
	rs, err := c.newRuleset()
	if err != nil {
		return err
	}
	defer rs.Close()
	var rights uint64
	if underAny(resolveExisting(ov.Lower), s.roots) {
		rights = c.fsMask
	}
	form := nsinit.OverlayForm + strconv.FormatUint(rights, 10)
	start := func() error {
		// ov.Work: the init makes its work/work, which the kernel makes
		// with mode 000 at each mount, 0700 (nsinit.OverlayForm).
		if err := c.wrapInit(cmd, rs, form, ov.Lower, opts, ov.Work); err != nil {
			return err
		}
		if c.userNS {
			// The kernel makes work/work with mode 000 and then works in
			// it with the mounter's credentials (measured: CAP_SYS_ADMIN
			// alone gets EACCES). The init clears it before the
			// command's exec.
			cmd.SysProcAttr.AmbientCaps = append(cmd.SysProcAttr.AmbientCaps, unix.CAP_DAC_OVERRIDE)
		}
		return s.spawner.launcher.do(spawnRequest{cmd: cmd})
	}
	if s.net != nil {
		return s.net.start(cmd, start)
	}
	return start()
}
