package fromcommit

import (
	"context"
	"fmt"
	"path"
	"path/filepath"
	"regexp"

	"github.com/failpass/failpass/internal/card"
	"github.com/failpass/failpass/internal/run"
)

// A Go fix whose module requires other modules needs them in the module
// cache before its tests build, at the base's versions: `go mod download`
// in the user's checkout fetches the checkout's, which may not be the
// base's. So from-commit fetches the base's itself, and the card it
// writes carries the prepare command that fetches them on a clean
// machine (a CI runner), where the gate would otherwise stop at base.fail.

var goRequire = regexp.MustCompile(`(?m)^\s*require\b`)

// goNeedsModules says whether the base's module at modRoot requires other
// modules and does not vendor them.
func (b *builder) goNeedsModules(ctx context.Context, modRoot string) (bool, error) {
	mod, err := catFile(ctx, b.o.Repo, b.inst.Base, path.Join(modRoot, "go.mod"))
	if err != nil || mod == nil || !goRequire.Match(mod) {
		return false, err
	}
	vendored, err := catFile(ctx, b.o.Repo, b.inst.Base, path.Join(modRoot, "vendor", "modules.txt"))
	return vendored == nil, err
}

// goPrepare is the prepare command of a card whose module at modRoot
// needs other modules.
func goPrepare(modRoot string) *card.Prepare {
	return &card.Prepare{Workdir: modRoot, Cmd: []string{"go", "mod", "download"}, Timeout: card.DefaultTimeout}
}

// goModDownloadEnv names what `go mod download` reads of the user's
// environment besides what every command gets: where to fetch from and
// how to reach it.
var goModDownloadEnv = []string{"GOPROXY", "GOPRIVATE", "GONOPROXY", "GONOSUMDB", "GONOSUMCHECK", "GOSUMDB", "GOINSECURE", "GOAUTH", "NETRC",
	"HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY", "https_proxy", "http_proxy", "no_proxy", "SSL_CERT_FILE", "SSL_CERT_DIR"}

// goModDownload fetches the base's modules into the user's module cache,
// with the network, as the user would by hand in a checkout of the base:
// `go mod download` reads go.mod and go.sum and runs no code of the
// repository, so it runs outside the sandbox (which has no network). A
// failure is not the commit's fault, and may not matter (the modules may
// be in the cache already): it becomes a note, and the test runs that
// follow say what is missing.
func (b *builder) goModDownload(ctx context.Context, modRoot string) {
	if err := b.wt.Reset(ctx, b.inst.Base); err != nil {
		b.inst.Notes = append(b.inst.Notes, fmt.Sprintf("the base's modules were not fetched: %v", err))
		return
	}
	cmd := card.Command{Workdir: modRoot, Cmd: []string{"go", "mod", "download"}, Timeout: card.DefaultTimeout}
	var env []string
	if b.o.Env != nil {
		env = b.o.Env(cmd)
	}
	if b.o.Getenv != nil {
		env = append(env, run.Allowed(b.o.Getenv, goModDownloadEnv...)...)
	}
	// The toolchain the user has, and the base's module alone (a go.work
	// above it would pull in others).
	env = append(env, "GOTOOLCHAIN=local", "GOWORK=off")
	b.nlog++
	log := filepath.Join(b.o.LogDir, fmt.Sprintf("%02d-base-go-mod-download.log", b.nlog))
	res, err := run.Run(ctx, run.Spec{Argv: cmd.Cmd, Root: b.wt.Dir, Workdir: modRoot, Env: env, Timeout: card.DefaultTimeout, Log: log, MaxLog: maxLog})
	switch {
	case err != nil:
		b.inst.Notes = append(b.inst.Notes, fmt.Sprintf("the base's modules were not fetched (go mod download: %v)", err))
	case res.Exit != 0 || res.Inconclusive():
		b.inst.Notes = append(b.inst.Notes, fmt.Sprintf("go mod download at the base failed (%s; log: %s): the tests can use only what the module cache already holds", res, log))
	}
}
