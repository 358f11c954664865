//go:build !linux

package sandbox

import (
	"fmt"
	"os"
)

// Off Linux there is no Landlock: no command gets the wrapper.
func testExecEnv(func(string) string, func(k, v string), string, string, string) {}

func testExec(string, []string) int {
	fmt.Fprintln(os.Stderr, "failpass: no test-binary wrapper on this system")
	return 125
}
