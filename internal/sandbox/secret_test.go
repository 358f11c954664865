package sandbox

import (
	"strings"
	"testing"
)

func TestSecretExposure(t *testing.T) {
	reach := []string{"/usr", "/home/u/go", "/repo/.git"}
	for _, tc := range []struct {
		secret            string
		landlock, mountNS bool
		hide              bool
		why               string
	}{
		{"/home/u/heldout", true, true, false, ""},
		{"/home/u/heldout", true, false, false, ""},
		{"/home/u/heldout", false, true, false, "Landlock is not available"},
		{"/home/u/go/heldout", true, true, true, ""},
		{"/home/u/go/heldout", true, false, false, "lies inside /home/u/go"},
		{"/home/u", true, true, false, "granted /home/u/go, which lies inside it"},
		{"/usr/share/t", true, true, true, ""},
	} {
		hide, why := secretExposure(tc.secret, reach, tc.landlock, tc.mountNS)
		if hide != tc.hide || (tc.why == "") != (why == "") || !strings.Contains(why, tc.why) {
			t.Errorf("secretExposure(%s, landlock %v, mountns %v) = %v, %q; want %v, %q", tc.secret, tc.landlock, tc.mountNS, hide, why, tc.hide, tc.why)
		}
	}
}
