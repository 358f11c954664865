package signoff

import (
	"time"

	"github.com/failpass/failpass/internal/card"
	"github.com/failpass/failpass/internal/heldout"
	"github.com/failpass/failpass/internal/sign"
)

// Sealed is a card that the decision table said to sign, signed: the
// card's new file bytes and the card they hold.
type Sealed struct {
	Data []byte
	Card *card.Card
	// Kept says the rewrite kept the file's comments and key order.
	Kept bool
}

// Seal signs the card whose file bytes are orig, read as c, after res
// said sign. A first signer (witness false) pins the base, the held-out
// digest and res's signoff block, and replaces any signature; a witness
// co-signs the bytes the first signer signed, which stay as they are.
// who is the signer's principal in allowed_signers.
func Seal(orig []byte, c *card.Card, res *Result, base string, held *heldout.Folder, witness bool,
	signer sign.Signer, who string, now time.Time) (*Sealed, error) {
	next := *c
	if !witness {
		next.BaseSHA = base
		if held != nil {
			h := *c.HeldOut
			h.Digest = held.Digest
			next.HeldOut = &h
		}
		next.Signoff = res.Signoff(now)
		next.Signatures = nil
	}
	canon, err := next.Canonical()
	if err != nil {
		return nil, err
	}
	armored, err := signer.Sign(sign.NamespaceCard, canon)
	if err != nil {
		return nil, err
	}
	next.Signatures = append(append([]card.Signature(nil), next.Signatures...), card.Signature{Principal: who, Signature: string(armored)})
	data, kept, err := card.Rewrite(orig, &next, func(d *card.Doc) {
		if !witness {
			d.SetBaseSHA(base)
			if held != nil {
				d.SetHeldOutDigest(held.Digest)
			}
			d.SetSignoff(next.Signoff)
		}
		d.SetSignatures(next.Signatures)
	})
	if err != nil {
		return nil, err
	}
	return &Sealed{Data: data, Card: &next, Kept: kept}, nil
}
