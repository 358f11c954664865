package cli

import "github.com/failpass/failpass/internal/card"

// cardTrust loads an allowed_signers file and returns the gate's
// card.signature check. Replaced by the signing work (issue 3).
func cardTrust(path string) (func(*card.Card) ([]string, error), error) {
	return nil, notBuilt("signature verification (--allowed-signers)")
}
