package cli

import "github.com/failpass/failpass/internal/sign"

// CardTrustError is the card.signature refusal (sign.TrustError).
type CardTrustError = sign.TrustError

// cardTrustFromFile is the card.signature check over the allowed signers
// at path, refused when the file lies inside one of the refused folders
// (sign.LoadTrust). The loop checks its card with it; a gate's trust
// roots are signoff.TrustIn's.
func cardTrustFromFile(path string, refused ...string) (sign.Trust, error) {
	return sign.LoadTrust(path, refused...)
}
