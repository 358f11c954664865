package run

import "os"

// The environments failpass gives the programs it runs, in one place.
// Nothing else of failpass's own environment reaches a child: never a
// token or an API key (a model adapter passes its key itself, to the
// HTTP call that needs it).

// CommandEnv names the variables of failpass's environment a card's
// commands see (gate.DefaultEnv adds the card's signed env): where
// programs and toolchains are, the locale, the time zone, the terminal.
// The gate, `card sign`, the loop's validation of a card's commands and
// the build cache's key all take it from here; a caller that needs more
// says which and why (`card init`'s interpreter probe adds pyenv's
// variables).
var CommandEnv = []string{"PATH", "HOME", "LANG", "LC_ALL", "TZ", "TMPDIR", "GOPATH", "GOROOT", "GOMODCACHE", "GOCACHE", "GOFLAGS", "CARGO_HOME", "RUSTUP_HOME", "VIRTUAL_ENV", "TERM"}

// Allowed is KEY=VALUE for each of names getenv sets (non-empty), in
// the order of names.
func Allowed(getenv func(string) string, names ...string) []string {
	var env []string
	for _, k := range names {
		if v := getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// MinimalEnv is the environment of a program failpass runs on its own
// behalf rather than a card's (a model role's cmd: program, a loop
// validation command a card does not own, a Spec without Env): enough to
// find programs, a home and a temp folder. PATH is execvp's default when
// unset, HOME / when unset, LANG C.UTF-8, TMPDIR os.TempDir().
func MinimalEnv(getenv func(string) string) []string {
	path := getenv("PATH")
	if path == "" {
		path = "/usr/local/bin:/usr/bin:/bin"
	}
	home := getenv("HOME")
	if home == "" {
		home = "/"
	}
	tmp := getenv("TMPDIR")
	if tmp == "" {
		tmp = os.TempDir()
	}
	return []string{"PATH=" + path, "HOME=" + home, "LANG=C.UTF-8", "TMPDIR=" + tmp}
}
