// Package version owns failpass's version string, which cards, records and
// cache keys carry.
package version

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
)

// Version is set by the release build (-ldflags "-X ...version.Version=v1.2.3").
var Version = ""

// Line is the release line this source tree belongs to. It names a build
// when nothing better is known: a `go install` with -buildvcs=false (a
// common GOFLAGS setting, and the default outside a git checkout) records
// neither a module version nor a commit, and "devel" says nothing a bug
// report can use.
const Line = "v0.22.0-dev"

// String returns "failpass <version>": the release build's Version, else
// the module version (go install ...@v1.2.3), else Line with the commit
// the binary was built from when the build recorded one
// ("v0.22.0-dev+2c79e6a1b2c3", "+...-dirty" for uncommitted changes).
func String() string {
	if Version != "" {
		return "failpass " + Version
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "failpass " + Line
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return "failpass " + v
	}
	v := Line
	var rev, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "-dirty"
			}
		}
	}
	if rev != "" {
		v += "+" + rev[:min(12, len(rev))] + dirty
	}
	return "failpass " + v
}

// Build describes the toolchain and platform of this binary, for
// `failpass version`: "go1.26.8 linux/amd64".
func Build() string {
	return strings.Join([]string{runtime.Version(), runtime.GOOS + "/" + runtime.GOARCH}, " ")
}

// Executable returns "sha256:<hex>" of the running binary's file, computed
// once, or "" when it cannot be read. A development build's version names
// no exact build; this does (the verdict cache keys on it).
var Executable = sync.OnceValue(func() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	f, err := os.Open(exe)
	if err != nil {
		return ""
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return ""
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
})
