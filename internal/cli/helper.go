package cli

// runHelper runs failpass's own re-executed helpers (the sandbox's inner
// half). It reports ok=false when args are an ordinary command line.
func runHelper(args []string) (code int, ok bool) {
	return 0, false
}
