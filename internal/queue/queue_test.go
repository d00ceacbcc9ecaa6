package queue

import (
	"slices"
	"testing"
)

func TestARingIsFIFOThroughGrowthAndWrap(t *testing.T) {
	r := RingOf(Shared[Slabs[int]]())
	next, want := 0, 0
	for round := range 50 {
		for range round % 13 { // pushes and pops that leave the head anywhere
			r.Push(next)
			next++
		}
		for range round % 7 {
			if v, ok := r.Pop(); ok {
				if v != want {
					t.Fatalf("popped %d, want %d", v, want)
				}
				want++
			}
		}
		if r.Len() != next-want {
			t.Fatalf("Len %d, want %d", r.Len(), next-want)
		}
		if r.Size()&(r.Size()-1) != 0 {
			t.Fatalf("a buffer of %d slots: not a power of two", r.Size())
		}
	}
	for r.Len() > 0 {
		if v, _ := r.Pop(); v != want {
			t.Fatalf("popped %d, want %d", v, want)
		}
		want++
	}
	if _, ok := r.Pop(); ok {
		t.Fatal("popped from an empty ring")
	}
}

func TestADrainedRingKeepsASmallBufferAndGivesBackALargeOne(t *testing.T) {
	var r Ring[int]
	for i := range KeptRingSlots {
		r.Push(i)
	}
	for r.Len() > 0 {
		r.Pop()
	}
	if r.Size() != KeptRingSlots {
		t.Fatalf("kept %d slots, want %d", r.Size(), KeptRingSlots)
	}
	for i := range KeptRingSlots + 1 {
		r.Push(i)
	}
	for r.Len() > 0 {
		r.Pop()
	}
	if r.Size() != 0 {
		t.Fatalf("kept %d slots, want none", r.Size())
	}
}

type elem struct {
	v int
	l Links[elem]
}

func newElems(n int) []*elem {
	es := make([]*elem, n)
	for i := range es {
		es[i] = &elem{v: i}
		es[i].l.Init(es[i])
	}
	return es
}

func values(l *List[elem]) []int {
	var vs []int
	l.Each(func(e *elem) { vs = append(vs, e.v) })
	return vs
}

func chained(c Chain[elem]) []int {
	var vs []int
	for e := c.Pop(); e != nil; e = c.Pop() {
		vs = append(vs, e.v)
	}
	return vs
}

func TestAListKeepsItsOrderAndLength(t *testing.T) {
	es := newElems(6)
	var l List[elem]
	for _, e := range es {
		l.PushBack(&e.l)
	}
	l.Remove(&es[3].l)
	l.Remove(&es[0].l)
	l.Remove(&es[5].l)
	if got := values(&l); !slices.Equal(got, []int{1, 2, 4}) || l.Len() != 3 {
		t.Fatalf("list %v, Len %d", got, l.Len())
	}
	if l.Front() != es[1] || !es[2].l.In(&l) || es[3].l.Listed() {
		t.Fatal("Front or membership wrong")
	}
}

func TestTakeAllAndExtractLeaveTheirElementsInNoList(t *testing.T) {
	es := newElems(6)
	var l List[elem]
	for _, e := range es {
		l.PushBack(&e.l)
	}
	odd := l.Extract(func(e *elem) bool { return e.v%2 == 1 })
	if got := values(&l); !slices.Equal(got, []int{0, 2, 4}) {
		t.Fatalf("left %v", got)
	}
	for _, e := range es {
		if e.l.Listed() != (e.v%2 == 0) {
			t.Fatalf("element %d listed: %v", e.v, e.l.Listed())
		}
	}
	if n := odd.Len(); n != 3 {
		t.Fatalf("extracted %d", n)
	}
	rest := l.TakeAll()
	if l.Len() != 0 || l.Front() != nil {
		t.Fatal("TakeAll left elements")
	}
	rest.Append(&odd)
	if got := chained(rest); !slices.Equal(got, []int{0, 2, 4, 1, 3, 5}) {
		t.Fatalf("chain %v", got)
	}
	if !odd.Empty() {
		t.Fatal("Append left its argument full")
	}
}

func TestAWaiterGetsItsOutcomeOnce(t *testing.T) {
	var ws Waiters[int]
	if ws.Take() != nil {
		t.Fatal("Take made a waiter")
	}
	w := ws.Get()
	w.Answer(errTest)
	if err := w.Outcome(); err != errTest {
		t.Fatalf("outcome %v", err)
	}
	if w.Err != nil {
		t.Fatal("Outcome left the error")
	}
	ws.Put(w)
}

type testError struct{}

func (testError) Error() string { return "test" }

var errTest error = testError{}
