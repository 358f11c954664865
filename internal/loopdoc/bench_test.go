package loopdoc

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkValidate decodes and validates each kind of a typical loop
// document (the update-pr example that converged, the largest set):
// the strict decode, the schema and the kind's rules, as `loop validate`
// and the loop's store pay them per document.
func BenchmarkValidate(b *testing.B) {
	for _, kind := range []Kind{KindInvocation, KindCheckpoint, KindTerminalResult} {
		data, err := os.ReadFile(filepath.Join(examplesDir, "update-pr-converged", string(kind)+".json"))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(string(kind), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if vs, err := Validate(kind, data); err != nil || len(vs) > 0 {
					b.Fatalf("Validate(%s) = %v, %v", kind, vs, err)
				}
			}
		})
	}
}
