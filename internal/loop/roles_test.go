package loop

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
