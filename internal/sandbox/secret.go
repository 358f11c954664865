package sandbox

import (
	"fmt"
	"path/filepath"
)

// Secrets. A Policy's Secret folders hold what no command may read: a
// card's held-out folder when the held-out run is judged on its exact
// output (held_out.expect_stdout), whose expected bytes a candidate that
// could read them would simply print. Landlock keeps every folder the
// policy does not grant unreadable; a secret that lies inside a granted
// one (a held-out folder under a toolchain folder on PATH) is hidden by
// an empty tmpfs in the command's mount namespace, and where neither
// holds the command does not start (*SecretError).

// SecretError is a Secret folder the sandbox cannot keep from a command.
type SecretError struct {
	Path string
	Why  string
}

func (e *SecretError) Error() string {
	return fmt.Sprintf("sandbox: cannot keep %s from the command: %s", e.Path, e.Why)
}

// secretExposure says how secret (a real, absolute path) could be read by
// a command granted reach (real, absolute paths) on a machine with or
// without Landlock and a mount namespace; hide says it must be covered
// with an empty tmpfs (it lies inside a granted folder); why is "" when
// the secret can be kept, else the reason it cannot. Pure.
func secretExposure(secret string, reach []string, landlock, mountNS bool) (hide bool, why string) {
	if !landlock {
		return false, "Landlock is not available here, and without it a command may read any folder the user can"
	}
	for _, r := range reach {
		if r == "" {
			continue
		}
		switch {
		case within(secret, r):
			// Granted below the secret: hiding the secret would hide the
			// grant, and granting it would show part of the secret.
			return false, fmt.Sprintf("the command is granted %s, which lies inside it", r)
		case within(r, secret):
			if !mountNS {
				return false, fmt.Sprintf("it lies inside %s, which the command may read, and no mount namespace can hide it here", r)
			}
			hide = true
		}
	}
	return hide, ""
}

// realSecret resolves a Secret folder to its real path.
func realSecret(p string) (string, error) {
	if !filepath.IsAbs(p) {
		return "", &SecretError{Path: p, Why: "not an absolute path"}
	}
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", &SecretError{Path: p, Why: err.Error()}
	}
	return r, nil
}
