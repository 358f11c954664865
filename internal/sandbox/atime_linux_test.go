package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// atime is path's access time.
func atime(t *testing.T, path string) time.Time {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	return time.Unix(st.Atim.Sec, st.Atim.Nsec)
}

// A shared folder every run reads (the toolchain's, a module cache's) is
// read-only inside the command's mount namespace, so reading a file of it
// leaves no access time a later run could see: which files an earlier
// run opened, and so whether one ran, is no tell. Checked against a read
// outside the sandbox, which does move the access time here (relatime:
// the access time is older than the modification).
func TestSharedReadsLeaveNoAccessTime(t *testing.T) {
	if r := Probe(); !r.Has(Filesystem) {
		t.Skipf("no mount namespace here: %v", r.Why)
	}
	// Outside /tmp, where the private /tmp's own rules apply.
	shared, err := os.MkdirTemp("/var/tmp", "failpass-shared-")
	if err != nil {
		t.Skipf("no /var/tmp: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(shared) })
	f := filepath.Join(shared, "zone.info")
	if err := os.WriteFile(f, []byte("shared\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	old, mod := time.Now().Add(-72*time.Hour), time.Now().Add(-time.Hour)
	stamp := func() {
		if err := os.Chtimes(f, old, mod); err != nil {
			t.Fatal(err)
		}
	}
	stamp()
	if out, err := exec.Command("cat", f).CombinedOutput(); err != nil {
		t.Fatalf("cat: %v %s", err, out)
	}
	if atime(t, f).Equal(old) {
		t.Skip("this file system updates no access time on a read (noatime): nothing to show")
	}
	_, wt := testRepo(t, map[string]string{"a.txt": "a\n"})
	// The folder granted, and the file alone (as /etc's entries are).
	for _, grant := range []string{shared, f} {
		stamp()
		r := contained(t, wt, &Policy{Readable: []string{grant}}, nil, time.Minute, "cat", f)
		if r.Exit != 0 {
			t.Fatalf("cat in the sandbox, %s granted: %+v\n%s", grant, r.Outcome, r.Log)
		}
		if got := atime(t, f); !got.Equal(old) {
			t.Errorf("%s granted: a contained read moved the shared file's access time from %v to %v", grant, old, got)
		}
	}
}

// Where every layer holds, nothing is left to tell runs apart by, and the
// report says so by naming none.
func TestFullSandboxNamesNoTell(t *testing.T) {
	r := Probe()
	if !r.Has(Filesystem) || !r.Has(Processes) {
		t.Skipf("not every layer here: %v", r.Why)
	}
	if len(r.Tells) != 0 {
		t.Errorf("tells %q with the filesystem and processes layers applied", r.Tells)
	}
	if off := OffReport(); len(off.Tells) < 4 {
		t.Errorf("--sandbox=off tells %q, want every tell", off.Tells)
	}
}
