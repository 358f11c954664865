package card

import (
	"fmt"
	"regexp"
	"strconv"
)

// sizeUnits are the units sandbox.max_disk takes, powers of 1024, in
// the order FormatSize tries them (largest first).
var sizeUnits = []struct {
	name  string
	shift uint
}{{"TiB", 40}, {"GiB", 30}, {"MiB", 20}, {"KiB", 10}, {"B", 0}}

var sizeRE = regexp.MustCompile(`^([1-9][0-9]{0,15})(TiB|GiB|MiB|KiB|B)$`)

// ParseSize reads a size as a card writes it: a whole number and a
// binary unit with no space, "8GiB", "512MiB", "1048576B". Decimal units
// (GB), bare numbers, fractions and signs are refused: one spelling per
// unit, and no guessing whether "8G" meant 8e9 or 8<<30 bytes. Parse's
// error for a card names the file and line; this one says what is wrong.
func ParseSize(s string) (int64, error) {
	m := sizeRE.FindStringSubmatch(s)
	if m == nil {
		return 0, fmt.Errorf("%q is not a size", s)
	}
	n, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is too large", s)
	}
	for _, u := range sizeUnits {
		if u.name == m[2] {
			if n > (1<<62)>>u.shift {
				return 0, fmt.Errorf("%q is too large", s)
			}
			return n << u.shift, nil
		}
	}
	return 0, fmt.Errorf("%q is not a size", s)
}

// FormatSize writes n bytes in the largest unit that divides it:
// 8GiB, 1536MiB, 1048577B. It is the canonical (signed) form of a size,
// so "8192MiB" and "8GiB" sign the same.
func FormatSize(n int64) string {
	for _, u := range sizeUnits {
		if u.shift > 0 && n > 0 && n%(1<<u.shift) == 0 {
			return strconv.FormatInt(n>>u.shift, 10) + u.name
		}
	}
	return strconv.FormatInt(n, 10) + "B"
}
