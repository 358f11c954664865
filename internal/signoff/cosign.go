package signoff

import (
	"github.com/failpass/failpass/internal/card"
	"github.com/failpass/failpass/internal/sign"
)

// CheckCosign refuses a co-signature by the key with fingerprint fp that
// would not be over what the card's signers signed. A co-signer re-runs
// the table and signs the same bytes, so the card must carry the signoff
// and base_sha its first signer wrote, every signature must still match
// its bytes (a signed field edited since would get a signature nobody
// else made), and the key must not have signed already. It checks
// integrity only, not who signed: that is the gate's trust.
func CheckCosign(c *card.Card, cardPath, fp string) error {
	if c.Signoff == nil || c.BaseSHA == "" {
		return errorf("%s carries signatures but no signoff or base_sha", cardPath).
			hint("re-run the decision table and replace the signatures: failpass card sign --force --card %s", cardPath)
	}
	canon, err := c.Canonical()
	if err != nil {
		return err
	}
	for i, s := range c.Signatures {
		sfp, err := sign.CheckIntegrity(sign.NamespaceCard, canon, []byte(s.Signature))
		if err != nil {
			return errorf("%s: signature %d (%s) does not match the card: %v", cardPath, i+1, s.Principal, err).
				hint("a signed field changed since it was signed; to re-run the table and replace every signature: failpass card sign --force --card %s", cardPath)
		}
		if sfp == fp {
			return errorf("%s is already signed by key %s (as %s)", cardPath, fp, s.Principal).
				hint("a co-signature needs another maintainer's key; to re-sign from scratch pass --force")
		}
	}
	return nil
}
