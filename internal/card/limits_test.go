package card

import (
	"strings"
	"testing"
	"time"
)

func TestDeepNesting(t *testing.T) {
	for _, in := range []string{
		"id: " + strings.Repeat("[", 100000) + strings.Repeat("]", 100000),
		"id: " + strings.Repeat("{a: ", 50000) + "1" + strings.Repeat("}", 50000),
		strings.Repeat("- ", 100000) + "x",
	} {
		start := time.Now()
		c, err := Parse("n.yml", []byte(in))
		if c != nil || err == nil {
			t.Errorf("Parse(deep) accepted")
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("Parse(deep) took %v", d)
		}
	}
}
