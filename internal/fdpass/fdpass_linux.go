package fdpass

import (
	"errors"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// ErrNothing is a sender that ended (or sent no descriptor) without
// handing one over.
var ErrNothing = errors.New("no descriptor was handed over")

// Receive receives one descriptor sent over sock with one byte of data,
// close-on-exec, named name; a sender that hangs does not hold the caller
// more than 30 seconds.
func Receive(sock *os.File, name string) (*os.File, error) {
	tv := unix.NsecToTimeval((30 * time.Second).Nanoseconds())
	unix.SetsockoptTimeval(int(sock.Fd()), unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
	buf, oob := make([]byte, 1), make([]byte, unix.CmsgSpace(4))
	_, oobn, _, _, err := unix.Recvmsg(int(sock.Fd()), buf, oob, unix.MSG_CMSG_CLOEXEC)
	if err != nil {
		return nil, err
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		return nil, ErrNothing
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 1 {
		for _, fd := range fds {
			unix.Close(fd)
		}
		return nil, ErrNothing
	}
	return os.NewFile(uintptr(fds[0]), name), nil
}
