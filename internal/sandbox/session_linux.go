package sandbox

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// Sessions: one helper, many commands.
//
// Starting the helper (a Go program re-executed in fresh namespaces) is
// most of what the sandbox costs a command, and a gate runs four commands
// in the same worktree, one after the other. A session helper starts
// once, applies the layers that belong to its process once (PID 1 of its
// namespaces, /proc, the loopback, rlimits, cgroups), and then serves the
// commands it is sent over its control socket, one at a time. Each
// command still gets a sandbox of its own:
//
//   - a fresh thread, which unshares a mount and an IPC namespace of its
//     own, mounts the private /tmp, the read-only git folders and the
//     masked config there, restricts itself (Landlock, no_new_privs, no
//     capabilities) and forks the command; the thread, restricted, then
//     ends, and the helper itself is never restricted by a command's
//     rules nor sees its mounts;
//   - when the command's main process ends, the helper kills every other
//     process in its PID namespace and reaps them before it reports, so
//     nothing a command started outlives it into the next one.
//
// A session needs the namespaces: without a PID namespace of its own
// the helper could not end what a command left behind (NewSession then
// returns nil, and each command gets a helper of its own).
//
// The protocol is frames on a Unix stream socket: a 4-byte big-endian
// length and that many bytes of JSON. The tool sends a command's
// helperConfig with the command's output descriptor attached
// (SCM_RIGHTS); the helper answers with the command's status. A closed
// socket ends the helper.

// sessionArg is the helper's argument for session mode.
const sessionArg = "session"

// controlFD is a session helper's control socket (the caller's
// ExtraFiles[0]).
const controlFD = 3

// maxStatus bounds a status frame.
const maxStatus = 1 << 20

// Session is one helper serving the contained commands of one worktree
// in turn. Its methods are not safe for concurrent use: a session runs
// one command at a time.
type Session struct {
	Launch // how to start the helper; ExtraFiles[0] is its control socket

	caps    *caps
	ctl     *os.File // the tool's end of the control socket
	cgroups []*cgroup
	broken  bool
	closed  bool
}

// NewSession makes a session's control socket and cgroups (with p's
// limits) and says how to start its helper. It returns nil and no error
// when this machine runs contained commands without namespaces: then
// each command needs a helper of its own.
func NewSession(p *Policy) (*Session, error) {
	c := probe()
	if c.noHelper != nil {
		return nil, &Error{Step: "helper", Err: "this program cannot run the sandbox helper: " + c.noHelper.Error()}
	}
	if !c.namespaces {
		return nil, nil
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("sandbox: control socket: %w", err)
	}
	s := &Session{Launch: *c.launch(), caps: c, ctl: os.NewFile(uintptr(fds[0]), "failpass-session")}
	s.Args = []string{helperArgv0, HelperArg, sessionArg}
	s.ExtraFiles = []*os.File{os.NewFile(uintptr(fds[1]), "failpass-session-helper")}
	if s.cgroups, err = newCgroups(c, p.Limits.withDefaults()); err != nil {
		s.ctl.Close()
		s.ExtraFiles[0].Close()
		return nil, err
	}
	return s, nil
}

// Started closes the helper's end of the control socket in the tool and
// moves the helper, started as pid, into the session's cgroups while it
// starts up (see Prepared.Started). err says starting it failed: the
// probe may be stale, and the session is broken.
func (s *Session) Started(pid int, err error) {
	s.ExtraFiles[0].Close()
	if err != nil {
		forgetProbe()
		s.broken = true
		return
	}
	for _, cg := range s.cgroups {
		os.WriteFile(filepath.Join(cg.dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0)
	}
}

// Prepare sets up the sandbox for one command of the session in the
// worktree root, as Policy.Prepare does, less the cgroups: the session's
// hold every command.
func (s *Session) Prepare(p *Policy, root string, base []string) (*Prepared, error) {
	if p.PrepareCmd {
		// The session's helper lives in a network namespace.
		return nil, errors.New("sandbox: the prepare command needs a helper of its own, outside a network namespace")
	}
	return p.prepare(root, base, false)
}

// Send gives the helper pr's command c, its stdout and stderr going to
// out[0]; with a second file, its stdout goes there instead (a run that
// keeps its standard output apart from the log). Wait then says how it
// ended.
func (s *Session) Send(pr *Prepared, c Command, out ...*os.File) error {
	if len(out) != 1 && len(out) != 2 {
		return errors.New("sandbox: a command takes one or two output files")
	}
	if pr.launched {
		return errors.New("sandbox: command handed out twice")
	}
	if s.broken || s.closed {
		return errors.New("sandbox: the session's helper has ended")
	}
	cfg := pr.helperConfig(c)
	cfg.Cgroups = nil
	for _, cg := range s.cgroups {
		cfg.Cgroups = append(cfg.Cgroups, cg.dir)
	}
	js, err := json.Marshal(cfg)
	if err != nil {
		return err
	}
	pr.launched = true
	fds := []int{int(out[0].Fd())}
	if len(out) == 2 {
		fds = append(fds, int(out[1].Fd()))
	}
	if err := writeFrame(int(s.ctl.Fd()), js, unix.UnixRights(fds...)); err != nil {
		s.broken = true
		return fmt.Errorf("sandbox: command to the session's helper: %w", err)
	}
	return nil
}

// Wait reads how the command Send gave the helper ended, then finishes
// pr as Prepared.Finish does. When the helper ended without a word (it
// was killed: a timeout), the Outcome is not Known and the session is
// broken; so it is when a layer failed.
func (s *Session) Wait(pr *Prepared) (Outcome, error) {
	b, _, err := readFrame(int(s.ctl.Fd()), maxStatus, false)
	var st *status
	if err == nil {
		var x status
		if json.Unmarshal(b, &x) == nil {
			st = &x
		}
	}
	if st == nil || (st.Err != "" && st.Step != "exec") {
		s.broken = true
	}
	return pr.finish(st)
}

// Broken says the session's helper has ended or must not be trusted with
// another command: start a new session.
func (s *Session) Broken() bool { return s.broken }

// Close ends the session: the helper reads the end of its control socket
// and exits, and whatever is left in the session's cgroups is killed and
// the cgroups removed. The caller then waits for the helper process.
func (s *Session) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	s.ctl.Close()
	var first error
	for _, cg := range s.cgroups {
		if err := cg.remove(); err != nil && first == nil {
			first = fmt.Errorf("sandbox: remove cgroup: %w", err)
		}
	}
	return first
}

// mainSession is the session helper: it serves commands from its
// control socket until the tool closes it.
func mainSession() int {
	syscall.CloseOnExec(controlFD)
	// The commands run as the helper's user. Not dumpable, the helper's
	// memory and descriptors are out of their reach through /proc and
	// ptrace even where Landlock is missing.
	unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	var current atomic.Int64 // the running command's pid, 0 between commands
	go func() {
		sigs := make(chan os.Signal, 8)
		signal.Notify(sigs, forwarded...)
		for sig := range sigs {
			if pid := current.Load(); pid > 0 {
				syscall.Kill(int(pid), sig.(syscall.Signal))
			}
		}
	}()
	ready := false
	for {
		raw, outs, err := readFrame(controlFD, maxConfig, true)
		if errors.Is(err, io.EOF) {
			return 0
		}
		var cfg helperConfig
		if err == nil {
			err = json.Unmarshal(raw, &cfg)
		}
		if err == nil && !cfg.Namespaces {
			err = errors.New("a session needs the namespaces")
		}
		if err != nil {
			writeFrame(controlFD, status{Step: "config", Err: err.Error()}.marshal(), nil)
			return exitSandboxFailed
		}
		h := &helper{cfg: cfg, why: map[Feature]string{}}
		stdout, out := -1, -1
		if len(outs) > 0 {
			out, stdout = outs[0], outs[0]
		}
		if len(outs) == 2 {
			stdout = outs[1]
		}
		st, fatal := h.serve(&ready, stdout, out, &current)
		for _, fd := range outs {
			unix.Close(fd)
		}
		if err := writeFrame(controlFD, st.marshal(), nil); err != nil || fatal {
			return exitSandboxFailed
		}
	}
}

// serve runs one command of a session: the process's layers the first
// time, then the command on a fresh thread with its own mount and IPC
// namespaces and restrictions. It returns the command's status, and
// whether the helper must stop (a layer failed: it cannot promise the
// next command more).
func (h *helper) serve(ready *bool, stdout, out int, current *atomic.Int64) (status, bool) {
	c := h.cfg
	logf := func(format string, a ...any) { unix.Write(out, fmt.Appendf(nil, format, a...)) }
	if !*ready {
		if err := h.applyProcess(); err != nil {
			logf("failpass: %v\n", err)
			return status{Step: err.Step, Err: err.Err}, true
		}
		*ready = true
	}
	type forked struct {
		pid     int
		err     *Error
		execErr error
	}
	ch := make(chan forked, 1)
	go func() {
		// Never unlocked: the thread, restricted and in the command's
		// namespaces, ends with this goroutine.
		runtime.LockOSThread()
		if err := unix.Unshare(unix.CLONE_NEWNS | unix.CLONE_NEWIPC); err != nil {
			ch <- forked{err: &Error{Step: "mount and IPC namespaces of the command", Err: err.Error()}}
			return
		}
		if err := h.applyFiles(); err != nil {
			ch <- forked{err: err}
			return
		}
		if err := h.applyThread(); err != nil {
			ch <- forked{err: err}
			return
		}
		pid, err := syscall.ForkExec(c.Path, c.Argv, &syscall.ProcAttr{
			Dir: c.Dir, Env: c.Env, Files: []uintptr{0, uintptr(stdout), uintptr(out)},
		})
		ch <- forked{pid: pid, execErr: err}
	}()
	f := <-ch
	switch {
	case f.err != nil:
		logf("failpass: %v\n", f.err)
		return status{Step: f.err.Step, Err: f.err.Err}, true
	case f.execErr != nil:
		st := execFailed(c.Argv[0], f.execErr)
		logf("failpass: not started: %s\n", st.Err)
		return st, false
	}
	current.Store(int64(f.pid))
	st, _ := waitFor(f.pid)
	st.Cache = h.cache
	current.Store(0)
	endLeftovers()
	return st, st.Err != ""
}

// endLeftovers kills every process left in the helper's PID namespace
// and reaps them all. Only PID 1 of a namespace may do this: kill(-1)
// anywhere else reaches every process the user owns.
func endLeftovers() {
	if os.Getpid() != 1 {
		return
	}
	syscall.Kill(-1, syscall.SIGKILL)
	for {
		_, err := syscall.Wait4(-1, nil, 0, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return // ECHILD: nothing is left
		}
	}
}

// writeFrame writes b as one frame on the socket fd, with rights (a
// control message, or nil) attached to its header. A peer that is gone
// is an EPIPE error, never a SIGPIPE.
func writeFrame(fd int, b []byte, rights []byte) error {
	var hdr [4]byte
	binary.BigEndian.PutUint32(hdr[:], uint32(len(b)))
	msg := append(hdr[:], b...)
	for len(msg) > 0 {
		n, err := unix.SendmsgN(fd, msg, rights, nil, unix.MSG_NOSIGNAL)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		msg, rights = msg[n:], nil // the descriptors went with the first bytes
	}
	return nil
}

// readFrame reads one frame of at most max bytes from the socket fd.
// With wantFD, the frame must carry one or two descriptors (the
// command's output, then its separate stdout), returned close-on-exec;
// otherwise it must carry none. A closed socket before a frame is
// io.EOF.
func readFrame(fd int, max int, wantFD bool) ([]byte, []int, error) {
	var hdr [4]byte
	oob := make([]byte, unix.CmsgSpace(4*4))
	var n, oobn int
	var err error
	for {
		n, oobn, _, _, err = unix.Recvmsg(fd, hdr[:], oob, unix.MSG_CMSG_CLOEXEC)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return nil, nil, err
	}
	if n == 0 {
		return nil, nil, io.EOF
	}
	var fds []int
	if oobn > 0 {
		msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
		if err != nil {
			return nil, nil, err
		}
		for _, m := range msgs {
			got, err := unix.ParseUnixRights(&m)
			if err != nil {
				return nil, nil, err
			}
			fds = append(fds, got...)
		}
	}
	closeAll := func() {
		for _, f := range fds {
			unix.Close(f)
		}
	}
	if (wantFD && len(fds) != 1 && len(fds) != 2) || (!wantFD && len(fds) != 0) {
		closeAll()
		return nil, nil, fmt.Errorf("frame carries %d descriptors", len(fds))
	}
	if err := readFull(fd, hdr[n:]); err != nil {
		closeAll()
		return nil, nil, err
	}
	size := binary.BigEndian.Uint32(hdr[:])
	if size > uint32(max) {
		closeAll()
		return nil, nil, fmt.Errorf("frame of %d bytes (at most %d)", size, max)
	}
	b := make([]byte, size)
	if err := readFull(fd, b); err != nil {
		closeAll()
		return nil, nil, err
	}
	if !wantFD {
		return b, nil, nil
	}
	return b, fds, nil
}

func readFull(fd int, b []byte) error {
	for len(b) > 0 {
		n, err := unix.Read(fd, b)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		if n == 0 {
			return io.ErrUnexpectedEOF
		}
		b = b[n:]
	}
	return nil
}
