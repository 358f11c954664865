package sign

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/failpass/failpass/internal/card"
)

// Trust decides a card's card.signature rule: it returns the principals
// whose allowed keys signed the card's canonical bytes, and a *TrustError
// when the signatures do not meet the policy. A nil Trust means no
// allowed signers were given: the gate then treats the card as unsigned.
// Expiry and base are the gate's own rules (card.expired, card.base) and
// are not part of it.
//
// It is the one type the gate (gate.Options.Trust), the loop
// (loop.Recorder.Trust) and the cli pass the check around as.
type Trust func(c *card.Card) (signers []string, err error)

// LoadTrust reads allowed signers from path (refused when it lies inside
// one of the refused folders, such as a worktree a candidate patches; see
// ReadAllowedSigners) and returns the check that at least one allowed key
// signed the card, at the time of each check.
func LoadTrust(path string, refused ...string) (Trust, error) {
	as, err := ReadAllowedSigners(path, refused...)
	if err != nil {
		return nil, err
	}
	return CardTrust(as, 1, time.Now), nil
}

// CardTrust is the card.signature check over allowed signers as: at least
// threshold distinct allowed keys signed the card's canonical bytes in
// NamespaceCard.
func CardTrust(as *AllowedSigners, threshold int, now func() time.Time) Trust {
	return func(c *card.Card) ([]string, error) {
		t, err := VerifyCard(c, as, now())
		if err != nil {
			return nil, err
		}
		var ok []string
		for _, v := range t.Valid {
			ok = append(ok, v.Principal)
		}
		e := &TrustError{}
		for _, inv := range t.Invalid {
			e.Invalid = append(e.Invalid, fmt.Sprintf("signature %d by %s: %s", inv.Index+1, c.Signatures[inv.Index].Principal, ReasonOf(inv.Err)))
		}
		switch {
		case len(c.Signatures) == 0:
			e.Problems = append(e.Problems, "the card is not signed")
		case t.Keys < threshold:
			e.Problems = append(e.Problems, fmt.Sprintf("%d distinct allowed key(s) signed, threshold %d", t.Keys, threshold))
		}
		if len(e.Problems) > 0 {
			return ok, e
		}
		return ok, nil
	}
}

// VerifyCard verifies every signature on c over its canonical bytes, in
// the card namespace.
func VerifyCard(c *card.Card, as *AllowedSigners, now time.Time) (*Tally, error) {
	canon, err := c.Canonical()
	if err != nil {
		return nil, err
	}
	claims := make([]Claim, len(c.Signatures))
	for i, s := range c.Signatures {
		claims[i] = Claim{Principal: s.Principal, Armored: []byte(s.Signature)}
	}
	return as.VerifyClaims(NamespaceCard, canon, claims, now), nil
}

// CardProblems lists why a card whose signatures were tallied is still
// not valid (`card verify`): too few distinct allowed keys, or an expiry
// that has passed. Each line starts with the rule id the gate would
// break.
func CardProblems(c *card.Card, t *Tally, threshold int, now time.Time) []string {
	var p []string
	switch {
	case len(c.Signatures) == 0:
		p = append(p, "card.signature: the card is not signed")
	case t.Keys < threshold:
		p = append(p, fmt.Sprintf("card.signature: %d distinct allowed key(s) signed, threshold %d", t.Keys, threshold))
	}
	if c.Expires != nil && now.After(*c.Expires) {
		p = append(p, fmt.Sprintf("card.expired: the card expired at %s", c.Expires.UTC().Format(time.RFC3339)))
	}
	return p
}

// TrustError is a card whose signatures do not meet the trust policy:
// the gate's card.signature rule.
type TrustError struct {
	Problems []string
	Invalid  []string // one line per refused signature
}

func (e *TrustError) Error() string {
	msg := strings.Join(e.Problems, "; ")
	if len(e.Invalid) > 0 {
		msg += " (" + strings.Join(e.Invalid, "; ") + ")"
	}
	return msg
}

// UserFacing marks the error as the card's or the signer's to fix.
func (e *TrustError) UserFacing() bool { return true }

// ReasonOf is why a signature was refused as failpass prints it: the
// stable reason and its detail for a *VerifyError, else the error.
func ReasonOf(err error) string {
	var ve *VerifyError
	if errors.As(err, &ve) {
		if ve.Detail != "" {
			return string(ve.Reason) + ": " + ve.Detail
		}
		return string(ve.Reason)
	}
	return err.Error()
}
