package nsinit

import (
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// NetEnv, in the init's environment, asks it (the Go init only; the
// sandbox starts such commands through it) for --network rules: in the
// command's new network namespace it brings the loopback interface up,
// listens on 127.0.0.1:<port>, sends that listening socket to tiny-go
// over the socket at descriptor <fd>, and closes both before the
// command's exec. tiny-go serves its proxy on the socket, which stays in
// the command's namespace while tiny-go serves it from outside: the only
// way out of the namespace, without a process of tiny-go's inside.
//
//	TINY_GO_NSINIT_NET=<fd>:<port>
//
// It is not passed on to the command.
const NetEnv = "TINY_GO_NSINIT_NET"

// netListen does what NetEnv asks, if it is set.
func netListen() {
	v, ok := syscall.Getenv(NetEnv)
	if !ok {
		return
	}
	fdArg, portArg, _ := strings.Cut(v, ":")
	fd, err1 := strconv.Atoi(fdArg)
	port, err2 := strconv.Atoi(portArg)
	if err1 != nil || err2 != nil || fd < 3 || port <= 0 || port > 65535 {
		fail("bad "+NetEnv, syscall.EINVAL)
	}
	check("bringing up lo", loopbackUp())
	l, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	check("making the proxy's socket", err)
	check("binding the proxy's socket", unix.Bind(l, &unix.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}}))
	check("listening on the proxy's socket", unix.Listen(l, 128))
	check("handing the proxy's socket to tiny-go", unix.Sendmsg(fd, []byte{1}, unix.UnixRights(l), nil, 0))
	unix.Close(l)
	unix.Close(fd)
}

// loopbackUp sets the flag IFF_UP on lo (a new network namespace has it
// down), which gives it 127.0.0.1/8 and ::1.
func loopbackUp() error {
	s, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(s)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(s, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(s, unix.SIOCSIFFLAGS, ifr)
}
