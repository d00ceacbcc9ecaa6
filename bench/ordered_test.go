package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// reorders returns input i, sleeping a millisecond first if i%17 is 0, so
// that later inputs end before it.
func reorders(_ context.Context, i int) int {
	if i%17 == 0 {
		time.Sleep(time.Millisecond)
	}
	return i
}

func TestEveryOrderedContenderConsumesEveryResultInOrderWithinItsWindow(t *testing.T) {
	const workers, n = 4, 300
	before := runtime.NumGoroutine()
	for _, c := range orderedContenders[int](workers, true) {
		t.Run(orderedName(c.form, c.window, workers)+" consumes 0 to n-1 in order", func(t *testing.T) {
			var started, consumed atomic.Int64
			var got []int
			most := int64(0) // the most inputs started past the oldest result not consumed
			c.run(n, func(ctx context.Context, i int) int {
				ahead := started.Add(1) - consumed.Load()
				for m := atomic.LoadInt64(&most); ahead > m && !atomic.CompareAndSwapInt64(&most, m, ahead); m = atomic.LoadInt64(&most) {
				}
				return reorders(ctx, i)
			}, func(r int) {
				got = append(got, r)
				consumed.Add(1)
			})
			want := make([]int, n)
			for i := range want {
				want[i] = i
			}
			assert.Equal(t, want, got)
			t.Logf("at most %d inputs started past the oldest result not consumed", most)
			switch c.form {
			case orderedUnorderedName:
			case orderedConcName: // its callback queue holds workers+1, and its callbacker one more
				assert.LessOrEqual(t, most, int64(c.window+1))
			default:
				assert.LessOrEqual(t, most, int64(c.window), "inputs started past the oldest result not consumed")
			}
		})
	}
	// A goroutine that has ended may take a moment to leave the count.
	left := runtime.NumGoroutine()
	for deadline := time.Now().Add(5 * time.Second); left > before && time.Now().Before(deadline); left = runtime.NumGoroutine() {
		time.Sleep(time.Millisecond)
	}
	assert.LessOrEqual(t, left, before, "goroutines left running")
}

func TestOrderedCheckPanicsAtAResultThatIsNotTheNextInputs(t *testing.T) {
	newCheck := func() *orderedCheck[int] {
		return &orderedCheck[int]{valid: func(i, r int) bool { return i == r }, n: 3, start: time.Now()}
	}
	t.Run("a result out of order panics", func(t *testing.T) {
		c := newCheck()
		c.consume(0)
		assert.Panics(t, func() { c.consume(2) })
	})
	t.Run("a result past the last panics", func(t *testing.T) {
		c := newCheck()
		for i := range 3 {
			c.consume(i)
		}
		assert.NotPanics(t, c.done)
		assert.Panics(t, func() { c.consume(3) })
	})
	t.Run("a result missing panics at done", func(t *testing.T) {
		c := newCheck()
		c.consume(0)
		c.consume(1)
		assert.Panics(t, c.done)
	})
	t.Run("the first and the last result are timed", func(t *testing.T) {
		c := newCheck()
		for i := range 3 {
			c.consume(i)
		}
		assert.Positive(t, c.first)
		assert.GreaterOrEqual(t, c.last, c.first)
	})
}

func TestUnevenTimesAreSeededPerRunAndNearFivePercentLong(t *testing.T) {
	a, b := unevenTimes(2000, 0), unevenTimes(2000, 1)
	assert.Equal(t, a, unevenTimes(2000, 0))
	assert.NotEqual(t, a, b)
	long := 0
	for _, d := range a {
		require.Contains(t, []time.Duration{orderedShortJob, orderedLongJob}, d)
		if d == orderedLongJob {
			long++
		}
	}
	assert.InDelta(t, 100, long, 40)
}

// orderedTargetNames are the ordered scenario's targets with 8 workers,
// in order.
var orderedTargetNames = []string{
	"ordered, no-op, window 4x: crew MapSeq <= 1.2x the hand-written ordered pipeline per item",
	"ordered, no-op, window 4x: crew Stream <= 1.2x the hand-written ordered pipeline per item",
	"ordered, no-op: crew MapSeq (window 4x) >= 2x faster than conc's stream",
	"ordered, no-op: crew Stream (window 4x) >= 2x faster than conc's stream",
	"ordered, uneven, window 16x: crew MapSeq total time <= 1.05x the unordered pool's",
	"ordered, uneven, window 16x: crew Stream total time <= 1.05x the unordered pool's",
	"ordered, crew MapSeq: peak heap with a slow first input bounded by the window (window 16x < 0.1 of every result's, growing with the window)",
	"ordered, crew Stream: peak heap with a slow first input bounded by the window (window 16x < 0.1 of every result's, growing with the window)",
	"ordered, no-op: crew MapSeq <= 1 alloc per item",
	"ordered, no-op: crew Stream <= 1 alloc per item of its own (tasks and callbacks made before the count)",
}

// orderedSample is an ordered scenario's figures with 8 workers: per
// no-op item, the hand-written pipeline 100 ns at every window, crew
// MapSeq 110, crew Stream 130, conc 300, the unordered pool 80; per uneven
// item, the unordered pool 1000 ns, MapSeq 1040 and Stream 1100 at window
// 128, twice that at 8; a window slot's heap 1100 bytes.
func orderedSample() *orderedReport {
	o := &orderedReport{orderedConfig: orderedConfig{workers: 8, noopItems: 100_000, unevenItems: 20_000, runs: 5, heapItems: 100_000, heapRuns: 3, stall: time.Second},
		streamOwnAllocs: 0.01, sleptShort: 1060 * time.Microsecond, sleptLong: 5060 * time.Microsecond}
	noop := map[string]float64{orderedMapSeqName: 110, orderedStreamName: 130, orderedHandName: 100}
	uneven := map[string]float64{orderedMapSeqName: 1040, orderedStreamName: 1100, orderedHandName: 1030}
	for _, job := range []string{orderedNoop, orderedUneven} {
		for _, form := range []string{orderedMapSeqName, orderedStreamName, orderedHandName} {
			for _, w := range orderedWindows(8) {
				x := orderedResult{form, w, job, noop[form], 20 * time.Microsecond, 0.02}
				if form == orderedStreamName {
					x.allocsPerItem = 2.02
				}
				if job == orderedUneven {
					x.nsPerItem, x.first = uneven[form]*128/float64(w+(128-w)/2), 5*time.Millisecond
				}
				o.results = append(o.results, x)
			}
		}
		conc := orderedResult{orderedConcName, 9, job, 300, 20 * time.Microsecond, 3}
		unordered := orderedResult{orderedUnorderedName, 0, job, 80, 0, 1}
		if job == orderedUneven {
			conc.nsPerItem, conc.first, unordered.nsPerItem = 2000, 5*time.Millisecond, 1000
		}
		o.results = append(o.results, conc, unordered)
	}
	for _, form := range []string{orderedMapSeqName, orderedStreamName, orderedHandName} {
		for _, w := range orderedWindows(8) {
			o.heap = append(o.heap, orderedHeap{form, w, float64(1100 * w), 4 << 20})
		}
	}
	o.heap = append(o.heap, orderedHeap{orderedConcName, 9, 1100 * 9, 4 << 20})
	return o
}

func TestOrderedTargets(t *testing.T) {
	r := &orderedScenario{ordered: orderedSample()}
	var order []string
	got := map[string]target{}
	for _, x := range r.targets() {
		order = append(order, x.what)
		got[x.what] = x
	}
	require.Equal(t, orderedTargetNames, order)
	for i, tc := range []struct {
		measured string
		met      bool
	}{
		{"1.10x (crew 110 vs hand-written 100 ns/item)", true},
		{"1.30x (crew 130 vs hand-written 100 ns/item)", false},
		{"2.73x faster (crew 110 vs conc 300 ns/item)", true},
		{"2.31x faster (crew 130 vs conc 300 ns/item)", true},
		{"1.04x (crew 20.8 ms vs unordered 20.0 ms)", true},
		{"1.10x (crew 22.0 ms vs unordered 20.0 ms)", false},
		{"0.0014 of 100000 KiB at window 128; 9, 34 and 138 KiB at windows 8, 32 and 128", true},
		{"0.0014 of 100000 KiB at window 128; 9, 34 and 138 KiB at windows 8, 32 and 128", true},
		{"0.020 allocs/item at window 32 (no user allocation per item)", true},
		{"0.010 allocs/item at window 32; 2.020 with a task and a callback closure made per item", true},
	} {
		x := got[orderedTargetNames[i]]
		assert.Equal(t, tc.measured, x.measured, x.what)
		assert.Equal(t, tc.met, x.met, "%s: %s", x.what, x.measured)
	}
	t.Run("a heap that does not grow with the window, or holds a tenth of the results, fails", func(t *testing.T) {
		r := &orderedScenario{ordered: orderedSample()}
		for i, x := range r.ordered.heap {
			switch {
			case x.form == orderedMapSeqName && x.window == 32:
				r.ordered.heap[i].held = 8 * 1100
			case x.form == orderedStreamName && x.window == 128:
				r.ordered.heap[i].held = 10 << 20
			}
		}
		for _, x := range r.targets() {
			if slices.Contains(orderedTargetNames[6:8], x.what) {
				assert.False(t, x.met, "%s: %s", x.what, x.measured)
			}
		}
	})
	t.Run("a report without the scenario checks none of its targets", func(t *testing.T) {
		assert.Empty(t, (&orderedScenario{}).targets())
	})
}

func TestOrderedSectionAndChart(t *testing.T) {
	r := &report{machine: "test", scenarios: []scenario{&orderedScenario{ordered: orderedSample()}}}
	md := r.markdown()
	for _, want := range []string{
		"## 1. Ordered streams\n\n",
		"100000 inputs per contender and run with no-op jobs",
		"(time.Sleep took 1.06ms and 5.06ms here",
		"| crew MapSeq, window 128 (16x) | 110 | 1.10x | 1040 | 1.04x | 20.0 µs | 5.00 ms | 0.020 |\n",
		"| conc stream, window 9 | 300 | 3.00x | 2000 | 2.00x | 20.0 µs | 5.00 ms | 3.000 |\n",
		"| crew unordered pool | 80 | 0.80x | 1000 | 1.00x | — | — | 1.000 |\n",
		"crew Stream allocates 0.010 times per item of its own at its default window (32)",
		"### Heap with a slow first input\n\n",
		"| crew Stream, window 128 (16x) | 138 KiB | 1100 bytes | 4096 KiB |\n",
		"Every result would hold 100000 KiB. 3 runs",
	} {
		assert.Contains(t, md, want)
	}
	dir := t.TempDir()
	charts, err := r.charts(dir)
	require.NoError(t, err)
	require.Len(t, charts, 1)
	assert.Equal(t, "ordered.png", charts[0].file)
	png, err := os.ReadFile(filepath.Join(dir, charts[0].file))
	require.NoError(t, err)
	assert.True(t, bytes.HasPrefix(png, []byte("\x89PNG")), "a PNG")
}

func TestOrderedScenarioMeasuresEveryContenderAndRendersItsSection(t *testing.T) {
	cfg := orderedConfig{workers: 2, noopItems: 300, unevenItems: 40, runs: 1, heapItems: 300, heapRuns: 1, stall: 20 * time.Millisecond}
	o := ordered(cfg, func(string) {})
	cs := orderedContenders[int](2, true)
	require.Len(t, o.results, 2*len(cs))
	for _, x := range o.results {
		assert.Positive(t, x.nsPerItem, "%s, %s jobs", orderedName(x.form, x.window, 2), x.job)
		if x.window > 0 {
			assert.Positive(t, x.first, "%s, %s jobs", orderedName(x.form, x.window, 2), x.job)
		}
	}
	require.Len(t, o.heap, len(cs)-1)
	for _, x := range o.heap {
		// The first input holds back the rest of the window's results, of
		// orderedPayload bytes each, but none beyond: far less than all 300.
		assert.Less(t, x.held, float64(cfg.heapItems*orderedPayload)/2, orderedName(x.form, x.window, 2))
	}
	md := (&report{machine: "test", scenarios: []scenario{&orderedScenario{ordered: &o}}}).markdown()
	assert.Contains(t, md, "## 1. Ordered streams")
	assert.Contains(t, md, "| crew MapSeq, window 8 (4x) |")
}
