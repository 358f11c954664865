package sandbox

import (
	"fmt"
	"slices"
	"strings"
)

// RoleShortfall says what a role program contained here goes without,
// as one line for a human summary ("contained without the network
// layer(s): network: no network namespace ..."), or "" when nothing is
// missing. A network grant opens the network anyway, so its absence is
// no shortfall then.
func RoleShortfall(r Report, networkGranted bool) string {
	missing := slices.Clone(r.Missing)
	if networkGranted {
		missing = slices.DeleteFunc(missing, func(l string) bool { return l == string(Network) })
	}
	if len(missing) == 0 {
		return ""
	}
	return fmt.Sprintf("contained without the %s layer(s): %s", strings.Join(missing, ", "), missingWhy(r))
}

// missingWhy says briefly why the report's features are missing: each
// distinct reason once, with the features it stands for.
func missingWhy(r Report) string {
	by := map[string][]string{}
	var reasons []string
	for f, why := range r.Why {
		if _, ok := by[why]; !ok {
			reasons = append(reasons, why)
		}
		by[why] = append(by[why], f)
	}
	slices.Sort(reasons)
	var out []string
	for _, why := range reasons {
		fs := by[why]
		slices.Sort(fs)
		out = append(out, strings.Join(fs, ", ")+": "+why)
	}
	return strings.Join(out, "; ")
}
