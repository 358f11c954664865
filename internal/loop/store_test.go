package loop

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/failpass/failpass/internal/loopdoc"
)

// A checkpoint that breaks the contract is refused before it is written:
// the one on disk stays as it was, and no temp file is left.
func TestInvalidCheckpointIsNeverWritten(t *testing.T) {
	s := newScen(t, "hello world\n")
	inv := s.invocation("store", 3)
	_, invDoc, err := checkInvocation(inv)
	if err != nil {
		t.Fatal(err)
	}
	e := newEngine(context.Background(), s.repo, inv, invDoc, Config{})
	e.cp = initialCheckpoint(inv)
	if err := e.save("resolve", "start"); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(e.store.Dir, checkpointFile)
	before, _ := os.ReadFile(p)
	// A committed attempt that head_history does not show.
	e.cp.CycleAttempts = append(e.cp.CycleAttempts, cycleAttempt(1, s.head, "committed", s.base))
	err = e.save("fix", "next")
	var de *DocumentError
	if !errors.As(err, &de) || len(de.Violations) == 0 {
		t.Fatalf("save(invalid) = %v, want a DocumentError", err)
	}
	if after, _ := os.ReadFile(p); string(after) != string(before) {
		t.Fatal("an invalid checkpoint reached the disk")
	}
	ents, _ := os.ReadDir(e.store.Dir)
	for _, ent := range ents {
		if ent.Name() != invocationFile && ent.Name() != checkpointFile {
			t.Errorf("left behind: %s", ent.Name())
		}
	}
}

func cycleAttempt(seq int, from, outcome, result string) loopdoc.CycleAttempt {
	return loopdoc.CycleAttempt{Sequence: seq, StartedFromHead: from, Outcome: outcome, ResultingHead: result}
}
