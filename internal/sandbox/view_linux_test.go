package sandbox

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/failpass/failpass/internal/sandbox/sandboxtest"
)

// inView runs sh -c script in dir inside v, as run does, and returns its
// output and exit.
func inView(t *testing.T, v *View, dir, script string, env ...string) (string, Outcome) {
	t.Helper()
	pr, err := v.Prepare(dir, append([]string{"PATH=/usr/bin:/bin", "HOME=" + os.Getenv("HOME")}, env...))
	if err != nil {
		t.Fatalf("Prepare: %v", err)
	}
	l, err := pr.Launch(Command{Path: "/bin/sh", Argv: []string{"sh", "-c", script}, Dir: dir})
	if err != nil {
		t.Fatalf("Launch: %v", err)
	}
	cmd := exec.Command(l.Path)
	cmd.Args, cmd.Env, cmd.ExtraFiles = l.Args, pr.Env, l.ExtraFiles
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL,
		Cloneflags: l.Cloneflags, UidMappings: l.UidMappings, GidMappings: l.GidMappings}
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Start(); err != nil {
		pr.Close()
		t.Fatalf("start helper: %v", err)
	}
	cmd.Wait()
	o, err := pr.Finish()
	if err != nil {
		t.Fatalf("Finish: %v", err)
	}
	return out.String(), o
}

// viewTree makes ro/ (read-only) holding snap/ (the overlay), rw/
// (writable) and hidden/ (hidden, with a secret).
func viewTree(t *testing.T) (v *View, ro, snap, rw, hidden string) {
	d := t.TempDir()
	ro = filepath.Join(d, "ro")
	snap, rw, hidden = filepath.Join(ro, "snap"), filepath.Join(ro, "rw"), filepath.Join(ro, "hidden")
	for _, p := range []string{snap, rw, hidden} {
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(snap, "a.txt"), []byte("real\n"), 0o644)
	os.WriteFile(filepath.Join(hidden, "secret"), []byte("s\n"), 0o644)
	return &View{ReadOnly: []string{ro}, Overlay: snap, Writable: []string{rw}, Hidden: []string{hidden}}, ro, snap, rw, hidden
}

const viewScript = `echo changed > a.txt; mkdir -p new/dir; echo x > new/dir/f
{ echo y > "$RO/b.txt"; } 2>/dev/null && echo ro-written
{ cat "$HIDDEN/secret"; } 2>/dev/null && echo hidden-read
echo z > "$RW/c.txt" && echo rw-ok
echo t > "$TMPDIR/t" && echo tmp-ok
cat a.txt`

// TestView checks the view a loop role gets where namespaces can be
// made (root, or a user namespace): read-only folders refuse writes (even
// from root), hidden ones show nothing, the overlay takes writes without
// changing the real folder and reports them, writable folders inside
// read-only ones stay writable, and a private TMPDIR is writable.
func TestView(t *testing.T) {
	rep, err := ViewSupport()
	if err != nil {
		t.Skipf("no view here: %v", err)
	}
	if !rep.Has(Processes) {
		t.Skipf("no namespaces here (%s); TestViewWithoutNamespaces covers this machine", MissingText(rep))
	}
	v, ro, snap, rw, hidden := viewTree(t)
	out, o := inView(t, v, snap, viewScript, "RO="+ro, "RW="+rw, "HIDDEN="+hidden)
	if o.Exit != 0 || out != "rw-ok\ntmp-ok\nchanged\n" {
		t.Fatalf("inside the view (%+v): %q", o, out)
	}
	res := v.Result()
	if want := []string{"a.txt", "new", "new/dir", "new/dir/f"}; !res.Ran || !reflect.DeepEqual(res.Written, want) {
		t.Fatalf("result %+v, want written %q", res, want)
	}
	if b, _ := os.ReadFile(filepath.Join(snap, "a.txt")); string(b) != "real\n" {
		t.Fatalf("the overlaid folder was written: %q", b)
	}
	if _, err := os.Stat(filepath.Join(ro, "b.txt")); err == nil {
		t.Fatal("a read-only folder was written")
	}
	if b, _ := os.ReadFile(filepath.Join(rw, "c.txt")); string(b) != "z\n" {
		t.Fatal("the writable folder did not keep its write")
	}
	if !slices.Contains(res.Report.Features, string(FeatMountNS)) || !slices.Contains(res.Report.Features, string(FeatPIDNS)) {
		t.Fatalf("report %+v", res.Report)
	}
	// Nor can the command undo the view: it has no capability left to
	// remount with, even as root or the root of a user namespace.
	out, o = inView(t, v, snap, `mount -o remount,bind,rw "$RO" 2>/dev/null && echo remounted
{ echo y > "$RO/b.txt"; } 2>/dev/null && echo ro-written
grep -q '^CapEff:[[:space:]]*0*$' /proc/self/status && echo no-caps`, "RO="+ro)
	if out != "no-caps\n" {
		t.Fatalf("after a remount attempt (%+v): %q", o, out)
	}
}

// TestViewOutlivesNothing: what the command leaves running in the
// background dies with it (the view's PID namespace).
func TestViewOutlivesNothing(t *testing.T) {
	rep, err := ViewSupport()
	if err != nil || !rep.Has(Processes) {
		t.Skip("no PID namespace here")
	}
	dir := t.TempDir()
	marker := filepath.Join(dir, "marker")
	out, o := inView(t, &View{}, dir, `(sleep 2; echo late > "`+marker+`") & echo started`)
	if o.Exit != 0 || out != "started\n" {
		t.Fatalf("%+v %q", o, out)
	}
	time.Sleep(2500 * time.Millisecond)
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("a background process of the view outlived it")
	}
}

// TestViewWithoutNamespaces runs TestViewLandlock where namespace
// creation is denied by a seccomp filter, as AppArmor denies user
// namespaces to unprivileged users on Ubuntu 23.10 and later.
func TestViewWithoutNamespaces(t *testing.T) {
	if os.Getenv(sandboxtest.DenyEnv) == "1" {
		t.Skip("already denied")
	}
	sandboxtest.RunDenied(t, "^TestViewLandlock$")
}

// TestViewLandlock (run by TestViewWithoutNamespaces) checks the view
// without namespaces: a Landlock domain in which read-only folders refuse
// writes, hidden ones cannot be read, writable ones and the overlay
// folder can be written, and the report names what is missing.
func TestViewLandlock(t *testing.T) {
	if os.Getenv(sandboxtest.DenyEnv) != "1" {
		t.Skip("run by TestViewWithoutNamespaces")
	}
	rep, err := ViewSupport()
	if err != nil {
		t.Fatalf("no view without namespaces: %v", err)
	}
	if rep.Has(Processes) || !slices.Contains(rep.Features, string(FeatLandlock)) || rep.Why[string(FeatMountNS)] == "" {
		t.Fatalf("report %+v: want landlock, no namespaces, and why", rep)
	}
	t.Logf("missing: %s", MissingText(rep))
	v, ro, snap, rw, hidden := viewTree(t)
	out, o := inView(t, v, snap, viewScript, "RO="+ro, "RW="+rw, "HIDDEN="+hidden)
	if o.Exit != 0 || out != "rw-ok\ntmp-ok\nchanged\n" {
		t.Fatalf("inside the view (%+v): %q", o, out)
	}
	if _, err := os.Stat(filepath.Join(ro, "b.txt")); err == nil {
		t.Fatal("a read-only folder was written")
	}
	if res := v.Result(); !res.Ran || len(res.Written) != 0 {
		t.Fatalf("result %+v", res)
	}
}

// A folder on PATH the user cannot reach (root's ~/go/bin, left on PATH
// by su) is skipped by Landlock's rules, not fatal. It must be another
// user's: inside the user namespace the helper may reach any folder of
// the user's own, so root's home is the folder to try.
func TestUnreachablePathFolderIsSkipped(t *testing.T) {
	const unreachable = "/root/go/bin"
	if _, err := os.Stat(unreachable); !errors.Is(err, os.ErrPermission) {
		t.Skipf("%s is not unreachable to this user (%v)", unreachable, err)
	}
	if !slices.Contains(Probe().Features, string(FeatLandlock)) {
		t.Skip("no landlock here")
	}
	_, wt := testRepo(t, nil)
	env := []string{"PATH=" + unreachable + ":/usr/bin:/bin", "HOME=" + os.Getenv("HOME")}
	r := contained(t, wt, nil, env, 20*time.Second, sh("echo ok")...)
	if r.Exit != 0 || r.Log != "ok\n" {
		t.Fatalf("outcome = %+v, err %v\n%s", r.Outcome, r.StartErr, r.Log)
	}
}
