package run

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"time"

	"github.com/failpass/failpass/internal/sandbox"
)

// Session runs the contained commands of one worktree through one
// sandbox helper (sandbox.Session) instead of a helper each: a gate's
// four commands pay for one helper start, not four. Each command still
// gets its own private /tmp, mounts, restrictions and log, and nothing it
// started outlives it. A Spec with Session and Sandbox set runs that way;
// on a machine without namespaces, or off Linux, each command gets a
// helper of its own as without a Session.
//
// The helper starts with the first command (or Start), and again after a
// timeout or a failed layer ended it. Commands run one at a time; Close
// ends the helper.
type Session struct {
	mu     sync.Mutex
	h      *sessionHelper
	closed bool
}

type sessionHelper struct {
	cmd *exec.Cmd
	s   *sandbox.Session
}

// NewSession returns a session with no helper running yet.
func NewSession() *Session { return &Session{} }

// Start starts the session's helper for commands contained by p, if none
// runs: a caller that knows commands are coming (the gate, while git
// checks out the worktree) lets the helper start meanwhile. A failure is
// left for the first command to report.
func (ss *Session) Start(p *sandbox.Policy) {
	if !sandbox.UsesHelper() {
		return
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.helper(p)
}

// Close ends the session's helper and waits for it. The session then
// runs no more commands (Run falls back to a helper per command).
func (ss *Session) Close() {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.closed = true
	ss.stop()
}

// helper returns the running helper, starting one when none runs. It
// returns nil and no error when commands cannot share a helper here.
func (ss *Session) helper(p *sandbox.Policy) (*sessionHelper, error) {
	if ss.closed {
		return nil, nil
	}
	if ss.h != nil && !ss.h.s.Broken() {
		return ss.h, nil
	}
	ss.stop()
	s, err := sandbox.NewSession(p)
	if err != nil || s == nil {
		return nil, err
	}
	cmd := exec.Command(s.Path)
	cmd.Args, cmd.Env, cmd.ExtraFiles = s.Args, s.Env, s.ExtraFiles
	cmd.Stderr = os.Stderr // the helper's own trouble only: each command's output goes to its log
	cmd.SysProcAttr = sysProcAttr()
	setNamespaces(cmd.SysProcAttr, &s.Launch)
	enableReaper()
	err = startRegistered(cmd)
	if err != nil {
		s.Started(0, err)
		s.Close()
		return nil, err
	}
	s.Started(cmd.Process.Pid, nil)
	ss.h = &sessionHelper{cmd: cmd, s: s}
	return ss.h, nil
}

// stop ends the running helper, if any: killing it ends its namespaces
// and everything in them.
func (ss *Session) stop() {
	h := ss.h
	if h == nil {
		return
	}
	ss.h = nil
	killGroup(h.cmd.Process.Pid)
	h.cmd.Wait()
	cleanUp(h.cmd)
	h.s.Close()
}

// run is Run for a Spec with a Session; ok is false when the session
// cannot serve it, and Run goes on as without one.
func (ss *Session) run(ctx context.Context, s Spec) (_ Result, ok bool, _ error) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	// The helper, when none runs yet, starts before Prepare's work, as
	// Run's own does: the two need nothing of each other.
	h, herr := ss.helper(s.Sandbox)
	if h == nil && herr == nil {
		return Result{}, false, nil
	}
	var sess *sandbox.Session
	if h != nil {
		sess = h.s
	}
	p, res, err := prepare(s, sess)
	if err != nil || res.StartErr != nil {
		return res, true, err
	}
	if herr != nil {
		return p.notStarted(ctx, res, herr), true, nil
	}
	tctx, cancel := context.WithTimeoutCause(ctx, p.timeout, errTimedOut)
	defer cancel()
	dctx, disk, err := p.watchDisk(tctx, s)
	if err != nil {
		return p.notStarted(ctx, res, err), true, nil
	}
	defer disk.end() // a no-op once the run's own end has run it
	out, w, err := os.Pipe()
	if err != nil {
		return p.notStarted(ctx, res, fmt.Errorf("run: output pipe: %w", err)), true, nil
	}
	defer out.Close()
	fds := []*os.File{w}
	var sout *os.File
	if s.Stdout > 0 {
		var sw *os.File
		if sout, sw, err = os.Pipe(); err != nil {
			w.Close()
			return p.notStarted(ctx, res, fmt.Errorf("run: stdout pipe: %w", err)), true, nil
		}
		fds = append(fds, sw)
	}
	start := time.Now()
	err = h.s.Send(p.sb.pr, sandbox.Command{Path: p.path, Argv: s.Argv, Dir: p.dir}, fds...)
	for _, f := range fds {
		f.Close()
	}
	if err != nil {
		if sout != nil {
			sout.Close()
		}
		ss.stop()
		return p.notStarted(ctx, res, err), true, nil
	}
	kept := keepStdout(sout, s.Stdout)
	drained := make(chan struct{})
	go func() {
		io.Copy(p.log, out) // log never fails a write, so this reads to EOF
		close(drained)
	}()
	// A timeout or cancel kills the helper, and with it the command and
	// everything in its namespaces; the next command starts a new one.
	pid := h.cmd.Process.Pid
	stop := context.AfterFunc(dctx, func() { killGroup(pid) })
	o, ferr := h.s.Wait(p.sb.pr)
	killed := !stop()
	res.Duration = time.Since(start)
	if killed || h.s.Broken() {
		ss.stop()
	}
	res.Disk = disk.end()
	out.SetReadDeadline(time.Now().Add(drainGrace))
	<-drained
	kept.wait(&res)
	// A report the helper sent stands, even when the kill landed right
	// after it: the command had ended by then.
	foldOutcome(&res, o)
	switch {
	case o.Known:
	case killed:
		res.Exit, res.Signal = -1, "killed"
		res.Canceled = ctx.Err() != nil
		res.TimedOut = !res.Canceled && res.Disk == nil
	default:
		res.StartErr = errors.New("sandbox: the helper ended without saying how the command did")
	}
	return res.withLog(p.log), true, ferr
}
