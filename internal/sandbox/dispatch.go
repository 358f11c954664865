package sandbox

import (
	"os"
	"path/filepath"
)

// testExecVar marks a contained candidate command's environment for the
// test-binary wrapper: its value is the worktree. The command's go runs
// every test binary (and every `go run` program) through failpass, as
// `go test -exec` (GOFLAGS), and a failpass started with this variable
// set and an absolute path first is that wrapper (testExec).
const testExecVar = "FAILPASS_TEST_EXEC"

// A process started as `failpass __sandbox-exec CONFIG` is the helper, and
// it becomes the helper here, in this package's init, rather than in main.
// Go initializes every package a package imports before the package
// itself, so everything Main uses is ready; what it does not use (the card
// parser, the model client, the loop, net/http) is never initialized in
// the helper process. Each contained command starts one helper, so this
// is most of the start-up cost the sandbox adds per command. Any binary
// that links this package (failpass, and the test binaries of the
// packages that launch helpers) answers as the helper the same way.
//
// A process started with testExecVar set and an absolute path first is
// the test-binary wrapper go runs a candidate's test binaries through
// (testExec), here for the same reason.
func init() {
	if len(os.Args) > 1 && os.Args[1] == HelperArg {
		os.Exit(Main(os.Args[2:]))
	}
	if root, ok := os.LookupEnv(testExecVar); ok && len(os.Args) > 1 && filepath.IsAbs(os.Args[1]) {
		os.Exit(testExec(root, os.Args[1:]))
	}
}
