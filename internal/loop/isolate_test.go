package loop

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"
)

// TestRunIsolated checks the view a role process gets: read-only folders
// refuse writes (even from root), the overlay takes writes without
// changing the real folder and reports them, writable folders inside
// read-only ones stay writable, and nothing leaks out of the thread.
func TestRunIsolated(t *testing.T) {
	d := t.TempDir()
	ro, snap, scratch := filepath.Join(d, "ro"), filepath.Join(d, "ro", "snap"), t.TempDir()
	rw := filepath.Join(d, "ro", "rw")
	for _, p := range []string{ro, snap, rw} {
		os.MkdirAll(p, 0o755)
	}
	writeFile(t, filepath.Join(snap, "a.txt"), "real\n", 0o644)
	var out []byte
	written, err := runIsolated(isolation{readOnly: []string{ro}, overlay: snap, writable: []string{rw}, scratch: scratch}, func() error {
		cmd := exec.Command("sh", "-c", `echo changed > a.txt; mkdir -p new/dir; echo x > new/dir/f
{ echo y > "$RO/b.txt"; } 2>/dev/null && echo ro-written
echo z > "$RW/c.txt" && echo rw-ok
cat a.txt`)
		cmd.Dir = snap
		cmd.Env = append(os.Environ(), "RO="+ro, "RW="+rw)
		var err error
		out, err = cmd.CombinedOutput()
		return err
	})
	if errors.Is(err, errNoIsolation) {
		t.Skipf("no private mounts here: %v", err)
	}
	if err != nil {
		t.Fatalf("runIsolated: %v\n%s", err, out)
	}
	if string(out) != "rw-ok\nchanged\n" {
		t.Fatalf("inside the view: %q", out)
	}
	if want := []string{"a.txt", "new", "new/dir", "new/dir/f"}; !reflect.DeepEqual(written, want) {
		t.Fatalf("written = %q, want %q", written, want)
	}
	if b, _ := os.ReadFile(filepath.Join(snap, "a.txt")); string(b) != "real\n" {
		t.Fatalf("the snapshot was written: %q", b)
	}
	if _, err := os.Stat(filepath.Join(ro, "b.txt")); err == nil {
		t.Fatal("a read-only folder was written")
	}
	if b, _ := os.ReadFile(filepath.Join(rw, "c.txt")); string(b) != "z\n" {
		t.Fatal("the writable folder did not keep its write")
	}
	// The calling goroutine's view is untouched: a write here works.
	if err := os.WriteFile(filepath.Join(ro, "after.txt"), nil, 0o644); err != nil {
		t.Fatalf("the read-only view leaked out of its thread: %v", err)
	}
}
