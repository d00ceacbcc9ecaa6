package main

// Go ports of three concurrency-limit algorithms from Netflix's
// concurrency-limits library (Java), with its published default parameters,
// used as contenders against our own adaptive pool sizer.
//
// Rules read from github.com/Netflix/concurrency-limits at snapshot
// 78a74b9878d38c4c048b0304ce12a162ab7b7222 (2026-01-12), in
// concurrency-limits-core/src/main/java/com/netflix/concurrency/limits/limit/.
// The files last changed at these commits:
//
//	Gradient2Limit.java                    74bb308f05da7248d9b16c76aa7f3c6a23dafdd1 (2024-09-18)
//	VegasLimit.java                        a127eb4a3ae1b03dff5eb63161f15bc550905d87 (2024-09-18)
//	functions/Log10RootIntFunction.java    a127eb4a3ae1b03dff5eb63161f15bc550905d87 (2024-09-18)
//	AIMDLimit.java                         81f9c1abef2cfa5d63d87e21890030232f8518d9 (2024-05-09)
//	AbstractLimit.java                     37ee6dea54f2e061bab85b65d6816f0255b85edc (2018-09-11)
//	measurement/ExpAvgMeasurement.java     11c70606499f8123ba45d8355543dfec67c50162 (2018-11-20)
//
// AbstractLimit only stores what the algorithm's update returns and hands it
// out as the limit, so sample returns that value. Java measures rtt in
// nanoseconds; so do these ports. Deviations, all forced by the limiter
// contract (a limit within the constructor's [min, max]): the constructor's
// initial, min and max replace Java's own defaults, the initial limit is
// clamped into [min, max], and Vegas clamps to min where Java clamps to 1.
// An rtt below one nanosecond is counted as one nanosecond (Vegas in Java
// rejects it; Gradient2 would divide by zero).

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// A limiter is a published concurrency-limit algorithm: fed one sample per
// job that ended, it returns the concurrency limit it wants now.
type limiter interface {
	// name is the algorithm's name in the report: "Gradient2", "AIMD", "Vegas".
	name() string
	// params states the parameters used (the published defaults), for the report, in one short line.
	params() string
	// sample reports one job that ended: its run time (rtt), the jobs in flight
	// when it started (itself included), and whether it was dropped (its error or a
	// timeout). It returns the limit after the sample, between the min and max given to the constructor.
	sample(rtt time.Duration, inflight int, dropped bool) int
}

// clampLimit returns v bounded to [lo, hi].
func clampLimit(v, lo, hi int) int {
	return max(lo, min(hi, v))
}

// rttNanos returns rtt in nanoseconds, at least one.
func rttNanos(rtt time.Duration) int64 {
	return max(1, rtt.Nanoseconds())
}

// expAvg is Java's ExpAvgMeasurement: the plain mean of the first warmup
// samples, then an exponential moving average with factor 2/(window+1).
type expAvg struct {
	value, sum     float64
	window, warmup int
	count          int
}

// add folds one sample into the average and returns the new average.
func (e *expAvg) add(x float64) float64 {
	if e.count < e.warmup {
		e.count++
		e.sum += x
		e.value = e.sum / float64(e.count)
	} else {
		f := 2.0 / float64(e.window+1)
		e.value = e.value*(1-f) + x*f
	}
	return e.value
}

// gradient2 ports Gradient2Limit: it compares each sample's rtt (the short
// term) with an exponential average of rtts over a long window, and moves the
// limit towards limit×gradient + queueSize, smoothed. Not safe for concurrent
// use: the caller serialises calls.
type gradient2 struct {
	limit      float64 // the estimated limit, kept fractional as in Java
	minLimit   int
	maxLimit   int
	longRtt    expAvg
	smoothing  float64
	tolerance  float64
	queueSize  int // Java's default queue-size function is the constant 4
	initial    int
	longWindow int
}

// newGradient2 returns Gradient2Limit with the published defaults (smoothing
// 0.2, queue size 4, long window 600 with a warmup of 10, rtt tolerance 1.5)
// and the given initial, min and max limits in place of Java's 20, 20, 200.
func newGradient2(initial, min, max int) limiter {
	initial = clampLimit(initial, min, max)
	return &gradient2{
		limit:      float64(initial),
		minLimit:   min,
		maxLimit:   max,
		longRtt:    expAvg{window: 600, warmup: 10},
		smoothing:  0.2,
		tolerance:  1.5,
		queueSize:  4,
		initial:    initial,
		longWindow: 600,
	}
}

// name returns "Gradient2".
func (g *gradient2) name() string { return "Gradient2" }

// params states the parameters in one line.
func (g *gradient2) params() string {
	return fmt.Sprintf("initial %d, min %d, max %d (ours; Java 20/20/200); smoothing %.1f, queueSize %d, "+
		"longWindow %d (warmup 10), rttTolerance %.1f", g.initial, g.minLimit, g.maxLimit,
		g.smoothing, g.queueSize, g.longWindow, g.tolerance)
}

// sample applies Gradient2's rules to one sample; like Java it ignores
// whether the job was dropped.
//
// The long-term rtt takes the sample first. If it is more than twice the
// sample, it is cut by 5% at once so that it recovers quickly after a long
// spell of load (the gradient below still uses the value before the cut).
// When fewer than half the limit's jobs are in flight the limit is left as
// it is. Otherwise gradient = tolerance×long/short bounded to [0.5, 1], the
// target is limit×gradient + queueSize, the limit moves a smoothing share of
// the way to it and is bounded to [min, max]; the int limit is its truncation.
func (g *gradient2) sample(rtt time.Duration, inflight int, dropped bool) int {
	short := float64(rttNanos(rtt))
	long := g.longRtt.add(short)
	if long/short > 2 {
		g.longRtt.value *= 0.95
	}
	if float64(inflight) < g.limit/2 {
		return int(g.limit)
	}
	gradient := max(0.5, min(1.0, g.tolerance*long/short))
	next := g.limit*gradient + float64(g.queueSize)
	next = g.limit*(1-g.smoothing) + next*g.smoothing
	next = max(float64(g.minLimit), min(float64(g.maxLimit), next))
	g.limit = next
	return int(next)
}

// aimd ports AIMDLimit: add one while no job is dropped and the limit is in
// use, multiply by the backoff ratio on a drop. Its limit is an int, as in
// Java. Not safe for concurrent use: the caller serialises calls.
type aimd struct {
	limit        int
	minLimit     int
	maxLimit     int
	initial      int
	backoffRatio float64
	timeout      time.Duration
}

// newAIMD returns AIMDLimit with the published defaults (backoff ratio 0.9,
// timeout 5s) and the given initial, min and max limits in place of Java's
// 20, 20, 200.
func newAIMD(initial, min, max int) limiter {
	initial = clampLimit(initial, min, max)
	return &aimd{
		limit:        initial,
		minLimit:     min,
		maxLimit:     max,
		initial:      initial,
		backoffRatio: 0.9,
		timeout:      5 * time.Second,
	}
}

// name returns "AIMD".
func (a *aimd) name() string { return "AIMD" }

// params states the parameters in one line.
func (a *aimd) params() string {
	return fmt.Sprintf("initial %d, min %d, max %d (ours; Java 20/20/200); backoffRatio %.1f, "+
		"timeout %v (a longer rtt counts as a drop)", a.initial, a.minLimit, a.maxLimit,
		a.backoffRatio, a.timeout)
}

// sample applies AIMD's rules to one sample: a drop, or an rtt above the
// timeout, sets the limit to the truncation of limit×backoffRatio; otherwise,
// when at least half the limit is in flight, the limit grows by one. The
// result is bounded to [min, max].
func (a *aimd) sample(rtt time.Duration, inflight int, dropped bool) int {
	l := a.limit
	if dropped || rttNanos(rtt) > a.timeout.Nanoseconds() {
		l = int(float64(l) * a.backoffRatio)
	} else if inflight*2 >= l {
		l++
	}
	a.limit = clampLimit(l, a.minLimit, a.maxLimit)
	return a.limit
}

// log10Root is Java's Log10RootIntFunction with baseline 0: the integer part
// of log10(t), but at least 1 below 1000. It counts digits rather than call
// math.Log10, which can fall just short of an exact power of ten.
func log10Root(t int) int {
	n := 0
	for ; t >= 10; t /= 10 {
		n++
	}
	return max(1, n)
}

// vegas ports VegasLimit, after TCP Vegas: it estimates the queue as
// limit×(1 − rttNoLoad/rtt), grows while the queue is small and shrinks
// while it is large, and now and then probes for a new no-load rtt. Not safe
// for concurrent use: the caller serialises calls.
type vegas struct {
	limit           float64 // the estimated limit, kept fractional as in Java
	minLimit        int
	maxLimit        int
	initial         int
	rttNoLoad       int64 // nanoseconds; 0 until the first sample
	smoothing       float64
	probeMultiplier int
	probeCount      int
	probeJitter     float64
	rnd             *rand.Rand
}

// newVegas returns VegasLimit with the published defaults (alpha 3×log10,
// beta 6×log10, threshold log10, increase and decrease by log10 of the limit,
// smoothing 1.0, probe multiplier 30 with jitter in [0.5, 1)) and the given
// initial and max limits in place of Java's 20 and 1000; Java's floor of 1 is
// replaced by min. The jitter comes from a PCG source seeded (1, 2), so runs
// repeat.
func newVegas(initial, min, max int) limiter {
	initial = clampLimit(initial, min, max)
	v := &vegas{
		limit:           float64(initial),
		minLimit:        min,
		maxLimit:        max,
		initial:         initial,
		smoothing:       1.0,
		probeMultiplier: 30,
		rnd:             rand.New(rand.NewPCG(1, 2)),
	}
	v.resetProbeJitter()
	return v
}

// resetProbeJitter draws the next probe's jitter, uniform in [0.5, 1).
func (v *vegas) resetProbeJitter() {
	v.probeJitter = 0.5 + 0.5*v.rnd.Float64()
}

// name returns "Vegas".
func (v *vegas) name() string { return "Vegas" }

// params states the parameters in one line.
func (v *vegas) params() string {
	return fmt.Sprintf("initial %d, min %d, max %d (ours; Java 20/1/1000); alpha 3·log10(L), beta 6·log10(L), "+
		"threshold log10(L), ±log10(L), smoothing %.1f, probe every %d·L·U[0.5,1) samples",
		v.initial, v.minLimit, v.maxLimit, v.smoothing, v.probeMultiplier)
}

// sample applies Vegas's rules to one sample.
//
// Every sample counts towards the next probe; once the count reaches
// jitter×probeMultiplier×limit, the sample's rtt becomes the no-load rtt, the
// count restarts with a new jitter and the limit stays. A first sample, or
// one faster than the no-load rtt, also just sets the no-load rtt. Otherwise
// the queue is ceil(limit×(1 − noLoad/rtt)). A drop decreases the limit by
// log10(limit). With fewer than half the limit in flight the limit stays.
// Else, with L the int limit: a queue of at most log10(L) grows the limit by
// 6·log10(L) (beta); below 3·log10(L) (alpha) it grows by log10(L); above
// beta it shrinks by log10(L); in between it stays. A changed limit is
// bounded to [min, max] and then smoothed; the int limit is its truncation.
func (v *vegas) sample(rtt time.Duration, inflight int, dropped bool) int {
	r := rttNanos(rtt)
	v.probeCount++
	if v.probeJitter*float64(v.probeMultiplier)*v.limit <= float64(v.probeCount) {
		v.resetProbeJitter()
		v.probeCount = 0
		v.rttNoLoad = r
		return int(v.limit)
	}
	if v.rttNoLoad == 0 || r < v.rttNoLoad {
		v.rttNoLoad = r
		return int(v.limit)
	}

	queue := int(math.Ceil(v.limit * (1 - float64(v.rttNoLoad)/float64(r))))
	step := float64(log10Root(int(v.limit)))
	var next float64
	switch {
	case dropped:
		next = v.limit - step
	case float64(inflight*2) < v.limit:
		return int(v.limit)
	default:
		l := int(v.limit)
		alpha, beta, threshold := 3*log10Root(l), 6*log10Root(l), log10Root(l)
		switch {
		case queue <= threshold:
			next = v.limit + float64(beta)
		case queue < alpha:
			next = v.limit + step
		case queue > beta:
			next = v.limit - step
		default:
			return int(v.limit)
		}
	}
	next = max(float64(v.minLimit), min(float64(v.maxLimit), next))
	next = (1-v.smoothing)*v.limit + v.smoothing*next
	v.limit = next
	return int(next)
}
