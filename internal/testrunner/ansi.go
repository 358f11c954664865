package testrunner

import "bytes"

// StripANSI is output without the terminal escape sequences a runner
// writes when told to color it (pytest's --color=yes in a project's
// addopts, a FORCE_COLOR in its environment): CSI sequences (ESC [,
// parameter and intermediate bytes, a final byte) and ESC with its
// intermediate bytes and one final byte. Every reader of a runner's output reads it so, or a colored
// "ERROR tests/test_x.py" line is no summary line at all.
func StripANSI(b []byte) []byte {
	if bytes.IndexByte(b, 0x1b) < 0 {
		return b
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		if b[i] != 0x1b {
			out = append(out, b[i])
			continue
		}
		if i+1 >= len(b) {
			break
		}
		if b[i+1] != '[' {
			// ESC, intermediate bytes, one final byte (ESC ( B).
			j := i + 1
			for j < len(b)-1 && b[j] >= 0x20 && b[j] <= 0x2f {
				j++
			}
			i = j
			continue
		}
		j := i + 2
		for j < len(b) && b[j] >= 0x20 && b[j] <= 0x3f {
			j++
		}
		if j < len(b) && b[j] >= 0x40 && b[j] <= 0x7e {
			i = j // the final byte
		} else {
			i = j - 1 // not a whole sequence: drop ESC [ and what it held
		}
	}
	return out
}
