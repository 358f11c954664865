package cli

import (
	"context"
	"fmt"
	"github.com/failpass/failpass/internal/verdict"
	"os"
	"path/filepath"
	"time"

	"github.com/failpass/failpass/internal/card"
	"github.com/failpass/failpass/internal/gitx"
	"github.com/failpass/failpass/internal/record"
	"github.com/failpass/failpass/internal/sign"
)

// gateRecord writes the signed record of one gate run (--record): the
// in-toto statement at path, its SSHSIG (namespace failpass-record-v1) at
// path.sig. A failing verdict is recorded too: a record of a refusal is
// evidence. Nothing here runs a card command; the patched tree is built in
// git's object store.
func gateRecord(ctx context.Context, env *Env, repo *gitx.Repo, c *card.Card, diff []byte, v *verdict.Verdict, path, key string) error {
	signer, err := sign.LoadSigner(key, env.Getenv)
	if err != nil {
		return err
	}
	data, sig, err := record.Signed(ctx, repo, c, diff, v, time.Now(), signer)
	if err != nil {
		return err
	}
	if err := record.Write(path, data, sig); err != nil {
		return Errorf("cannot write the record: %v", err).Hint("--record names a file in a writable folder")
	}
	fmt.Fprintf(env.Stderr, "record: %s (%s), signature %s\n", path, record.Digest(data), record.SigPath(path))
	return nil
}

// gateRecordPreflight checks, before the gate runs anything, that the
// record can be signed and written: the key loads (an encrypted key or an
// empty agent is refused now rather than after minutes of commands) and
// the record's folder exists. gateRecord checks again; this only moves the
// failure before the side effects.
func gateRecordPreflight(env *Env, path, key string) error {
	if _, err := sign.LoadSigner(key, env.Getenv); err != nil {
		return err
	}
	dir := filepath.Dir(path)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return Errorf("--record %s: folder %s does not exist", path, dir).Hint("create the folder, or write the record elsewhere")
	}
	return nil
}
