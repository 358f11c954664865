// Package run owns running one command: argv without a shell, a workdir
// confined to a tree, a timeout, its own process group and a bounded log.
package run

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/failpass/failpass/internal/sandbox"
)

// DefaultMaxLog is the log cap when Spec.MaxLog is 0: enough for a test
// run's failure output, small enough that a flood cannot fill the disk.
const DefaultMaxLog = 1 << 20

// DefaultTimeout is the per-command limit when Spec.Timeout is 0 (the
// card's documented default).
const DefaultTimeout = 10 * time.Minute

// drainGrace is how long Run keeps reading the output pipe after the
// command's process group was killed. Only a descendant Run could not
// find (see reap_linux.go) can hold the pipe that long. A variable only
// so tests can make it long: a run that leaned on it would then take
// unmistakably long, and the bound they check can allow for a loaded
// machine.
var drainGrace = 2 * time.Second

// waitDelay bounds Wait after a cancel: if the leader survives SIGKILL of
// its group for this long (it cannot, short of a kernel hang), Wait gives up.
const waitDelay = 5 * time.Second

// Spec is one command to run. The sandbox extends it with fields of its
// own; the zero value of every field is a safe default.
type Spec struct {
	Argv    []string
	Root    string          // absolute; the tree the command is confined to
	Workdir string          // relative to Root ("." default)
	Env     []string        // full environment (KEY=VALUE); nil means MinimalEnv(os.Getenv)
	Timeout time.Duration   // 0 means DefaultTimeout (10m)
	Log     string          // log file path ("" discards output)
	MaxLog  int64           // 0 means DefaultMaxLog (1 MiB)
	Sandbox *sandbox.Policy // nil runs the command uncontained (--sandbox=off); see sandbox.go
	Session *Session        // with Sandbox, the helper the command shares with the session's others; see session.go
	// View, without Sandbox, runs the command in a private view of the
	// file system (a loop role: reviewer or fixer), through the sandbox
	// helper; see sandbox.View.
	View *sandbox.View
	// Stdout, when positive, keeps the command's standard output apart:
	// it is read into Result.Stdout, at most Stdout bytes (the rest read
	// and discarded, Result.StdoutTruncated set), and never written to
	// the log, which gets standard error alone. A caller judges a run by
	// its output this way (held_out.expect_stdout) without the compared
	// bytes ever landing in a log.
	Stdout int64
	// Disk bounds what the run writes to disk (worktree, private
	// folders, cache layers); the zero value is the default cap, which
	// every run gets. See disk.go.
	Disk DiskCap
	// Started, when set, is told the command's process group (its pid:
	// the sandbox helper's when contained) as soon as it runs, before it
	// is waited for: a caller that must find the group after its own
	// death (kill -9) records it there.
	Started func(pgid int)
}

// Result is how a command ended. Output is never part of it: exit codes
// are the only oracle.
type Result struct {
	Exit         int           // exit code; -1 when the process did not exit normally
	Signal       string        // "killed", "terminated", ... when it died by a signal
	TimedOut     bool          // killed because Spec.Timeout passed
	Canceled     bool          // killed because the caller's context ended (SIGINT, SIGTERM)
	Duration     time.Duration // from start until the command's main process ended
	StartErr     error         // could not start (not found, not executable)
	LogTruncated bool          // the log reached Spec.MaxLog; the rest was read and discarded
	LogErr       error         // writing the log failed after the command started; the result stands
	// Cache says how a candidate's contained command saw the card's
	// build cache (sandbox.CacheOverlay, sandbox.CachePrivateCold).
	Cache string
	// Stdout is the command's standard output when Spec.Stdout asked for
	// it, at most Spec.Stdout bytes; StdoutTruncated says it wrote more.
	Stdout          []byte
	StdoutTruncated bool
	// Disk, when set, says the run wrote more to disk than Spec.Disk
	// allows: it was killed, or judged after it ended. Such a run is
	// inconclusive, whatever its exit.
	Disk *DiskOver

	timeout time.Duration
}

// Inconclusive says the run proves nothing either way: it timed out, was
// canceled, died by a signal, did not start, or exited 125 (a wrapper's
// own failure, as in git bisect run), 126 (not executable) or 127 (not
// found). A misspelt command must never "prove" a bug by failing.
func (r Result) Inconclusive() bool {
	return r.StartErr != nil || r.Disk != nil || r.TimedOut || r.Canceled || r.Signal != "" || r.Exit < 0 ||
		r.Exit == 125 || r.Exit == 126 || r.Exit == 127
}

// String says how the command ended, for humans: "exit 1", "timed out
// after 10s", "killed by signal: terminated", "not started: ...".
func (r Result) String() string {
	switch {
	case r.StartErr != nil:
		return "not started: " + r.StartErr.Error()
	case r.Disk != nil:
		return r.Disk.String()
	case r.TimedOut:
		return "timed out after " + r.timeout.String()
	case r.Canceled:
		return "canceled"
	case r.Signal != "":
		return "killed by signal: " + r.Signal
	case r.Exit == 126:
		return "exit 126 (not executable: inconclusive)"
	case r.Exit == 127:
		return "exit 127 (command not found: inconclusive)"
	case r.Exit == 125:
		return "exit 125 (inconclusive)"
	}
	return fmt.Sprintf("exit %d", r.Exit)
}

// WorkdirError is a workdir that is absolute, missing, not a folder, or
// resolves (lexically or through a symlink) outside Spec.Root. Run returns
// it before starting anything.
type WorkdirError struct{ Workdir, Reason string }

func (e *WorkdirError) Error() string { return fmt.Sprintf("workdir %q %s", e.Workdir, e.Reason) }

// UserFacing marks the error as the card author's to fix.
func (e *WorkdirError) UserFacing() bool { return true }

// Hints says how to fix the card.
func (e *WorkdirError) Hints() []string {
	return []string{"a card's workdir is a folder inside the repository, relative to its top (\".\" for the top itself)"}
}

// Run runs s to completion and reports how it ended. The error is only for
// problems before the command exists (empty argv, bad Root or Workdir,
// unwritable log); everything about the command itself is in Result.
//
// The command runs in its own process group with stdin from /dev/null and
// stdout and stderr interleaved into one pipe that is always drained. When
// the main process ends (or the timeout passes, or ctx ends) the whole
// group is killed, and so are descendants that left the group but were
// re-parented to failpass (see reap_linux.go); Run returns within
// drainGrace of that even when an escapee keeps the pipe open.
func Run(ctx context.Context, s Spec) (Result, error) {
	// The card's prepare command has the network: it gets a helper of
	// its own, never a session's (which lives in a network namespace)
	// nor one started before its policy is known.
	prepareCmd := s.Sandbox != nil && s.Sandbox.PrepareCmd
	if s.Session != nil && s.Sandbox != nil && !prepareCmd && sandbox.UsesHelper() {
		if res, ok, err := s.Session.run(ctx, s); ok {
			return res, err
		}
	}
	var h *helper
	var helperErr error
	if s.Sandbox != nil && !prepareCmd && sandbox.UsesHelper() {
		// The sandbox helper starts first: its start-up and prepare's
		// work (the git snapshot, cgroups, the environment) need nothing
		// of each other, so they run side by side.
		h, helperErr = startHelper(s.Stdout > 0)
	}
	p, res, err := prepare(s, nil) // refuses a program that cannot run the helper at all
	if err != nil || res.StartErr != nil {
		h.discard()
		return res, err
	}
	if helperErr != nil {
		return p.notStarted(ctx, res, helperErr), nil
	}
	log := p.log
	tctx, cancel := context.WithTimeoutCause(ctx, p.timeout, errTimedOut)
	defer cancel()
	dctx, disk, err := p.watchDisk(tctx, s)
	if err != nil {
		h.discard()
		return p.notStarted(ctx, res, err), nil
	}
	start := time.Now()
	cmd, out, sout, stop, err := p.startRun(dctx, s.Argv, h, s.Stdout > 0)
	if err != nil {
		disk.end()
		return p.notStarted(ctx, res, err), nil
	}
	defer out.Close()
	drained := make(chan struct{})
	go func() {
		io.Copy(log, out) // log never fails a write, so this reads to EOF
		close(drained)
	}()
	kept := keepStdout(sout, s.Stdout)

	cmd.Wait()
	stop()
	res.Duration = time.Since(start)
	cleanUp(cmd)
	res.Disk = disk.end()
	out.SetReadDeadline(time.Now().Add(drainGrace))
	<-drained
	kept.wait(&res)
	res.ended(ctx, tctx, cmd)
	if err := p.sb.finish(&res); err != nil {
		return res.withLog(log), err
	}
	return res.withLog(log), nil
}

// startRun starts the command with its stdout and stderr on one pipe,
// whose read end it returns: the log interleaves the streams in the
// order the command wrote them, and no exec copying goroutine can block
// Wait. With split, stdout has a pipe of its own (sout), and out carries
// stderr alone. A contained command goes to h, the helper Run started
// for it (with the same split). stop ends the watch on ctx once the
// process has been waited for.
func (p *prepared) startRun(ctx context.Context, argv []string, h *helper, split bool) (cmd *exec.Cmd, out, sout *os.File, stop func() bool, err error) {
	if h != nil {
		if err := p.sb.hand(h, p.path, argv, p.dir); err != nil {
			h.discard()
			return nil, nil, nil, nil, err
		}
		pid := h.cmd.Process.Pid
		if p.started != nil {
			p.started(pid)
		}
		return h.cmd, h.out, h.sout, context.AfterFunc(ctx, func() { killGroup(pid) }), nil
	}
	out, w, err := os.Pipe()
	if err != nil {
		return nil, nil, nil, nil, fmt.Errorf("run: output pipe: %w", err)
	}
	var sw *os.File
	if split {
		if sout, sw, err = os.Pipe(); err != nil {
			out.Close()
			w.Close()
			return nil, nil, nil, nil, fmt.Errorf("run: stdout pipe: %w", err)
		}
	}
	cmd = p.command(ctx, argv)
	cmd.Stdout, cmd.Stderr = w, w
	if sw != nil {
		cmd.Stdout = sw
	}
	err = p.start(cmd)
	w.Close()
	if sw != nil {
		sw.Close()
	}
	if err != nil {
		out.Close()
		if sout != nil {
			sout.Close()
		}
		return nil, nil, nil, nil, err
	}
	return cmd, out, sout, func() bool { return true }, nil
}

// keptStdout reads a command's separate standard output (Spec.Stdout),
// bounded, while it runs.
type keptStdout struct {
	r    *os.File
	max  int64
	buf  []byte
	more bool
	done chan struct{}
}

// keepStdout starts reading r (nil: nothing to keep) up to max bytes,
// then on to its end, discarding the rest.
func keepStdout(r *os.File, max int64) *keptStdout {
	if r == nil {
		return nil
	}
	k := &keptStdout{r: r, max: max, done: make(chan struct{})}
	go func() {
		defer close(k.done)
		b, _ := io.ReadAll(io.LimitReader(r, max+1))
		if int64(len(b)) > max {
			k.buf, k.more = b[:max], true
			io.Copy(io.Discard, r)
			return
		}
		k.buf = b
	}()
	return k
}

// wait ends the read (within drainGrace of the command's end, as for
// the log) and puts what it kept in res. A nil *keptStdout does nothing.
func (k *keptStdout) wait(res *Result) {
	if k == nil {
		return
	}
	k.r.SetReadDeadline(time.Now().Add(drainGrace))
	<-k.done
	k.r.Close()
	res.Stdout, res.StdoutTruncated = k.buf, k.more
	if res.Stdout == nil {
		res.Stdout = []byte{}
	}
}

// watchDisk takes the baseline of the run's folders and watches them
// (disk.go): the context it returns ends when the run writes past its
// cap, which kills the run as a timeout does.
func (p *prepared) watchDisk(ctx context.Context, s Spec) (context.Context, *diskWatch, error) {
	dctx, cancel := context.WithCancelCause(ctx)
	areas := append([]string{p.root}, s.Disk.Areas...)
	areas = append(areas, p.sb.diskAreas()...)
	w, err := watchDisk(areas, s.Disk, func() { cancel(errDiskOver) })
	if err != nil {
		cancel(nil)
		return nil, nil, err
	}
	return dctx, w, nil
}

var errDiskOver = errors.New("run: over the disk cap")

// prepared is a Spec checked and resolved, ready to start.
type prepared struct {
	root    string // Spec.Root
	dir     string // the real workdir, inside Root
	env     []string
	path    string // argv[0] resolved
	timeout time.Duration
	log     *logWriter
	sb      *sandboxRun // nil without Spec.Sandbox or Spec.View; see sandbox.go
	started func(int)   // Spec.Started
}

// prepare checks s and opens its log. A problem before the command exists
// is an error; a program that cannot be found is a Result with StartErr
// (written to the log too), as a failure to start is.
func prepare(s Spec, sess *sandbox.Session) (*prepared, Result, error) {
	if len(s.Argv) == 0 || s.Argv[0] == "" {
		return nil, Result{}, errors.New("run: empty argv")
	}
	dir, err := confine(s.Root, s.Workdir)
	if err != nil {
		return nil, Result{}, err
	}
	p := &prepared{root: s.Root, dir: dir, env: s.Env, timeout: s.Timeout, started: s.Started}
	if p.env == nil {
		p.env = MinimalEnv(os.Getenv)
	}
	if s.Sandbox != nil || s.View != nil {
		if p.sb, p.env, err = prepareSandbox(s, p.env, sess); err != nil {
			return nil, Result{}, err
		}
	}
	if p.timeout <= 0 {
		p.timeout = DefaultTimeout
	}
	maxLog := s.MaxLog
	if maxLog <= 0 {
		maxLog = DefaultMaxLog
	}
	if p.log, err = openLog(s.Log, maxLog); err != nil {
		p.sb.close()
		return nil, Result{}, err
	}
	res := Result{Exit: -1, timeout: p.timeout}
	if p.path, err = resolveArgv0(s.Argv[0], dir, p.env); err != nil {
		return p, p.notStarted(context.Background(), res, err), nil
	}
	return p, res, nil
}

// command makes the exec.Cmd both Run and Capture start: own process
// group, the whole group killed on cancel, Wait bounded.
func (p *prepared) command(ctx context.Context, argv []string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, p.path)
	cmd.Args = append([]string(nil), argv...)
	cmd.Dir = p.dir
	cmd.Env = p.env
	cmd.SysProcAttr = sysProcAttr()
	cmd.Cancel = func() error { return killGroup(cmd.Process.Pid) }
	cmd.WaitDelay = waitDelay
	p.sb.wrap(cmd, p.path, p.dir)
	enableReaper()
	return cmd
}

// start starts cmd. A contained command's helper is moved into the
// command's cgroups at once, while it is still starting up (see
// sandbox.Prepared.Started).
func (p *prepared) start(cmd *exec.Cmd) error {
	err := startRegistered(cmd)
	if err == nil {
		p.sb.started(cmd.Process.Pid)
		if p.started != nil {
			p.started(cmd.Process.Pid)
		}
	}
	return err
}

// notStarted records a start failure in res and the log, and closes the log.
func (p *prepared) notStarted(ctx context.Context, res Result, err error) Result {
	res.StartErr = err
	res.Canceled = ctx.Err() != nil
	p.sb.close()
	fmt.Fprintf(p.log, "failpass: not started: %v\n", err)
	return res.withLog(p.log)
}

// cleanUp runs once the command's main process is gone: whatever it left
// behind in its group (the "sleep 300 &" of a fail command) goes with it,
// and so do escapees re-parented to failpass.
func cleanUp(cmd *exec.Cmd) {
	pid := cmd.Process.Pid
	killGroup(pid)
	reap(pid)
}

// ended records how the main process ended. Death by a signal is blamed on
// the caller's cancel or the timeout when one of them fired.
func (r *Result) ended(ctx, tctx context.Context, cmd *exec.Cmd) {
	ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if !ok {
		return
	}
	switch {
	case ws.Exited():
		r.Exit = ws.ExitStatus()
	case ws.Signaled():
		r.Signal = ws.Signal().String()
		switch {
		case ctx.Err() != nil:
			r.Canceled = true
		case errors.Is(context.Cause(tctx), errTimedOut):
			r.TimedOut = true
		}
	}
}

var errTimedOut = errors.New("run: command timed out")

// withLog closes the log and records what happened to it in r.
func (r Result) withLog(l *logWriter) Result {
	l.Close()
	r.LogTruncated, r.LogErr = l.truncated, l.err
	return r
}

// confine resolves workdir against root and refuses anything that ends up
// outside root, lexically ("../x") or through a symlink inside the tree.
// It returns the real path, so the command starts exactly where it was
// checked.
func confine(root, workdir string) (string, error) {
	if workdir == "" {
		workdir = "."
	}
	if !filepath.IsAbs(root) {
		return "", fmt.Errorf("run: root %q is not an absolute path", root)
	}
	switch {
	case strings.ContainsRune(workdir, 0):
		return "", &WorkdirError{workdir, "contains a NUL byte"}
	case filepath.IsAbs(workdir):
		return "", &WorkdirError{workdir, "is absolute; it must be relative to the repository's top folder"}
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", fmt.Errorf("run: root: %w", err)
	}
	joined := filepath.Join(realRoot, workdir)
	if !within(realRoot, joined) {
		return "", &WorkdirError{workdir, "leads outside the worktree"}
	}
	real, err := filepath.EvalSymlinks(joined)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", &WorkdirError{workdir, "does not exist in the worktree"}
		}
		return "", &WorkdirError{workdir, "cannot be resolved: " + err.Error()}
	}
	if !within(realRoot, real) {
		return "", &WorkdirError{workdir, "resolves through a symlink to a folder outside the worktree"}
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", &WorkdirError{workdir, "cannot be read: " + err.Error()}
	}
	if !fi.IsDir() {
		return "", &WorkdirError{workdir, "is not a folder"}
	}
	return real, nil
}

// within says whether p is root or below it; both are clean and absolute.
func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// resolveArgv0 finds the program. A name with a slash is a path relative
// to the workdir; a bare name is looked up on the PATH of the command's
// own environment, skipping relative PATH entries, so a file planted in
// the workdir is never picked up by accident.
func resolveArgv0(name, dir string, env []string) (string, error) {
	if strings.ContainsRune(name, '/') {
		if filepath.IsAbs(name) {
			return name, nil
		}
		return filepath.Join(dir, name), nil
	}
	path := "/usr/local/bin:/usr/bin:/bin" // execvp's default when PATH is unset
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v // the last one wins, as in the child's dedup'd environment
		}
	}
	for _, d := range filepath.SplitList(path) {
		if d == "" || !filepath.IsAbs(d) {
			continue
		}
		p := filepath.Join(d, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return p, nil
		}
	}
	return "", &exec.Error{Name: name, Err: exec.ErrNotFound}
}
