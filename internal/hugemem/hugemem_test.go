package hugemem

import "testing"

func TestMake(t *testing.T) {
	for _, n := range []int{0, 1, 1000, minBytes/8 + 3, 3 * minBytes / 8} {
		s := Make[uint64](n)
		if len(s) != n || cap(s) < n {
			t.Fatalf("Make(%d): len %d cap %d", n, len(s), cap(s))
		}
		for i := range s {
			if s[i] != 0 {
				t.Fatalf("Make(%d)[%d] = %d", n, i, s[i])
			}
			s[i] = uint64(i)
		}
		for i := range s {
			if s[i] != uint64(i) {
				t.Fatalf("Make(%d)[%d] = %d after writing", n, i, s[i])
			}
		}
	}
	type rec struct {
		p *int
		s string
	}
	r := Make[rec](minBytes / 16)
	x := 7
	r[len(r)-1] = rec{&x, "x"}
	if *r[len(r)-1].p != 7 {
		t.Fatal("lost a pointer")
	}
}
