package loop

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/failpass/failpass/internal/card"
	"github.com/failpass/failpass/internal/gate"
	"github.com/failpass/failpass/internal/report"
	"github.com/failpass/failpass/internal/sign"
)

// Recorder keeps each attempt's gate verdict as a signed record beside the
// loop's documents (--record-key): the gate runs the card on the
// cumulative diff from the card's base to the attempt's commit, and the
// verdict's JSON is signed in the failpass-record-v1 namespace.
type Recorder struct {
	Signer        sign.Signer
	Trust         func(*card.Card) ([]string, error)
	AllowUnsigned bool
	Env           func(card.Command) []string
	CardPath      string
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
	c := e.cfg.Card.Card
	diff, err := e.repo.Git(ctx, "diff", "--binary", "--no-color", "--no-ext-diff", "--no-textconv", c.BaseSHA, commit, "--")
	if err != nil {
		return err
	}
	name := "attempt-" + strconv.Itoa(seq)
	v, err := gate.Run(ctx, gate.Options{Repo: e.repo, Card: c, CardPath: r.CardPath, Diff: diff,
		DiffName: fmt.Sprintf("%s (%s)", name, short(commit)), Base: c.BaseSHA, Trust: r.Trust, AllowUnsigned: r.AllowUnsigned,
		LogDir: filepath.Join(e.logDir(), name+"-gate"), Env: r.Env})
	if err != nil {
		return err
	}
	var b bytes.Buffer
	if err := report.JSON(&b, v); err != nil {
		return err
	}
	sig, err := r.Signer.Sign(sign.NamespaceRecord, b.Bytes())
	if err != nil {
		return err
	}
	dir := filepath.Join(e.store.Dir, "records")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := writeAtomic(filepath.Join(dir, name+".json"), b.Bytes()); err != nil {
		return err
	}
	if err := writeAtomic(filepath.Join(dir, name+".json.sig"), sig); err != nil {
		return err
	}
	e.logf("attempt %d: gate %s, signed record %s", seq, v.Verdict, filepath.Join(dir, name+".json"))
	return nil
}
