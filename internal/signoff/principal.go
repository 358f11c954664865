package signoff

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/failpass/failpass/internal/gitx"
	"github.com/failpass/failpass/internal/sign"
)

// A Principal is the name card sign signs as, and why.
type Principal struct {
	Name string
	// From says where the name came from when the signer did not give
	// it; "" when they did.
	From string
	// Unlisted, when set, warns that the repository's allowed_signers
	// lists the key under other names only: a gate that trusts the file
	// will not accept the signature.
	Unlisted string
}

// ChoosePrincipal chooses the name a signer with the key of fingerprint fp
// signs as: flag when given, else the name the repository's
// allowed_signers (git config gpg.ssh.allowedSignersFile, which the gate
// reads too) gives the key, else git config user.email. The gate accepts
// a signature only under a name allowed_signers lists for its key, so
// signing as user.email where the file names the key otherwise made a
// card no gate trusted. A name that cannot be one is an error.
func ChoosePrincipal(ctx context.Context, repo *gitx.Repo, flag, fp string) (Principal, error) {
	var listed []string
	file, _ := repo.ConfigPath(ctx, "gpg.ssh.allowedSignersFile") // unset or unreadable: no file to ask
	if file != "" {
		if as, err := sign.ReadAllowedSigners(file); err == nil {
			for _, e := range as.Listed(fp) {
				listed = append(listed, e.Principals...)
			}
		}
	}
	p := Principal{Name: flag}
	if flag == "" {
		email, _ := repo.Config(ctx, "user.email") // unset or unreadable: refused below
		switch {
		case len(listed) > 0 && !slices.Contains(listed, email):
			p.Name, p.From = listed[0], "the name "+file+" gives this key"
			if email != "" {
				p.From += "; git config user.email is " + email
			}
		case len(listed) > 0:
			p.Name, p.From = email, "git config user.email, which "+file+" lists for this key"
		default:
			p.Name, p.From = email, "git config user.email; if allowed_signers names your key otherwise, pass --principal NAME"
		}
	}
	if p.Name == "" || strings.ContainsAny(p.Name, " \t\r\n,\"") {
		return Principal{}, fmt.Errorf("no usable signer principal (%q)", p.Name)
	}
	if flag != "" && len(listed) > 0 && !slices.Contains(listed, flag) {
		p.Unlisted = fmt.Sprintf("%s lists this key as %s, not as %s: a gate that trusts it will not accept this signature",
			file, strings.Join(listed, ", "), flag)
	}
	return p, nil
}
