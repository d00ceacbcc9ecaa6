package crew

import (
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// The control law of WithAdaptiveSize (its godoc states it for users).
const (
	minWindow   = 16   // ended jobs a window needs, at least
	maxWindow   = 256  // ended jobs a window needs, at most (and run times kept)
	tolerance   = 0.05 // a median run time this far above the no-load one is congestion
	checked     = 0.25 // a growth by at least this part of the size must raise throughput by half as much
	dropLimit   = 0.1  // a window with more failures than this backs off
	backOff     = 0.75 // what a back-off keeps of the size
	firstStep   = 1.0 / 16
	lastStep    = 0.5
	holdWindows = 4                       // uncongested windows without growth after a growth undone
	minTime     = int64(time.Millisecond) // a window lasts this long at least: at most 1,000 decisions a second
	history     = 32                      // healthy windows the no-load run time is taken from
	riseWindows = 3                       // windows in a row above it at min workers that replace it
)

// A sizer is the controller of a pool WithAdaptiveSize: its workers report
// each job's run time to it (observe), and at the end of each window it
// resizes the pool. It is safe for concurrent use. It decides under its
// lock, and resizes the pool, and so runs the pool's own code and perhaps
// a user's (a mailbox, a dead-letter sink), after releasing it.
type sizer struct {
	min, max int
	resize   func(n int, current func() bool) bool // resizes the pool if current still reports true, unless a Resize or Wait holds it; reports whether the workers changed
	waiting  func() bool                           // reports whether jobs wait for a worker: in the backlog, or in blocked Submits
	running  atomic.Int64                          // jobs clocked in and not observed yet
	gen      atomic.Uint64                         // Resizes so far: a decision taken before one no longer stands

	mu       sync.Mutex
	deciding bool  // a decision's resize is under way: the window goes on
	size     int   // the size it set last, or was given
	settle   int64 // jobs ended before this (pool clock) are not measured: they ran mostly at the size before
	from     int64 // when the window began, on the pool's clock; 0: at the next job's end

	// The window.
	runs     []int64 // the run times of the jobs that succeeded, up to maxWindow
	ok, bad  int     // jobs that succeeded, and failed
	inFlight float64 // running, integrated over the window's time (ns)
	lastEnd  int64   // when the window's last job ended

	// What the windows taught it.
	healthy []int64 // medians of the last healthy windows, a ring of history
	sorted  []int64 // healthy, sorted: room for it, so that no window allocates
	next    int     // where the next goes in healthy
	noLoad  int64   // the no-load run time: the lower quartile of healthy; 0 until known
	rises   int     // windows in a row above noLoad at min workers
	start   bool    // slow start: double until the first sign of congestion
	step    float64 // growth, as a part of the size, out of slow start
	grew    bool    // the last decision was a growth
	before  float64 // throughput before that growth
	prev    int     // size before that growth
	hold    int     // windows left without growth
	ceiling int     // the size at which congestion was last found; 0: none

	last AdaptiveStats // for Stats
}

func newSizer(min, max, size int, resize func(int, func() bool) bool, waiting func() bool) *sizer {
	return &sizer{
		min: min, max: max, size: size, resize: resize, waiting: waiting,
		runs: make([]int64, 0, maxWindow), healthy: make([]int64, 0, history), sorted: make([]int64, 0, history),
		start: true, step: firstStep,
		last: AdaptiveStats{Min: min, Max: max},
	}
}

// began counts a job in flight, as it starts.
func (a *sizer) began() { a.running.Add(1) }

// observe reports the end, at end on the pool's clock, of a job that ran
// for ran nanoseconds and failed or not; at the end of a window it
// decides the size, and resizes the pool. It returns the event of the
// change it made, or 0, for the caller to report: no Recorder runs under
// the controller's lock.
func (a *sizer) observe(ran, end int64, failed bool) Event {
	inFlight := a.running.Add(-1) + 1
	a.mu.Lock()
	if !a.measure(ran, end, failed, inFlight) {
		a.mu.Unlock()
		return 0
	}
	target, why, median := a.decide(end)
	if target == a.size {
		a.mu.Unlock()
		return 0
	}
	gen := a.gen.Load()
	a.deciding = true
	a.mu.Unlock()
	resized := false
	defer func() {
		if !resized { // Wait began, or a Resize came first; or the resize panicked or called runtime.Goexit (in a dead-letter sink, say)
			a.mu.Lock()
			a.deciding, a.grew = false, false // this growth never happened
			a.mu.Unlock()
		}
	}()
	resized = a.resize(target, func() bool { return a.gen.Load() == gen })
	if !resized {
		return 0
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.deciding = false
	if a.gen.Load() != gen { // a Resize came since: its size stands
		return 0
	}
	return a.moved(target, why, end, median)
}

// measure adds a job's end to the window and reports whether the window
// is over, and no decision is under way.
func (a *sizer) measure(ran, end int64, failed bool, inFlight int64) bool {
	switch {
	case end < a.settle:
		return false
	case a.from == 0:
		a.from, a.lastEnd = end, end
		return false
	}
	if end > a.lastEnd { // jobs in flight between the last end and this one
		a.inFlight += float64(inFlight) * float64(end-a.lastEnd)
		a.lastEnd = end
	}
	if failed {
		a.bad++
	} else {
		a.ok++
		if len(a.runs) < cap(a.runs) {
			a.runs = append(a.runs, ran)
		}
	}
	need := min(max(a.size, minWindow), maxWindow)
	return !a.deciding && a.ok+a.bad >= need && end-a.from >= max(2*a.noLoad, minTime)
}

// decide ends the window at now and returns the size it calls for, why,
// and the window's median run time, as WithAdaptiveSize states.
func (a *sizer) decide(now int64) (target int, why SizeReason, median int64) {
	n := a.ok + a.bad
	slices.Sort(a.runs)
	if len(a.runs) > 0 {
		median = a.runs[len(a.runs)/2]
	}
	thr := float64(a.ok) / (float64(now-a.from) / 1e9)
	inFlight := a.inFlight / float64(now-a.from) // on average over the window's time
	busy := inFlight >= float64(a.size)/2
	dropped := float64(a.bad) > dropLimit*float64(n)
	a.last.Latency, a.last.Throughput = time.Duration(median), thr

	target, why = a.size, SizeSet
	grew := false
	switch {
	case dropped:
		target, why = max(a.min, int(float64(a.size)*backOff)), SizeBackedOff
		a.start, a.rises = true, 0
	case a.noLoad == 0 || float64(median) <= float64(a.noLoad)*(1+tolerance)+2*a.spread():
		if a.ceiling == 0 || a.size*10 <= a.ceiling*9 {
			a.learn(median) // well below where congestion was found: a no-load run time
		}
		a.rises = 0
		share := float64(a.size)/float64(max(a.prev, 1)) - 1
		switch {
		case a.grew && share >= checked && thr < a.before*(1+share/2):
			target, why = a.prev, SizeUndone
			a.start, a.hold = false, holdWindows
		case a.hold > 0:
			a.hold--
		case busy && a.size < a.max && a.waiting():
			target, why, grew = min(a.grown(), a.max), SizeGrown, true
		}
	default: // congested: the downstream serves about inFlight×noLoad/median at once
		a.start = false
		if a.size == a.min {
			if a.rises++; a.rises >= riseWindows { // nothing less to do: the no-load run time rose
				a.healthy, a.next, a.rises = a.healthy[:0], 0, 0
				a.learn(median)
			}
			break
		}
		est := inFlight * float64(a.noLoad) / float64(median)
		target = max(a.min, min(a.size-1, int(math.Ceil(est))))
		why, a.ceiling = SizeShrunk, a.size
	}
	if grew {
		a.before, a.prev = thr, a.size
	} else {
		a.step = firstStep // steps double with each growth in a row only
	}
	a.grew = grew
	a.runs, a.ok, a.bad, a.inFlight = a.runs[:0], 0, 0, 0
	a.from, a.lastEnd = now, now
	return target, why, median
}

// spread returns the standard error of the window's median run time
// (a.runs, sorted), from its interquartile range: a median above the
// no-load run time by less than twice that may be noise.
func (a *sizer) spread() float64 {
	r := a.runs
	if len(r) < 4 {
		return math.Inf(1)
	}
	iqr := float64(r[len(r)*3/4] - r[len(r)/4])
	return iqr / 1.35 * 1.25 / math.Sqrt(float64(len(r)))
}

// grown returns the size to grow to: twice the size in slow start; else
// half way to the size where congestion was found last, if below it;
// else a step, which doubles with each growth in a row, for the
// downstream's capacity has grown.
func (a *sizer) grown() int {
	switch {
	case a.start:
		return a.size * 2
	case a.size < a.ceiling:
		return a.size + max(1, (a.ceiling-a.size)/2)
	}
	if a.grew && a.prev >= a.ceiling {
		a.step = min(a.step*2, lastStep)
	}
	return a.size + max(1, int(float64(a.size)*a.step))
}

// learn adds a healthy window's median run time to the history, and takes
// the no-load run time from it anew.
func (a *sizer) learn(median int64) {
	if median <= 0 {
		return
	}
	if len(a.healthy) < history {
		a.healthy = append(a.healthy, median)
	} else {
		a.healthy[a.next] = median
	}
	a.next = (a.next + 1) % history
	q := append(a.sorted[:0], a.healthy...)
	slices.Sort(q)
	if len(q) < 8 {
		a.noLoad = q[len(q)/2]
	} else {
		a.noLoad = q[len(q)/4]
	}
	a.last.NoLoad = time.Duration(a.noLoad)
}

// moved notes that the pool now has n workers, for why, as of now, and
// returns the event that counts it (0 for a Resize): the jobs that end
// within a median run time are not measured, for they ran mostly at the
// size before.
func (a *sizer) moved(n int, why SizeReason, now, median int64) Event {
	a.size = n
	a.last.Reason = why
	var e Event
	switch why {
	case SizeGrown:
		a.last.Grown++
		e = EventGrown
	case SizeShrunk, SizeUndone:
		a.last.Shrunk++
		e = EventShrunk
	case SizeBackedOff:
		a.last.BackedOff++
		e = EventBackedOff
	}
	if median == 0 {
		median = a.noLoad
	}
	a.settle, a.from = now+median, 0
	return e
}

// set notes a Resize of the pool to n, at now on the pool's clock, with
// the pool's workers held: the controller starts a new window from it,
// with what it knows of the no-load run time, and a decision taken before
// no longer stands.
func (a *sizer) set(n int, now int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.gen.Add(1)
	a.runs, a.ok, a.bad, a.inFlight = a.runs[:0], 0, 0, 0
	a.grew, a.hold, a.step = false, 0, firstStep
	a.moved(n, SizeSet, now, a.last.Latency.Nanoseconds())
}

// stats returns the controller's state.
func (a *sizer) stats() AdaptiveStats {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.last
}
