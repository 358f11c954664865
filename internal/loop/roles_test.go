package loop

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/failpass/failpass/internal/proc"
)

// A role's process record that cannot be written is said so and not
// listed: the list is what forgetRoles removes, and a path on it with no
// file behind it would hide that a loop resumed after kill -9 has no
// record of the group to end.
func TestRecordRoleUnwritable(t *testing.T) {
	dir := t.TempDir()
	// roles is a file: MkdirAll of the records' folder fails, for root too.
	if err := os.WriteFile(filepath.Join(dir, "roles"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	e := &engine{store: &Store{Dir: dir}, cfg: Config{Log: &log}}
	e.recordRole("author", os.Getpid())
	if len(e.roles.files) != 0 {
		t.Errorf("listed %q, a record that was never written", e.roles.files)
	}
	if !strings.Contains(log.String(), "author (process group") || !strings.Contains(log.String(), "is not recorded") {
		t.Errorf("log %q does not say the record is missing", log.String())
	}

	// And where the folder can be made, the record is written and listed.
	ok := t.TempDir()
	e = &engine{store: &Store{Dir: ok}, cfg: Config{Log: &log}}
	e.recordRole("author", os.Getpid())
	if len(e.roles.files) != 1 {
		t.Fatalf("listed %q, want the one record", e.roles.files)
	}
	if _, err := os.Stat(e.roles.files[0]); err != nil {
		t.Errorf("the listed record: %v", err)
	}
}

// A role record whose write was cut short (kill -9 between atomicfile's
// temporary file and its rename) is gone once the loop's id is taken
// again: TestKilledLoopScenario found one left after resume.
func TestReapRolesRemovesCutWrites(t *testing.T) {
	s := newScen(t, "hello world\n")
	e := &engine{repo: s.repo, store: StoreFor(s.repo.CommonDir, "cut")}
	roles := filepath.Join(e.store.Dir, "roles")
	if err := os.MkdirAll(roles, 0o755); err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(roles, ".32735.json.tmp-3950807119")
	other := filepath.Join(roles, "notes.txt") // not failpass's to judge
	for _, p := range []string{cut, other} {
		if err := os.WriteFile(p, []byte("{"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e.reapRoles()
	if _, err := os.Stat(cut); err == nil {
		t.Errorf("%s, a cut write, is left", cut)
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("%s went: %v", other, err)
	}
}

// Cut after its write and before its rename, the temporary file holds
// the whole record: the group it names is ended on resume, as a finished
// record's is (TestKilledLoopScenario once found the role running).
func TestReapRolesEndsACutRecordsGroup(t *testing.T) {
	s := newScen(t, "hello world\n")
	e := &engine{repo: s.repo, store: StoreFor(s.repo.CommonDir, "cut")}
	roles := filepath.Join(e.store.Dir, "roles")
	if err := os.MkdirAll(roles, 0o755); err != nil {
		t.Fatal(err)
	}
	role := exec.Command("sleep", "300")
	role.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := role.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- role.Wait() }()
	defer role.Process.Kill()
	dead := exec.Command("true") // the loop that was killed
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	pgid := role.Process.Pid
	b, _ := json.Marshal(roleProc{Role: "fixer", PGID: pgid, Start: proc.Start(pgid), Boot: proc.BootID(), Owner: dead.Process.Pid, OwnerStart: 1})
	if err := os.WriteFile(filepath.Join(roles, ".1.json.tmp-1"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	e.reapRoles()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the role named by the cut record still runs")
	}
}
