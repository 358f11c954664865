package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/failpass/failpass/internal/scratch"
	"golang.org/x/sys/unix"
)

// viewConfig is the helper's part of a View's run.
type viewConfig struct {
	ReadOnly []string `json:"read_only"`
	Writable []string `json:"writable"`
	Hidden   []string `json:"hidden"`
	Overlay  string   `json:"overlay,omitempty"`
	// Scratch is an empty folder of the tool's: a tmpfs is mounted on it
	// in the view's mount namespace, holding the overlay's layers and the
	// command's TMPDIR (Landlock view: the TMPDIR alone, on disk).
	Scratch string `json:"scratch"`
	// Read and Write are a Landlock view's grants (no namespaces).
	Read  []string `json:"read,omitempty"`
	Write []string `json:"write,omitempty"`
}

// viewFlags are the namespaces of a view: a mount namespace for the view
// and a PID namespace, so that whatever the command starts dies with the
// helper (which dies with failpass: Pdeathsig).
const viewFlags = syscall.CLONE_NEWNS | syscall.CLONE_NEWPID

// ViewSupport says how this machine would contain a process in a View:
// the layers and features it would use and those it lacks, with reasons.
// The error says no view can be made at all (no namespaces and no
// Landlock), or that this program cannot run the sandbox helper.
func ViewSupport() (Report, error) { return probe().viewReport() }

func (c *caps) viewReport() (Report, error) {
	if c.noHelper != nil {
		return Report{}, fmt.Errorf("this program cannot run the sandbox helper: %v", c.noHelper)
	}
	have, why := map[Feature]bool{}, map[Feature]string{}
	nsFeatures := []Feature{FeatMountNS, FeatPIDNS, FeatGitRO}
	if c.userns || !c.namespaces && os.Geteuid() != 0 {
		nsFeatures = append([]Feature{FeatUserNS}, nsFeatures...)
	}
	for _, f := range nsFeatures {
		if c.namespaces {
			have[f] = true
		} else if w := c.report.Why[string(f)]; w != "" {
			why[f] = w
		} else {
			why[f] = "namespaces unavailable"
		}
	}
	if c.landlock {
		have[FeatLandlock] = true
	} else if w := c.report.Why[string(FeatLandlock)]; w != "" {
		why[FeatLandlock] = w
	} else {
		why[FeatLandlock] = "landlock unavailable"
	}
	r := Report{Applied: []string{}, Missing: []string{}, Features: []string{}, Landlock: c.report.Landlock}
	if c.namespaces || c.landlock {
		r.Applied = append(r.Applied, string(Filesystem))
	} else {
		r.Missing = append(r.Missing, string(Filesystem))
	}
	if c.namespaces {
		r.Applied = append(r.Applied, string(Processes))
	} else {
		r.Missing = append(r.Missing, string(Processes))
	}
	addFeatures(&r, have, why)
	if !c.namespaces && !c.landlock {
		return r, fmt.Errorf("no private view of the file system: %s; %s", why[FeatMountNS], why[FeatLandlock])
	}
	return r, nil
}

// Prepare sets v up for one command: the helper builds the view and starts
// the command in it. base is the command's environment; its TMPDIR is
// replaced by a private folder.
func (v *View) Prepare(root string, base []string) (*Prepared, error) {
	c := probe()
	rep, err := c.viewReport()
	if err != nil {
		return nil, &Error{Step: "view", Err: err.Error()}
	}
	for _, p := range append([]string{v.Overlay}, v.ReadOnly...) {
		if strings.ContainsAny(p, ",:\\") {
			return nil, &Error{Step: "view", Err: fmt.Sprintf("%q: a folder of a view may not hold , : or \\", p)}
		}
	}
	sd, err := scratch.New("view")
	if err != nil {
		return nil, fmt.Errorf("sandbox: view: %w", err)
	}
	pr := &Prepared{caps: c, root: root, Report: rep, view: v, scratch: sd}
	vc := &viewConfig{ReadOnly: realPaths(v.ReadOnly), Writable: realPaths(v.Writable), Hidden: realPaths(v.Hidden), Scratch: sd.Path}
	if v.Overlay != "" {
		vc.Overlay = realPaths([]string{v.Overlay})[0]
	}
	tmp := filepath.Join(sd.Path, "tmp")
	if !c.namespaces {
		if err := os.Mkdir(tmp, 0o700); err != nil {
			pr.Close()
			return nil, fmt.Errorf("sandbox: view: %w", err)
		}
		vc.Read = complement(vc.Hidden)
		vc.Write = append(complement(append(append([]string{}, vc.ReadOnly...), vc.Hidden...)), vc.Writable...)
		vc.Write = append(vc.Write, tmp)
		if vc.Overlay != "" {
			// No overlay without a mount namespace: the folder itself is
			// writable, and the caller finds what changed in it.
			vc.Write = append(vc.Write, vc.Overlay)
		}
	}
	pr.viewCfg = vc
	pr.Env = append(withoutVar(base, "TMPDIR"), "TMPDIR="+tmp)
	return pr, nil
}

// withoutVar is env without the variable name.
func withoutVar(env []string, name string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if !strings.HasPrefix(kv, name+"=") {
			out = append(out, kv)
		}
	}
	return out
}

// launchView is how a view's helper starts: in a mount and PID namespace
// (and a user namespace when not root) where this machine has them.
func (c *caps) launchView() *Launch { return c.launchIn(viewFlags) }

// viewHelperConfig is the helper's configuration for c in pr's view.
func (pr *Prepared) viewHelperConfig(c Command) helperConfig {
	return helperConfig{Path: c.Path, Argv: c.Argv, Dir: c.Dir, Env: pr.Env, Namespaces: pr.caps.namespaces, View: pr.viewCfg}
}

// viewFinished hands what the helper reported to the view.
func (pr *Prepared) viewFinished(st *status) {
	r := ViewResult{Report: pr.Report}
	if st != nil {
		r.Ran = st.Started || st.Step == "exec"
		r.Written = st.Written
	}
	pr.view.setResult(r)
}

// mainView is the helper of a view: it builds the view (mounts in its
// namespaces, or a Landlock domain on its thread), starts the command,
// waits for it and, as PID 1 of its namespace, ends whatever the command
// left running before it lists the overlay's writes.
func mainView(cfg helperConfig, report func(status)) int {
	v := cfg.View
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, forwarded...)
	var err error
	step := "view"
	if cfg.Namespaces {
		// The view's mounts are the helper's to make; the command may not
		// undo them (a remount read-write needs CAP_SYS_ADMIN, which a
		// root inside the view, or root in a user namespace, would have).
		if err = mountView(v); err == nil {
			step = "drop capabilities"
			if err = unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err == nil {
				err = dropCapabilities()
			}
		}
	} else {
		step = "landlock"
		err = restrictThread(landlockRules{read: v.Read, write: v.Write, devices: landlockDevices})
	}
	if err == nil {
		// Last: the filter denies calls the steps above make. An
		// architecture without a table runs without it (the view's report
		// lists the feature missing).
		step = "seccomp"
		if err = installSeccomp(); errors.Is(err, errNoSeccomp) {
			err = nil
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "failpass: sandbox: %s: %v\n", step, err)
		report(status{Step: step, Err: err.Error()})
		return exitSandboxFailed
	}
	pid, err := syscall.ForkExec(cfg.Path, cfg.Argv, &syscall.ProcAttr{Dir: cfg.Dir, Env: cfg.Env, Files: []uintptr{0, 1, 2},
		Sys: &syscall.SysProcAttr{}})
	if err != nil {
		st := execFailed(cfg.Argv[0], err)
		fmt.Fprintf(os.Stderr, "failpass: not started: %s\n", st.Err)
		report(st)
		if err == syscall.ENOENT {
			return exitNotFound
		}
		return exitNotExecutable
	}
	go func() {
		for s := range sigs {
			syscall.Kill(pid, s.(syscall.Signal))
		}
	}()
	st, code := waitFor(pid)
	if cfg.Namespaces {
		// PID 1 of the namespace: end everything else in it, reap it, and
		// only then read what was written.
		syscall.Kill(-1, syscall.SIGKILL)
		for {
			if _, err := syscall.Wait4(-1, nil, 0, nil); err == syscall.ECHILD {
				break
			}
		}
		if v.Overlay != "" {
			st.Written = upperWrites(filepath.Join(v.Scratch, "upper"))
		}
	}
	report(st)
	return code
}

// mountView builds a view in the helper's mount namespace: mounts made
// private, a fresh /proc for its PID namespace (where the kernel allows
// one), the read-only folders, the hidden ones, the writable ones inside
// them, a tmpfs on the scratch folder, and the overlay.
func mountView(v *viewConfig) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make mounts private: %w", err)
	}
	// A /proc of the PID namespace, so the command sees its own processes;
	// a kernel that refuses it (a /proc with covered parts) leaves the
	// old one, which shows more than needed and protects nothing less.
	unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "")
	var ro []bind
	for _, p := range v.ReadOnly {
		ro = append(ro, bind{Path: p, RO: true})
	}
	if err := applyBinds(ro); err != nil {
		return err
	}
	for _, p := range v.Hidden {
		if err := unix.Mount("tmpfs", p, "tmpfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "size=4k,mode=0555"); err != nil {
			return fmt.Errorf("hide %s: %w", p, err)
		}
	}
	var rw []bind
	for _, p := range v.Writable {
		rw = append(rw, bind{Path: p})
	}
	if err := applyBinds(rw); err != nil {
		return err
	}
	if err := unix.Mount("tmpfs", v.Scratch, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "size=64m,mode=0700"); err != nil {
		return fmt.Errorf("tmpfs on %s: %w", v.Scratch, err)
	}
	for _, d := range []string{"upper", "work", "tmp"} {
		if err := os.Mkdir(filepath.Join(v.Scratch, d), 0o700); err != nil {
			return err
		}
	}
	if v.Overlay != "" {
		opts := "lowerdir=" + v.Overlay + ",upperdir=" + filepath.Join(v.Scratch, "upper") + ",workdir=" + filepath.Join(v.Scratch, "work")
		if err := unix.Mount("overlay", v.Overlay, "overlay", 0, opts); err != nil {
			// Inside a user namespace overlayfs keeps its metadata in the
			// user.* xattrs, which it must be told to.
			if err2 := unix.Mount("overlay", v.Overlay, "overlay", 0, opts+",userxattr"); err2 != nil {
				return fmt.Errorf("overlay on %s: %w", v.Overlay, err)
			}
		}
	}
	return nil
}

// upperWrites lists what an overlay's upper layer holds: every path the
// command created, changed or removed (a whiteout), relative and sorted.
func upperWrites(upper string) []string {
	var out []string
	filepath.WalkDir(upper, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == upper {
			return nil
		}
		rel, _ := filepath.Rel(upper, p)
		out = append(out, filepath.ToSlash(rel))
		return nil
	})
	sort.Strings(out)
	return out
}
