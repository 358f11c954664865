package shard

import "testing"

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Shard
		ok   bool
	}{
		{"0/1", Shard{0, 1}, true},
		{"3/4", Shard{3, 4}, true},
		{"4/4", Shard{}, false},
		{"-1/4", Shard{}, false},
		{"0/0", Shard{}, false},
		{"1", Shard{}, false},
		{"a/b", Shard{}, false},
		{"+1/4", Shard{}, false},
		{"1/4/5", Shard{}, false},
		{" 1/4", Shard{}, false},
	} {
		got, err := Parse(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("Parse(%q) = %v, %v; want %v ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

// Every index lands in exactly one shard.
func TestShardPartition(t *testing.T) {
	for n := 1; n <= 7; n++ {
		for i := 0; i < 50; i++ {
			c := 0
			for k := 0; k < n; k++ {
				if (Shard{k, n}).Has(i) {
					c++
				}
			}
			if c != 1 {
				t.Errorf("index %d is in %d of %d shards", i, c, n)
			}
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add("0/4")
	f.Add("9/10")
	f.Fuzz(func(t *testing.T, s string) {
		sh, err := Parse(s)
		if err != nil {
			if sh != (Shard{}) {
				t.Fatalf("error with value %v", sh)
			}
			return
		}
		if sh.K < 0 || sh.K >= sh.N {
			t.Fatalf("Parse(%q) = %v out of range", s, sh)
		}
		again, err := Parse(sh.String())
		if err != nil || again != sh {
			t.Fatalf("canonical form %q does not parse back: %v %v", sh.String(), again, err)
		}
	})
}
