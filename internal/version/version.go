// Package version owns failpass's version string, which cards, records and
// cache keys carry.
package version

import "runtime/debug"

// Version is set by the release build (-ldflags "-X ...version.Version=v1.2.3").
var Version = ""

// String returns "failpass <version>", falling back to the module version
// or "devel".
func String() string {
	v := Version
	if v == "" {
		if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			v = bi.Main.Version
		} else {
			v = "devel"
		}
	}
	return "failpass " + v
}
