package headlesscmd

import (
	"errors"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// outputGone is closed when the reader of out, a pipe, closes its end (the
// SDK's process died): the kernel reports POLLERR on a pipe's write end
// that has no reader left, without anything having to be written. Nil
// when out is not a pipe (nothing to watch).
func outputGone(out io.Writer) <-chan struct{} {
	f, ok := out.(*os.File)
	if !ok {
		return nil
	}
	if fi, err := f.Stat(); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		return nil
	}
	gone := make(chan struct{})
	fd := int32(f.Fd())
	go func() {
		for {
			// Events 0: only POLLERR and POLLHUP, which are always reported.
			fds := []unix.PollFd{{Fd: fd}}
			_, err := unix.Poll(fds, -1)
			if errors.Is(err, unix.EINTR) {
				continue
			}
			if err != nil || fds[0].Revents&(unix.POLLERR|unix.POLLHUP|unix.POLLNVAL) != 0 {
				close(gone)
				return
			}
		}
	}()
	return gone
}
