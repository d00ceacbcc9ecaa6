package crew_test

import (
	"context"
	"iter"
	"math"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/crewlib/crew"
)

// A window is a bound, not an allocation: an ordered stream holds memory
// for the items it holds, however large its window.

// orderedForms runs each of the four forms of ordered stream over n
// items, the first of which waits until the others have been taken, and
// returns the results delivered, in order. opts are the stream's.
func orderedForms(t *testing.T, n int, opts ...crew.Option) map[string][]int {
	t.Helper()
	ctx := t.Context()
	got := map[string][]int{}
	// first returns f that holds input 0 until input n-1 was taken.
	first := func() (func(context.Context, int) (int, error), func()) {
		taken := make(chan struct{})
		return func(_ context.Context, i int) (int, error) {
			if i == 0 {
				<-taken
			}
			return i, nil
		}, func() { close(taken) }
	}
	inputs := func(last func()) iter.Seq[int] {
		return func(yield func(int) bool) {
			for i := range n {
				if i == n-1 {
					last()
				}
				if !yield(i) {
					return
				}
			}
		}
	}
	seqs := map[string]func(f func(context.Context, int) (int, error), in iter.Seq[int]) iter.Seq2[int, error]{
		"MapSeq": func(f func(context.Context, int) (int, error), in iter.Seq[int]) iter.Seq2[int, error] {
			return crew.MapSeq(ctx, 4, in, f, opts...)
		},
		"MapSeqBatch": func(f func(context.Context, int) (int, error), in iter.Seq[int]) iter.Seq2[int, error] {
			p := crew.NewGroup(4)
			t.Cleanup(func() { assert.NoError(t, p.Wait()) })
			return crew.MapSeqBatch(ctx, p, in, f, opts...)
		},
	}
	for form, seq := range seqs {
		f, last := first()
		for r, err := range seq(f, inputs(last)) {
			require.NoError(t, err, form)
			got[form] = append(got[form], r)
		}
	}
	streams := map[string]func() *crew.Stream{
		"NewStream": func() *crew.Stream { return crew.NewStream(ctx, 4, opts...) },
		"NewStreamBatch": func() *crew.Stream {
			p := crew.NewGroup(4)
			t.Cleanup(func() { assert.NoError(t, p.Wait()) })
			return crew.NewStreamBatch(ctx, p, opts...)
		},
	}
	for form, newStream := range streams {
		s := newStream()
		f, last := first()
		var ran []int
		for i := range n {
			if i == n-1 {
				last()
			}
			require.NoError(t, s.Submit(ctx, func(ctx context.Context) (func() error, error) {
				r, err := f(ctx, i)
				return func() error { ran = append(ran, r); return nil }, err
			}), form)
		}
		require.NoError(t, s.Wait(), form)
		got[form] = ran
	}
	return got
}

func TestAnOrderedStreamTakesTheLargestWindow(t *testing.T) {
	const n = 1000 // four chunks' worth, all held behind the first
	want := make([]int, n)
	for i := range want {
		want[i] = i
	}
	for form, got := range orderedForms(t, n, crew.WithWindow(math.MaxInt)) {
		assert.Equal(t, want, got, form)
	}
}

func TestAStreamOnABatchWithTheLargestLimitTakesItsDefaultWindow(t *testing.T) {
	p := crew.NewGroup(2)
	defer func() { assert.NoError(t, p.Wait()) }()
	s := crew.NewStreamBatch(t.Context(), p, crew.WithLimit(math.MaxInt))
	var ran []int
	for i := range 10 {
		require.NoError(t, s.Submit(t.Context(), func(context.Context) (func() error, error) {
			return func() error { ran = append(ran, i); return nil }, nil
		}))
	}
	require.NoError(t, s.Wait())
	assert.Equal(t, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, ran)

	var got []int
	for r, err := range crew.MapSeqBatch(t.Context(), p, seqOf(10), func(_ context.Context, i int) (int, error) { return i, nil }, crew.WithLimit(math.MaxInt)) {
		require.NoError(t, err)
		got = append(got, r)
	}
	assert.Equal(t, ran, got)
}

// seqOf yields 0 to n-1.
func seqOf(n int) iter.Seq[int] {
	return func(yield func(int) bool) {
		for i := range n {
			if !yield(i) {
				return
			}
		}
	}
}

func TestAnOrderedStreamHoldsMemoryForWhatItHoldsNotForItsWindow(t *testing.T) {
	const window = 1 << 20 // a slot each would take tens of MiB
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	got := orderedForms(t, 10, crew.WithWindow(window))
	runtime.ReadMemStats(&after)
	for form, ran := range got {
		assert.Equal(t, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, ran, form)
	}
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("four streams of 10 items with a window of %d allocated %d bytes", window, allocated)
	assert.Less(t, allocated, uint64(4<<20), "four streams of 10 items with a window of %d allocated %d bytes", window, allocated)
}
