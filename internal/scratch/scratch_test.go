package scratch

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

const childEnv = "FAILPASS_SCRATCH_TEST_CHILD"

// TestMain lets the test binary double as a process that makes a folder
// and is killed with -9.
func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		d, err := New("test-killed")
		if err != nil {
			os.Exit(3)
		}
		os.Stdout.WriteString(d.Path + "\n")
		time.Sleep(time.Minute)
		os.Exit(4)
	}
	os.Exit(m.Run())
}

// A live owner's folder survives a sweep, even one from its own
// process; Remove takes the folder and its owner file.
func TestLiveFolderStays(t *testing.T) {
	d, err := New("test-live")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(filepath.Base(d.Path), "failpass-test-live-") {
		t.Errorf("folder %s: want failpass-test-live-*", d.Path)
	}
	if removed := Sweep(); slices.Contains(removed, d.Path) {
		t.Fatalf("Sweep removed a live owner's folder %s", d.Path)
	}
	if _, err := os.Stat(d.Path); err != nil {
		t.Fatal(err)
	}
	if err := d.Remove(); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{d.Path, d.Path + ownerSuffix} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s is still there after Remove", p)
		}
	}
}

// A process killed with -9 leaves its folder (with an unreadable
// subfolder in it); the next sweep removes it and its owner file.
func TestSweepRemovesADeadOwnersFolder(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4096)
	n, _ := out.Read(buf)
	dir := strings.TrimSpace(string(buf[:n]))
	if !strings.Contains(dir, "failpass-test-killed-") {
		cmd.Process.Kill()
		t.Fatalf("the child said %q", dir)
	}
	os.MkdirAll(filepath.Join(dir, "locked", "in"), 0o755)
	os.Chmod(filepath.Join(dir, "locked"), 0)
	if removed := Sweep(); slices.Contains(removed, dir) {
		t.Fatal("Sweep removed the folder while its owner lived")
	}
	cmd.Process.Kill()
	cmd.Wait()
	if removed := Sweep(); !slices.Contains(removed, dir) {
		t.Fatalf("Sweep = %v, want %s among them", removed, dir)
	}
	for _, p := range []string{dir, dir + ownerSuffix} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s is still there after the sweep", p)
		}
	}
}
