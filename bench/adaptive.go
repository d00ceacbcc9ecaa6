package main

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/crewlib/crew"
)

// adaptiveScenario runs one pool per contender against a simulated
// downstream with a hidden capacity, on the real clock: fixed sizes (too
// small, the optimum, too large), crew's WithAdaptiveSize, and Netflix's
// Gradient2, AIMD and Vegas (limiters.go) each driving the same kind of
// crew pool through Resize, fed every job's run time, the jobs in flight
// and its failure, as they are published.
type adaptiveScenario struct {
	none
	capacity, runs int
	span           time.Duration // of one run of one contender
	results        []adaptiveResult
}

// adaptiveResult is one contender's figures, the median over the runs, and
// its last run's series for the chart.
type adaptiveResult struct {
	name      string
	offBy     float64       // the mean of |size − capacity| / capacity over the run's ticks
	reach     time.Duration // from the start to within ±15% of the capacity; -1: never
	thr       float64       // calls per second, in the steady state (see steady)
	p99       time.Duration // of the downstream's run times, in the steady state
	noLoadP99 time.Duration // of those made with at most the capacity in flight
	sizes     []int         // the last run's size per tick
	p99s      []float64     // the last run's p99 run time per 10 ticks, ms
}

const (
	adaptiveBase = 10 * time.Millisecond // the downstream's run time at no load
	adaptiveTick = 10 * time.Millisecond
)

func (*adaptiveScenario) name() string  { return "adaptive" }
func (*adaptiveScenario) title() string { return "A pool that finds its own size" }

func (a *adaptiveScenario) configure(s settings) error {
	a.capacity = 16
	a.runs = s.runsFor(1, 1, 3)
	a.span = pick(s.mode, 2400*time.Millisecond, 3600*time.Millisecond, 8*time.Second) // 7 contenders: 17 s, 25 s, 56 s a run
	return nil
}

// An adaptiveContender makes a pool, and the job it submits for each call
// of the downstream.
type adaptiveContender struct {
	name string
	make func() (*crew.Pool[crew.Job], func(call crew.Job) crew.Job)
}

// adaptiveMax is the most workers any contender may have.
const adaptiveMax = 256

func (a *adaptiveScenario) contenders() []adaptiveContender {
	fixed := func(n int) adaptiveContender {
		return adaptiveContender{fmt.Sprintf("fixed %d", n), func() (*crew.Pool[crew.Job], func(crew.Job) crew.Job) {
			return crew.NewGroup(n), func(call crew.Job) crew.Job { return call }
		}}
	}
	limited := func(name string, newLimiter func(initial, min, max int) limiter) adaptiveContender {
		return adaptiveContender{name, func() (*crew.Pool[crew.Job], func(crew.Job) crew.Job) {
			p := crew.NewGroup(1)
			return p, limitedBy(p, newLimiter(1, 1, adaptiveMax))
		}}
	}
	return []adaptiveContender{
		fixed(a.capacity / 2), fixed(a.capacity), fixed(a.capacity * 2),
		{adaptiveCrewName, func() (*crew.Pool[crew.Job], func(crew.Job) crew.Job) {
			return crew.NewGroup(1, crew.WithAdaptiveSize(1, adaptiveMax)), func(call crew.Job) crew.Job { return call }
		}},
		limited("Gradient2", newGradient2), limited("AIMD", newAIMD), limited("Vegas", newVegas),
	}
}

const adaptiveCrewName = "crew WithAdaptiveSize"

// limitedBy returns the wrapper that feeds l each job's run time, the
// jobs in flight as it started (itself included: what Netflix's
// AbstractLimiter passes, taken as the request acquires its slot) and its
// failure, and resizes p to the limit l returns, as the limiter's own
// executor would cap its concurrency.
func limitedBy(p *crew.Pool[crew.Job], l limiter) func(crew.Job) crew.Job {
	var mu sync.Mutex
	var inFlight atomic.Int64
	size := 1
	return func(call crew.Job) crew.Job {
		return func(ctx context.Context) error {
			n := int(inFlight.Add(1))
			start := time.Now()
			err := call(ctx)
			ran := time.Since(start)
			inFlight.Add(-1)
			mu.Lock()
			if limit := l.sample(ran, n, err != nil); limit != size {
				size = limit
				p.Resize(limit)
			}
			mu.Unlock()
			return err
		}
	}
}

// The timeline of a run, in thirds: the capacity, then twice it, then it
// again; 6 times the capacity of submitters call in a closed loop.
func (a *adaptiveScenario) capacityAt(at time.Duration) int {
	if at >= a.span/3 && at < 2*a.span/3 {
		return 2 * a.capacity
	}
	return a.capacity
}

// steady reports whether at is in the second half of a third of the run,
// where the throughput and p99 are measured: the steady state after each
// change of the capacity.
func (a *adaptiveScenario) steady(at time.Duration) bool {
	third := a.span / 3
	return at%third >= third/2 && at < 3*third
}

func (a *adaptiveScenario) run(progress func(string)) {
	cs := a.contenders()
	names := make([]string, len(cs))
	for i, c := range cs {
		names[i] = c.name
	}
	got := interleave(a.runs, names, progress, func(run int) func(int) adaptiveResult {
		return func(i int) adaptiveResult { return a.measure(cs[i], uint64(run)) }
	})
	a.results = nil
	for i, name := range names {
		rs := got[i]
		last := rs[len(rs)-1]
		a.results = append(a.results, adaptiveResult{name: name,
			offBy:     medianOf(rs, func(r adaptiveResult) float64 { return r.offBy }),
			reach:     a.medianReach(rs),
			thr:       medianOf(rs, func(r adaptiveResult) float64 { return r.thr }),
			p99:       time.Duration(medianOf(rs, func(r adaptiveResult) float64 { return float64(r.p99) })),
			noLoadP99: time.Duration(medianOf(rs, func(r adaptiveResult) float64 { return float64(r.noLoadP99) })),
			sizes:     last.sizes, p99s: last.p99s})
	}
}

// medianReach returns the median of the runs' reach, a run that never
// reached the band counting as the slowest; -1 if the median run never did.
func (a *adaptiveScenario) medianReach(rs []adaptiveResult) time.Duration {
	m := medianOf(rs, func(r adaptiveResult) float64 {
		if r.reach < 0 {
			return math.Inf(1)
		}
		return float64(r.reach)
	})
	if math.IsInf(m, 1) {
		return -1
	}
	return time.Duration(m)
}

// measure runs c's pool against the downstream for one span.
func (a *adaptiveScenario) measure(c adaptiveContender, seed uint64) adaptiveResult {
	p, wrap := c.make()
	d := &simDownstream{rng: rand.New(rand.NewPCG(seed, 11)), epoch: time.Now(), capacityAt: a.capacityAt}
	job := wrap(d.call)
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range 6 * a.capacity {
		wg.Go(func() {
			done := make(chan struct{}, 1)
			call := func(ctx context.Context) error { defer func() { done <- struct{}{} }(); return job(ctx) }
			for p.Submit(ctx, call) == nil {
				<-done
			}
		})
	}
	r := adaptiveResult{name: c.name, reach: -1}
	var off float64
	for at := time.Duration(0); at < a.span; at += adaptiveTick {
		time.Sleep(adaptiveTick)
		size, want := p.Stats().Workers, a.capacityAt(at)
		r.sizes = append(r.sizes, size)
		off += math.Abs(float64(size-want)) / float64(want)
		if r.reach < 0 && math.Abs(float64(size-want)) <= 0.15*float64(want) {
			r.reach = at + adaptiveTick
		}
	}
	stop()
	wg.Wait()
	if err := p.Wait(); err != nil { // no call fails
		panic(err)
	}
	r.offBy = off / float64(len(r.sizes))
	calls := d.done()
	var all, noLoad []float64
	steady := 0
	buckets := make([][]float64, (len(r.sizes)+9)/10)
	for _, x := range calls {
		if a.steady(x.at) {
			all = append(all, float64(x.ran))
			steady++
		}
		if x.inFlight <= x.capacity {
			noLoad = append(noLoad, float64(x.ran))
		}
		if b := int(x.at / (10 * adaptiveTick)); b < len(buckets) {
			buckets[b] = append(buckets[b], float64(x.ran)/1e6)
		}
	}
	r.thr = float64(steady) / (a.span / 2).Seconds()
	r.p99, r.noLoadP99 = time.Duration(p99Of(all)), time.Duration(p99Of(noLoad))
	for _, b := range buckets {
		r.p99s = append(r.p99s, p99Of(b))
	}
	return r
}

func p99Of(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	slices.Sort(xs)
	return quantile(xs, 0.99)
}

// simDownstream is the harness's downstream (the crew module's
// adaptive_sim_test.go) on the real clock: a call's run time is the base
// while at most the capacity are in flight as it starts, then in
// proportion to them, times lognormal noise (σ 0.2).
type simDownstream struct {
	epoch      time.Time
	capacityAt func(time.Duration) int

	mu       sync.Mutex
	rng      *rand.Rand
	inFlight int
	calls    []simCall
}

type simCall struct {
	at, ran            time.Duration
	inFlight, capacity int
}

func (d *simDownstream) call(context.Context) error {
	d.mu.Lock()
	d.inFlight++
	at := time.Since(d.epoch)
	c := simCall{at: at, inFlight: d.inFlight, capacity: d.capacityAt(at)}
	f := max(1, float64(c.inFlight)/float64(c.capacity))
	c.ran = time.Duration(float64(adaptiveBase) * f * math.Exp(0.2*d.rng.NormFloat64()))
	d.mu.Unlock()
	start := time.Now()
	time.Sleep(c.ran)
	c.ran = time.Since(start) // what the sleep took, as the pool saw it
	d.mu.Lock()
	d.inFlight--
	d.calls = append(d.calls, c)
	d.mu.Unlock()
	return nil
}

// done returns the calls the downstream served.
func (d *simDownstream) done() []simCall {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.calls
}

func (a *adaptiveScenario) resultOf(name string) adaptiveResult {
	return find(a.results, func(r adaptiveResult) bool { return r.name == name })
}
