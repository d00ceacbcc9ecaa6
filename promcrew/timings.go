package promcrew

import (
	"math"
	"slices"
	"sync/atomic"
	"time"
)

// timings is a histogram of durations that an observation updates with
// two atomic adds, and no lock or compare-and-swap loop, so that the
// workers of a pool that observe at once contend as little as they can.
// Its count is the sum of its buckets, so a reading of it is consistent
// with itself: every bucket and the count move forward together, whatever
// observations happen during the reading.
type timings struct {
	bounds  []int64         // the upper bounds, in nanoseconds, increasing, shared by every timings of a Collector
	buckets []atomic.Uint64 // the observations in each bucket (not cumulative), +Inf last
	ns      atomic.Uint64   // the sum of the durations observed since the last fold
	seconds float64         // the sum folded (see fold); guarded by Collector.mu
}

func newTimings(bounds []int64) *timings {
	return &timings{bounds: bounds, buckets: make([]atomic.Uint64, len(bounds)+1)}
}

// nanos returns upper, in seconds, in nanoseconds.
func nanos(upper []float64) []int64 {
	ns := make([]int64, len(upper))
	for i, u := range upper {
		ns[i] = int64(math.Round(u * 1e9))
	}
	return ns
}

// observe records d (0 if negative).
func (t *timings) observe(d time.Duration) {
	d = max(d, 0)
	i, _ := slices.BinarySearch(t.bounds, int64(d)) // the first bound >= d: "le"
	t.buckets[i].Add(1)
	t.ns.Add(uint64(d))
}

// fold moves the nanoseconds summed since the last fold into the seconds,
// so that the sum never wraps (2^64 ns is 584 years of run time: a pool
// of 10,000 busy workers sums that in 21 days), and returns the count,
// the sum in seconds and the cumulative count of each bucket but +Inf,
// keyed by its upper bound (upper), as prometheus.NewConstHistogram takes
// them. The caller holds Collector.mu.
func (t *timings) fold(upper []float64) (count uint64, sum float64, cumulative map[float64]uint64) {
	t.seconds += float64(t.ns.Swap(0)) / 1e9
	cumulative = make(map[float64]uint64, len(upper))
	for i := range t.buckets {
		count += t.buckets[i].Load()
		if i < len(upper) {
			cumulative[upper[i]] = count
		}
	}
	return count, t.seconds, cumulative
}

// A clock is a counter of durations, summed as timings sums them.
type clock struct {
	ns      atomic.Uint64
	seconds float64 // guarded by Collector.mu
}

func (c *clock) add(d time.Duration) { c.ns.Add(uint64(max(d, 0))) }

// fold returns the seconds counted; the caller holds Collector.mu.
func (c *clock) fold() float64 {
	c.seconds += float64(c.ns.Swap(0)) / 1e9
	return c.seconds
}
