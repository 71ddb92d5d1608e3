package sandbox

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tiny-agent/tiny-go/internal/fdpass"
	"github.com/tiny-agent/tiny-go/internal/netproxy"
	"github.com/tiny-agent/tiny-go/internal/sandbox/nsinit"
)

// ProxyPort is where a command's proxy listens in its network namespace
// (127.0.0.1): a fresh namespace, so the port is always free.
const ProxyPort = 3128

// netRules is --network rules in force. Each command starts in a network
// namespace of its own (besides its PID and mount ones), whose only
// interface is lo. The Go init listens on 127.0.0.1:ProxyPort there and
// hands the listening socket to tiny-go over a socket pair before the
// command's exec (nsinit.NetEnv); tiny-go serves the proxy on it from
// outside. A socket belongs to the namespace it was made in, so the
// command reaches the proxy on its own loopback while the proxy's own
// connections leave from tiny-go's namespace; no process of tiny-go's
// runs inside, the same way as root and as any user (the init has
// CAP_NET_ADMIN in the user namespace that owns the network namespace).
// Everything else the command tries finds no route.
type netRules struct {
	proxy *netproxy.Proxy
	mu    sync.Mutex
	cmds  map[*exec.Cmd]*netCmd
}

// netCmd is one command's proxy session, ended when the command's
// namespace ends.
type netCmd struct {
	session *netproxy.Session
	done    chan struct{}
}

// setUpRules checks that commands can start in network namespaces of
// their own here, by starting `/bin/sh -c :` so; the error says why not.
func (s *Sandbox) setUpRules(p *netproxy.Proxy) (*netRules, error) {
	if !s.Namespaced() {
		reason := "commands cannot start in namespaces here"
		if c := s.spawner.cont; c != nil && c.lostReason != "" {
			reason = "no namespaces for commands (" + c.lostReason + ")"
		}
		return nil, errors.New(reason)
	}
	n := &netRules{proxy: p, cmds: map[*exec.Cmd]*netCmd{}}
	cmd := exec.Command("/bin/sh", "-c", ":")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := n.start(cmd, func() error { return s.spawner.start(cmd) }); err != nil {
		return nil, fmt.Errorf("network namespaces refused: %w", err)
	}
	err := cmd.Wait()
	n.Refusals(cmd)
	if err != nil {
		line := strings.TrimPrefix(strings.TrimSpace(stderr.String()), "tiny-go: namespace init: ")
		return nil, fmt.Errorf("network namespaces refused: %s", cmp(line, err.Error()))
	}
	return n, nil
}

func cmp(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// ProxyEnv is what a command under --network rules finds in its
// environment: the proxy for every scheme, and none for its own loopback.
func ProxyEnv(port int) []string {
	u := "http://127.0.0.1:" + strconv.Itoa(port)
	no := "localhost,127.0.0.1,::1"
	return []string{"HTTP_PROXY=" + u, "HTTPS_PROXY=" + u, "ALL_PROXY=" + u, "NO_PROXY=" + no,
		"http_proxy=" + u, "https_proxy=" + u, "all_proxy=" + u, "no_proxy=" + no}
}

// start starts cmd with launch, which wraps it for the init, in a network
// namespace of its own, and serves its proxy until the command ends.
func (n *netRules) start(cmd *exec.Cmd, launch func() error) error {
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("sandbox: socket pair for the proxy: %w", err)
	}
	ours, theirs := os.NewFile(uintptr(pair[0]), "proxy-socket"), os.NewFile(uintptr(pair[1]), "proxy-socket")
	defer ours.Close()
	cmd.ExtraFiles = append(cmd.ExtraFiles, theirs)
	fd := 2 + len(cmd.ExtraFiles)
	env := cmd.Env
	if env == nil {
		env = os.Environ()
	}
	cmd.Env = append(append(withoutProxyEnv(env), ProxyEnv(ProxyPort)...), fmt.Sprintf("%s=%d:%d", nsinit.NetEnv, fd, ProxyPort))
	err = launch()
	theirs.Close()
	if err != nil {
		return err
	}
	l, err := receiveListener(ours)
	if err != nil {
		// The init failed before handing it over: it says why on the
		// command's standard error and exits with nsinit.ExitSetup.
		return nil
	}
	c := &netCmd{session: n.proxy.Serve(l), done: make(chan struct{})}
	n.mu.Lock()
	n.cmds[cmd] = c
	n.mu.Unlock()
	// Opened before Start returns: the caller has not reaped the command
	// yet, so the pid cannot name another process.
	pfd, err := unix.PidfdOpen(cmd.Process.Pid, 0)
	if err != nil {
		// A kernel before 5.3: the session lasts until Refusals.
		close(c.done)
		return nil
	}
	go func() {
		c.endWith(pfd)
		// A command whose caller never asks (a probe, a hook, an MCP
		// server) leaves nothing behind unless something was refused.
		if len(c.session.Refusals()) == 0 {
			n.mu.Lock()
			delete(n.cmds, cmd)
			n.mu.Unlock()
		}
	}()
	return nil
}

// receiveListener takes the listening socket the init sends; an error
// when the init ended without sending it.
func receiveListener(f *os.File) (net.Listener, error) {
	lf, err := fdpass.Receive(f, "proxy-listener")
	if err != nil {
		return nil, err
	}
	defer lf.Close()
	return net.FileListener(lf)
}

// endWith ends the session when the process of pidfd pfd, PID 1 of the
// command's namespace, has exited: everything in the namespace dies with
// it.
func (c *netCmd) endWith(pfd int) {
	defer close(c.done)
	defer c.session.Close()
	defer unix.Close(pfd)
	for {
		_, err := unix.Poll([]unix.PollFd{{Fd: int32(pfd), Events: unix.POLLIN}}, -1)
		if err != unix.EINTR {
			return
		}
	}
}

// withoutProxyEnv drops the proxy variables the command would otherwise
// inherit.
func withoutProxyEnv(env []string) []string {
	out := make([]string, 0, len(env)+9)
	for _, e := range env {
		name, _, _ := strings.Cut(e, "=")
		switch strings.ToUpper(name) {
		case "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "FTP_PROXY", nsinit.NetEnv:
			continue
		}
		out = append(out, e)
	}
	return out
}

// Refusals are the lines of the connections the proxy refused to cmd, a
// command started by Start or StartOverlay that has ended (after Wait);
// nil when --network rules is not in force.
func (n *netRules) Refusals(cmd *exec.Cmd) []string {
	n.mu.Lock()
	c := n.cmds[cmd]
	delete(n.cmds, cmd)
	n.mu.Unlock()
	if c == nil {
		return nil
	}
	select {
	case <-c.done:
	case <-time.After(2 * time.Second):
	}
	c.session.Close() // its namespace is gone once Wait returned
	return c.session.Refusals()
}

// hasEnv reports whether env sets name.
func hasEnv(env []string, name string) bool {
	for _, e := range env {
		if strings.HasPrefix(e, name+"=") {
			return true
		}
	}
	return false
}
