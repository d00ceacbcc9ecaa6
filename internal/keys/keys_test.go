package keys

import (
	"math"
	"testing"
)

func TestAnIndexHandsReleasedSlotsToLaterKeys(t *testing.T) {
	x := NewIndex(func(s string) string { return s })
	a, fresh := x.Slot("a")
	if a != 0 || !fresh {
		t.Fatalf("a: slot %d, fresh %v", a, fresh)
	}
	if s, fresh := x.Slot("a"); s != a || fresh {
		t.Fatalf("a again: slot %d, fresh %v", s, fresh)
	}
	b, _ := x.Slot("b")
	x.Release(a)
	if x.Len() != 1 {
		t.Fatalf("Len %d", x.Len())
	}
	c, fresh := x.Slot("c")
	if c != a || !fresh {
		t.Fatalf("c: slot %d (a's was %d), fresh %v", c, a, fresh)
	}
	seen := map[int]bool{}
	x.Each(func(s int) { seen[s] = true })
	if len(seen) != 2 || !seen[b] || !seen[c] {
		t.Fatalf("Each saw %v", seen)
	}
}

func TestAKeyThatEqualsNoKeyPanics(t *testing.T) {
	x := NewIndex(func(f float64) float64 { return f })
	defer func() {
		if recover() == nil {
			t.Fatal("a NaN key took a slot")
		}
		if x.Len() != 0 {
			t.Fatalf("Len %d after the panic", x.Len())
		}
	}()
	x.Slot(math.NaN())
}

func TestAPinKeepsAKeyOnItsWorkerUnlessTheWorkerIsDown(t *testing.T) {
	p := NewPin(func(k int) int { return k })
	all := func(int) bool { return true }
	moved := 0
	for k := range 1000 {
		w := p.Place(k, 8, all)
		if again := p.Place(k, 8, all); again != w {
			t.Fatalf("key %d placed at %d, then %d", k, w, again)
		}
		if w2 := p.Place(k, 8, func(i int) bool { return i != 3 }); w2 != w {
			moved++
			if w != 3 {
				t.Fatalf("key %d moved from worker %d, which is up", k, w)
			}
		}
	}
	if moved == 0 || moved > 250 {
		t.Fatalf("%d of 1000 keys moved off a worker that went down", moved)
	}
	if w := p.Place(1, 8, func(int) bool { return false }); w != -1 {
		t.Fatalf("placed on %d with every worker down", w)
	}
}

func TestATableKeepsAReleasedSlotsRecordForTheNextKeyGivenIt(t *testing.T) {
	type rec struct{ slot, uses int }
	made := 0
	x := NewTable(NewIndex(func(s string) string { return s }), func(slot int) *rec {
		made++
		return &rec{slot: slot}
	})
	a := x.Get("a")
	a.uses++
	if x.Get("a") != a || x.Get("b").slot != 1 || made != 2 {
		t.Fatalf("a %+v, made %d", a, made)
	}
	x.Release(a.slot)
	if c := x.Get("c"); c != a || c.uses != 1 || made != 2 {
		t.Fatalf("c got %+v (a's was %p), made %d", c, a, made)
	}
	var seen []int
	x.Each(func(r *rec) { seen = append(seen, r.slot) })
	if len(seen) != 2 || x.Len() != 2 {
		t.Fatalf("Each saw %v, Len %d", seen, x.Len())
	}
}
