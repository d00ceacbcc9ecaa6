package crew

import (
	"fmt"
	"strconv"
	"time"
)

// WithAdaptiveSize makes a long-lived pool (NewPool, NewGroup, WithContext)
// size itself, between min and max workers, from what its jobs take to
// run: for jobs that wait on something else, a database, an HTTP API, a
// disk, whose capacity nobody knows and which changes. The pool starts
// with the workers its constructor is given, which must lie between min
// and max, and resizes itself through Resize, so that everything Resize
// keeps holds (no job is lost, the bound and the batches' limits follow
// the size).
//
// It measures its jobs in windows: each job's run time apart from its
// queue wait, the jobs that succeeded per second, the jobs in flight over
// time, and the failures (a job's error, panic or runtime.Goexit, a
// timeout included, counts as a drop). A window lasts at least 16 ended
// jobs (as many as there are workers, up to 256), two no-load run times
// and 1 ms; after a resize, the jobs that end within one median run time,
// which ran mostly at the old size, are left out. After each window it
// decides, in this order:
//
//   - More than 1 job in 10 failed: it backs off to 3/4 of its size.
//   - The window's median run time is above the no-load run time by more
//     than 5% of it plus twice the median's standard error (from the
//     spread of the window's run times; a window of fewer than 4
//     successful jobs is never judged so): jobs queue at the downstream,
//     which serves about in-flight × no-load / median jobs at once
//     (Little's law). The pool shrinks to that, by one worker at least.
//   - Its last growth, by a quarter of its size or more, did not raise the
//     jobs that succeeded per second by half as much: it undoes that
//     growth, and grows again only after 4 windows that were not
//     congested.
//   - The pool was busy (on average at least half its workers ran a job)
//     and jobs wait for a worker as the window ends: it grows. It doubles
//     at first, and again after a back-off, until the first congestion or
//     undone growth; then it goes half way to the size where it last found
//     congestion, and past that by 1/16 of its size, twice as much with
//     each growth in a row, up to a half, for the downstream's capacity
//     has grown.
//   - Otherwise it keeps its size: a pool the application sends little
//     work does not grow.
//
// The no-load run time is the lower quartile (the median, until there are
// 8) of the medians of the last 32 windows that were not congested and
// were measured at no more than 9/10 of the size where congestion was
// last found. Congested windows do not move it, so a long incident does
// not raise it until the pool stops shrinking (the failure of limiters
// that track latency alone); it rises by more than the tolerance above
// only where the pool can do no less: after 3 congested windows in a row
// at min workers, it is learned afresh. Failed jobs are left out of the
// run times: a downstream that fails fast must not look fast. A job's
// run time includes the jobs it ran inline (see Pool.Submit), which a
// full pool makes more of.
//
// Jobs that use the CPU alone want GOMAXPROCS workers and nothing more:
// more workers only share the same CPUs, and their run time rises with
// the pool's, which this option would read as congestion. Use it for jobs
// that wait, of a millisecond or more: each job then pays two readings of
// the clock and a lock of the controller's (100 to 150 ns a job on a
// 2-core machine: BenchmarkPoolMetrics/1submitters/adaptive against
// none, in bench/results/adaptive.txt), and allocates nothing.
//
// On an adaptive pool, Resize(n) sets the size to n, which must lie
// between min and max (Resize panics otherwise), and the controller goes
// on from there, with a new window and what it learned of the no-load
// run time: a new starting point, not a fixed size; a decision it took
// before the Resize is dropped. PoolStats.Adaptive reports the
// controller's state and why the size last changed; WithMetrics counts
// each change (EventGrown, EventShrunk, EventBackedOff), and its Workers
// gauge is the size.
//
// It panics if min is less than 1, or max less than min or more than
// 1<<24; the constructor panics if its workers are outside [min, max],
// or with WithConsistentHash, whose keys are pinned to their workers
// (Resize refuses such a pool). Map, whose pool lives for one call, does
// not take it.
func WithAdaptiveSize(min, max int) Option {
	checkSize("WithAdaptiveSize", "min", min, maxWorkers)
	if max < min || max > maxWorkers {
		panic(fmt.Sprintf("crew: WithAdaptiveSize: max must be between min (%d) and %d, got %d", min, maxWorkers, max))
	}
	return func(o *options) { o.set |= optAdaptive; o.adaptMin, o.adaptMax = min, max }
}

// AdaptiveStats is the state of a pool's size controller (WithAdaptiveSize),
// in PoolStats.Adaptive: zero for a pool without one.
type AdaptiveStats struct {
	Min, Max   int           // the bounds of its size
	Reason     SizeReason    // why the size last changed
	NoLoad     time.Duration // the no-load run time it compares each window with; 0 until its first window
	Latency    time.Duration // its last window's median run time, failed jobs aside
	Throughput float64       // its last window's jobs ended per second, failed jobs aside
	Grown      int64         // its decisions to grow (EventGrown)
	Shrunk     int64         // its decisions to shrink: congestion, or a growth undone (EventShrunk)
	BackedOff  int64         // its back-offs on failures (EventBackedOff)
}

// A SizeReason says why an adaptive pool's size last changed (see
// WithAdaptiveSize).
type SizeReason uint8

const (
	SizeSet       SizeReason = iota // the size NewPool or Resize gave it
	SizeGrown                       // run time at its no-load level, the pool busy, and jobs waiting for a worker
	SizeShrunk                      // run time above its no-load level: jobs queue at the downstream
	SizeUndone                      // its last growth did not raise throughput: undone
	SizeBackedOff                   // more than 1 job in 10 of a window failed
)

var sizeReasons = [...]string{"set", "grown", "shrunk", "undone", "backed off"}

// String returns "set", "grown", "shrunk", "undone" or "backed off".
func (r SizeReason) String() string {
	if int(r) < len(sizeReasons) {
		return sizeReasons[r]
	}
	return "SizeReason(" + strconv.Itoa(int(r)) + ")"
}

// checkAdaptive panics, naming fn, if a pool of workers workers cannot
// take o's WithAdaptiveSize.
func checkAdaptive(fn string, workers int, o *options) {
	if o.set&optAdaptive == 0 {
		return
	}
	if o.pinned {
		panic("crew: " + fn + ": WithAdaptiveSize resizes the pool, and a pool WithConsistentHash keeps its workers: its keys are pinned to them")
	}
	if workers < o.adaptMin || workers > o.adaptMax {
		panic(fmt.Sprintf("crew: %s: WithAdaptiveSize(%d, %d) needs workers between them, got %d", fn, o.adaptMin, o.adaptMax, workers))
	}
}
