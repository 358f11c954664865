package cli

import (
	"context"
	"fmt"

	"github.com/failpass/failpass/internal/version"
)

func runVersion(ctx context.Context, env *Env, args []string) error {
	fs := newFlags(env, "version", "failpass version")
	if _, err := fs.parse(args); err != nil {
		return err
	}
	// The first line is the one scripts read; the second says what a bug
	// report needs besides: the toolchain, the platform and, since a
	// development build's version names no exact build, a digest of this
	// executable (the one the verdict cache keys on).
	fmt.Fprintln(env.Stdout, version.String())
	build := version.Build()
	if d := version.Executable(); d != "" {
		build += ", executable " + d[:len("sha256:")+16]
	}
	fmt.Fprintln(env.Stdout, build)
	return nil
}
