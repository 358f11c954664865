// Command failpass locks a fix to a signed fail-pass contract card and gates
// candidate patches against it. See the README for usage.
package main

import (
	"os"

	"github.com/failpass/failpass/internal/cli"
)

func main() {
	undumpable()
	os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
