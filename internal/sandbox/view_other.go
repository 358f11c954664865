//go:build !linux

package sandbox

import "errors"

// errNoView: off Linux there are no namespaces and no Landlock.
var errNoView = errors.New("no private view of the file system off Linux")

// ViewSupport says how this machine would contain a process in a View:
// it cannot, off Linux.
func ViewSupport() (Report, error) {
	r := Report{Applied: []string{}, Missing: []string{string(Filesystem), string(Processes)}, Features: []string{},
		Why: map[string]string{string(FeatMountNS): "not Linux", string(FeatLandlock): "not Linux"}}
	return r, errNoView
}

// Prepare refuses: off Linux no view can be made.
func (v *View) Prepare(root string, base []string) (*Prepared, error) {
	return nil, &Error{Step: "view", Err: errNoView.Error()}
}
