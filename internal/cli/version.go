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
	fmt.Fprintln(env.Stdout, version.String())
	return nil
}
