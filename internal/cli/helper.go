package cli

import "github.com/failpass/failpass/internal/sandbox"

// runHelper runs failpass's own re-executed helpers (the sandbox's inner
// half, started by sandbox.Prepared.Launch as `failpass __sandbox-exec
// CONFIG`). It reports ok=false when args are an ordinary command line.
// It runs before flag parsing and signal handling: the helper is PID 1 of
// a namespace and installs its own.
func runHelper(args []string) (code int, ok bool) {
	if len(args) > 0 && args[0] == sandbox.HelperArg {
		return sandbox.Main(args[1:]), true
	}
	return 0, false
}
