package loop

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/failpass/failpass/internal/gate"
	"github.com/failpass/failpass/internal/record"
	"github.com/failpass/failpass/internal/sign"
)

// Recorder keeps each attempt's gate run as a signed record beside the
// loop's documents (--record-key): the gate runs the card on the
// cumulative diff from the card's base to the attempt's commit, and its
// record is the very in-toto statement `gate --record` writes
// (record.Of), signed in the failpass-record-v1 namespace, so `failpass
// record verify` checks it like any other.
type Recorder struct {
	Signer        sign.Signer
	Trust         sign.Trust
	AllowUnsigned bool
	// The card, its environment and its path come from the loop's card
	// (Config.Card). There is no sandbox setting: the record's gate runs the attempt's
	// code, so it is always contained (gate.Options' zero value), even
	// under a loop's --sandbox=off, and the record carries its report.
}

// recordAttempt writes records/attempt-<seq>.json and its .sig for the
// attempt commit. A record that cannot be made is reported and the loop
// goes on: the record is evidence about the attempt, not a condition of it.
func (e *engine) recordAttempt(seq int, commit string) {
	r := e.cfg.Record
	if r == nil || e.cfg.Card == nil {
		return
	}
	if err := e.writeRecord(e.ctx, r, seq, commit); err != nil {
		e.logf("warning: attempt %d: no signed gate record: %v", seq, err)
	}
}

func (e *engine) writeRecord(ctx context.Context, r *Recorder, seq int, commit string) error {
	b := e.cfg.Card.Bound
	diff, err := e.repo.Git(ctx, "diff", "--binary", "--no-color", "--no-ext-diff", "--no-textconv", b.Base, commit, "--")
	if err != nil {
		return err
	}
	name := "attempt-" + strconv.Itoa(seq)
	v, err := gate.Run(ctx, gate.Options{Bound: b, Diff: diff,
		DiffName: fmt.Sprintf("%s (%s)", name, short(commit)), Trust: r.Trust, AllowUnsigned: r.AllowUnsigned,
		LogDir: filepath.Join(e.logDir(), name+"-gate"), PatchedTree: true})
	if err != nil {
		return err
	}
	data, sig, err := record.Signed(ctx, e.repo, b.Card, diff, v, time.Now(), r.Signer)
	if err != nil {
		return err
	}
	dir := filepath.Join(e.store.Dir, "records")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := record.Write(filepath.Join(dir, name+".json"), data, sig); err != nil {
		return err
	}
	e.logf("attempt %d: gate %s, signed record %s", seq, v.Verdict, filepath.Join(dir, name+".json"))
	return nil
}
