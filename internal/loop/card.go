package loop

import (
	"context"
	"fmt"
	"io"

	"github.com/failpass/failpass/internal/budget"
	"github.com/failpass/failpass/internal/card"
	"github.com/failpass/failpass/internal/gate"
	"github.com/failpass/failpass/internal/gitpatch"
	"github.com/failpass/failpass/internal/gitx"
	"github.com/failpass/failpass/internal/loopdoc"
	"github.com/failpass/failpass/internal/shellquote"
	"github.com/failpass/failpass/internal/sign"
)

// Validation command names a card's commands get in the invocation.
const (
	cardFocusedName = "card pass command"
	cardFullName    = "card invariant"
)

// CardPolicy is a card acting as the loop's change contract: its pass
// command is the focused validation, its invariant the full one, and its
// effective budget bounds the cumulative diff from its base to every
// attempt.
type CardPolicy struct {
	// The card bound to the repository (gate.Bind), whose base holds:
	// the base of every attempt's budget, the environment of its
	// commands, and InRepo, its path in the repository ("" outside it; an
	// oracle file inside).
	*gate.Bound
	// Scope is what the card protects over its base tree
	// (budget.CardScope): its effective budget and oracle files.
	Scope budget.Scope
}

// NewCardPolicy prepares the card b binds for the loop: its scope is read
// from its base tree. A base that does not hold stops the loop before it
// starts.
func NewCardPolicy(ctx context.Context, b *gate.Bound) (*CardPolicy, error) {
	if b.BaseErr != nil {
		return nil, &InputError{Msg: fmt.Sprintf("card %s: %v", b.Path, b.BaseErr),
			Hint: "or sign the card (failpass card sign) at a base_ref that names a commit here"}
	}
	p := &CardPolicy{Bound: b}
	files, err := gitpatch.BaseFiles(ctx, b.Repo, b.Base)
	if err != nil {
		return nil, fmt.Errorf("card base %s: %w", b.Base, err)
	}
	p.Scope = budget.CardScope(b.Card, p.InRepo, func(f string) bool { return files[f] })
	return p, nil
}

// ValidationCommands are the invocation's validation entries for the card.
func (p *CardPolicy) ValidationCommands() []loopdoc.ValidationCommand {
	return []loopdoc.ValidationCommand{
		{Name: cardFocusedName, Command: shellquote.Join(p.Card.Pass.Cmd), Scope: "focused"},
		{Name: cardFullName, Command: shellquote.Join(p.Card.Invariant.Cmd), Scope: "full"},
	}
}

// command returns the card command behind a validation entry.
func (p *CardPolicy) command(c loopdoc.ValidationCommand) (card.Command, bool) {
	if p == nil {
		return card.Command{}, false
	}
	switch {
	case c.Name == cardFocusedName && c.Scope == "focused":
		return p.Card.Pass, true
	case c.Name == cardFullName && c.Scope == "full":
		return p.Card.Invariant, true
	}
	return card.Command{}, false
}

// Outside says why a path is outside the card's scope ("" when inside):
// it is an oracle file, or a deny glob matches it.
func (p *CardPolicy) Outside(path string) string {
	return p.Scope.Outside(path)
}

// CheckTree applies the card's budget, with the gate's rules
// (budget.harness included), to the cumulative change from the card's
// base to tree: a tree failpass built (attemptTree), read by git from
// objects alone, never from a worktree a role wrote.
func (p *CardPolicy) CheckTree(ctx context.Context, repo *gitx.Repo, tree string) (*budget.Finding, error) {
	cs, err := gitpatch.ActualTree(ctx, repo, p.Base, tree)
	if err != nil {
		return nil, err
	}
	inputs, err := p.HarnessInputs(ctx, cs.Paths())
	if err != nil {
		return nil, err
	}
	s := p.Scope
	s.Harness = inputs
	return s.Check(cs), nil
}

// LoadCard reads the card the settings name, checks its signature as the
// gate would (st.AllowedSigners, else git config
// gpg.ssh.allowedSignersFile; never a file inside failpass's worktrees)
// unless st.AllowUnsigned, which it says on log, and binds it to repo.
// It returns the signature check too, for the attempts' gate records
// (nil for an unsigned card).
func LoadCard(ctx context.Context, repo *gitx.Repo, st *Settings, getenv func(string) string, log io.Writer) (*CardPolicy, sign.Trust, error) {
	c, err := card.Load(st.Card)
	if err != nil {
		return nil, nil, err
	}
	var trust sign.Trust
	if st.AllowUnsigned {
		fmt.Fprintln(log, "failpass: warning: --allow-unsigned: the card's commands were not verified by any signer")
	} else {
		if trust, err = gate.TrustIn(ctx, repo, st.AllowedSigners); err != nil {
			return nil, nil, err
		}
		if trust == nil {
			return nil, nil, &InputError{Msg: fmt.Sprintf("card %s: no allowed signers to check its signature against", st.Card),
				Hint: "pass --allowed-signers FILE, or set git config gpg.ssh.allowedSignersFile, or --allow-unsigned deliberately"}
		}
		if _, err := trust(c); err != nil {
			return nil, nil, &InputError{Msg: fmt.Sprintf("card %s: signature: %v", st.Card, err),
				Hint: "sign it with 'failpass card sign', or pass --allow-unsigned deliberately"}
		}
	}
	b, err := gate.Bind(ctx, repo, c, st.Card, getenv)
	if err != nil {
		return nil, nil, err
	}
	p, err := NewCardPolicy(ctx, b)
	return p, trust, err
}
