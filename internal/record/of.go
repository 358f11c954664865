package record

import (
	"context"
	"github.com/failpass/failpass/internal/verdict"
	"time"

	"github.com/failpass/failpass/internal/card"
	"github.com/failpass/failpass/internal/gitx"
	"github.com/failpass/failpass/internal/sign"
	"github.com/failpass/failpass/internal/version"
)

// Of builds the record of gate verdict v on diff for card c in repo. It
// takes what the verdict carries as it is: the patched tree (v.Tree, when
// the gate ran with Options.PatchedTree) and the numstat of its change set
// (v.Changes). What the verdict lacks, because the gate stopped before
// computing it, is computed here the same way: the tree git makes from
// the verdict's base (or, when the gate stopped before resolving it, from
// the card's own base), and git's reading of the diff. Then this
// failpass's version and at. It is the one builder of the records `gate
// --record` writes and the loop keeps per attempt. Nothing here runs a
// card command; a tree is built in git's object store.
func Of(ctx context.Context, repo *gitx.Repo, c *card.Card, diff []byte, v *verdict.Verdict, at time.Time) (*Statement, error) {
	patched, err := patchedOf(ctx, repo, c, diff, v)
	if err != nil {
		return nil, err
	}
	var files []FileStat
	if v.Changes != nil {
		files = Numstat(v.Changes)
	} else if files, err = ReadNumstat(ctx, diff); err != nil {
		return nil, err
	}
	return New(v, c, diff, patched, files, version.String(), at)
}

// patchedOf is the record's subject tree: the verdict's when it carries
// one, else PatchedTree of its base; nil when no base is a commit here.
func patchedOf(ctx context.Context, repo *gitx.Repo, c *card.Card, diff []byte, v *verdict.Verdict) (*Patched, error) {
	if v.Tree != "" && v.Base != "" {
		return &Patched{Base: v.Base, Tree: v.Tree, Applied: true}, nil
	}
	base := v.Base
	if base == "" {
		// The gate stopped before card.base (an unsigned card): the record
		// still names the tree the card's base would have been patched to.
		if out, err := repo.Commit(ctx, c.BaseRev()); err == nil {
			base = out
		}
	}
	if base == "" {
		return nil, nil
	}
	return PatchedTree(ctx, repo, base, diff)
}

// Signed is Of, in canonical bytes, with their signature by s.
func Signed(ctx context.Context, repo *gitx.Repo, c *card.Card, diff []byte, v *verdict.Verdict, at time.Time, s sign.Signer) (data, sig []byte, err error) {
	st, err := Of(ctx, repo, c, diff, v, at)
	if err != nil {
		return nil, nil, err
	}
	if data, err = st.Canonical(); err != nil {
		return nil, nil, err
	}
	if sig, err = Sign(s, data); err != nil {
		return nil, nil, err
	}
	return data, sig, nil
}
