package run

import (
	"os"
	"os/exec"

	"github.com/failpass/failpass/internal/sandbox"
)

// Containment. With Spec.Sandbox set, Run (and Capture) still resolve
// argv[0], own the process group, the timeout and the log, but the
// process they start is the sandbox helper (a re-exec of failpass), which
// applies the layers and starts the command as its child, passing on its
// stdin, stdout and stderr. The helper's report replaces the exit status
// read from the helper, because PID 1 of a namespace cannot die by its
// command's signal; a layer that failed closed is a StartErr, so the run
// is inconclusive. Every method is a no-op on a nil *sandboxRun, so the
// uncontained path reads the same.

// sandboxRun is one command's sandbox, from Prepare to Finish.
type sandboxRun struct{ pr *sandbox.Prepared }

// prepareSandbox sets up s.Sandbox (or s.View) for one command and returns the
// environment the command gets inside it; argv[0] must be resolved
// against that environment's PATH, never the tool's.
func prepareSandbox(s Spec, env []string, sess *sandbox.Session) (*sandboxRun, []string, error) {
	var pr *sandbox.Prepared
	var err error
	switch {
	case s.Sandbox == nil:
		pr, err = s.View.Prepare(s.Root, env)
	default:
		// The run's cap on files holds in its private /tmp too, a tmpfs
		// of that many inodes where a mount namespace exists.
		p := *s.Sandbox
		p.Limits.TmpFiles = s.Disk.withDefaults().Files
		if sess != nil {
			pr, err = sess.Prepare(&p, s.Root, env)
		} else {
			pr, err = p.Prepare(s.Root, env)
		}
	}
	if err != nil {
		return nil, nil, err
	}
	return &sandboxRun{pr: pr}, pr.Env, nil
}

// wrap turns cmd, set up to run the program at path in dir, into the
// helper invocation that runs it contained. A failure is left in cmd.Err,
// so Start reports it and the run is "not started".
func (sb *sandboxRun) wrap(cmd *exec.Cmd, path, dir string) {
	if sb == nil {
		return
	}
	l, err := sb.pr.Launch(sandbox.Command{Path: path, Argv: cmd.Args, Dir: dir})
	if err != nil {
		cmd.Err = err
		return
	}
	if l == nil {
		return // no helper on this system: the command runs as it is, with the sandbox's environment
	}
	cmd.Path, cmd.Args, cmd.Env = l.Path, l.Args, l.Env
	cmd.ExtraFiles = l.ExtraFiles
	cmd.Err = nil
	setNamespaces(cmd.SysProcAttr, l)
}

// finish folds the helper's report into res, removes the sandbox's
// cgroups and private folders, and checks the repository's git
// configuration (a change is a *sandbox.IntegrityError).
func (sb *sandboxRun) finish(res *Result) error {
	if sb == nil {
		return nil
	}
	o, err := sb.pr.Finish()
	foldOutcome(res, o)
	return err
}

// foldOutcome puts the helper's report, when it gave one, in res.
func foldOutcome(res *Result, o sandbox.Outcome) {
	res.Cache = o.Cache
	if !o.Known {
		return
	}
	switch {
	case !o.Started:
		res.Exit, res.StartErr = -1, o.StartErr
	case o.Signal != "":
		res.Exit, res.Signal = -1, o.Signal
	default:
		res.Exit, res.Signal = o.Exit, ""
	}
}

// diskAreas are the sandbox's private folders on disk, which count
// towards the run's disk cap.
func (sb *sandboxRun) diskAreas() []string {
	if sb == nil {
		return nil
	}
	return sb.pr.DiskAreas()
}

// started tells the sandbox the helper's pid.
func (sb *sandboxRun) started(pid int) {
	if sb != nil {
		sb.pr.Started(pid)
	}
}

// close releases the sandbox of a command that never started.
func (sb *sandboxRun) close() {
	if sb != nil {
		sb.pr.Close()
	}
}

// helper is a sandbox helper Run started before the command was set up;
// it waits for its configuration (sandbox.Helper).
type helper struct {
	cmd  *exec.Cmd
	out  *os.File // the read end of its stdout and stderr (stderr alone with a split stdout)
	sout *os.File // the read end of its stdout when split, else nil
	h    *sandbox.Helper
}

// startHelper starts a helper in its own process group, registered as a
// running command so reap leaves it be. With split, the command's stdout
// gets a pipe of its own (helper.sout).
func startHelper(split bool) (*helper, error) {
	h, err := sandbox.NewHelper()
	if err != nil {
		return nil, err
	}
	out, w, err := os.Pipe()
	if err != nil {
		h.Started(nil)
		h.Discard()
		return nil, err
	}
	var sout, sw *os.File
	if split {
		if sout, sw, err = os.Pipe(); err != nil {
			out.Close()
			w.Close()
			h.Started(nil)
			h.Discard()
			return nil, err
		}
	}
	cmd := exec.Command(h.Path)
	cmd.Args, cmd.Env, cmd.ExtraFiles = h.Args, h.Env, h.ExtraFiles
	cmd.Stdout, cmd.Stderr = w, w
	if sw != nil {
		cmd.Stdout = sw
	}
	cmd.SysProcAttr = sysProcAttr()
	setNamespaces(cmd.SysProcAttr, &h.Launch)
	enableReaper()
	err = startRegistered(cmd)
	w.Close()
	if sw != nil {
		sw.Close()
	}
	h.Started(err)
	if err != nil {
		out.Close()
		if sout != nil {
			sout.Close()
		}
		h.Discard()
		return nil, err
	}
	return &helper{cmd: cmd, out: out, sout: sout, h: h}, nil
}

// hand gives the command to h.
func (sb *sandboxRun) hand(h *helper, path string, argv []string, dir string) error {
	return sb.pr.Hand(h.h, h.cmd.Process.Pid, sandbox.Command{Path: path, Argv: argv, Dir: dir})
}

// discard ends a helper that was never handed its command: it reads the
// end of its configuration and exits; anything left of its group is
// killed. Nil does nothing.
func (h *helper) discard() {
	if h == nil {
		return
	}
	h.h.Discard()
	killGroup(h.cmd.Process.Pid)
	h.cmd.Wait()
	cleanUp(h.cmd)
	h.out.Close()
	if h.sout != nil {
		h.sout.Close()
	}
}
