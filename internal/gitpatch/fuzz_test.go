package gitpatch

import (
	"context"
	"testing"

	"github.com/failpass/failpass/internal/patch"
)

func seedDiffs(f *testing.F) {
	for _, tc := range readOK {
		f.Add([]byte(tc.diff))
	}
	for _, tc := range readBad {
		if len(tc.diff) < 4096 {
			f.Add([]byte(tc.diff))
		}
	}
}

// FuzzRead: Read never panics; an error comes without a change set, as a
// typed *patch.Error unless git itself failed to run; an accepted change set
// only names safe paths, one section per written path.
func FuzzRead(f *testing.F) {
	seedDiffs(f)
	f.Fuzz(func(t *testing.T, diff []byte) {
		cs, err := Read(context.Background(), diff)
		if err != nil {
			if cs != nil {
				t.Fatalf("Read(%q) = %+v with error %v", diff, cs, err)
			}
			return
		}
		written := map[string]bool{}
		for _, file := range cs.Files {
			for _, p := range file.Paths() {
				if err := patch.CheckPath(p); err != nil {
					t.Fatalf("Read(%q) accepted unsafe path: %v", diff, err)
				}
			}
			if file.NewPath != "" {
				if written[file.NewPath] {
					t.Fatalf("Read(%q) writes %q twice", diff, file.NewPath)
				}
				written[file.NewPath] = true
			}
			if file.Added < 0 || file.Deleted < 0 {
				t.Fatalf("Read(%q) negative counts %+v", diff, file)
			}
		}
		if ok, why := cs.Equal(cs); !ok {
			t.Fatalf("Read(%q) result not Equal to itself: %s", diff, why)
		}
	})
}
