package crew_test

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/crewlib/crew"
)

// A simulated downstream, for WithAdaptiveSize's harness: a service with a
// hidden capacity, called by a pool's jobs in a synctest bubble, on its
// fake clock. A call's run time is its base while at most capacity calls
// are in flight as it starts, then grows in proportion to them (the
// downstream serves capacity calls at once, and the rest queue there); in
// the second model (collapse), above twice the capacity it grows as their
// cube, so throughput collapses. Each run time is multiplied by
// lognormal noise; a call fails, after its run time, with the
// downstream's failure rate.
type downstream struct {
	base     time.Duration
	sigma    float64 // of the lognormal noise
	collapse bool
	epoch    time.Time

	mu       sync.Mutex
	rng      *rand.Rand
	capacity int
	failRate float64
	inFlight int
	calls    []simCall
}

// A simCall is one call the downstream served.
type simCall struct {
	at       time.Duration // when it started, since the run began
	ran      time.Duration
	inFlight int // calls in flight as it started, itself included
	capacity int // the capacity then
	failed   bool
}

var errSimDropped = errors.New("simulated downstream: call failed")

func (d *downstream) call(context.Context) error {
	d.mu.Lock()
	d.inFlight++
	c := simCall{at: time.Since(d.epoch), inFlight: d.inFlight, capacity: d.capacity}
	f := 1.0
	if load := float64(c.inFlight) / float64(c.capacity); load > 1 {
		f = load
		if d.collapse && load > 2 {
			f *= (load / 2) * (load / 2)
		}
	}
	c.ran = time.Duration(float64(d.base) * f * math.Exp(d.sigma*d.rng.NormFloat64()))
	c.failed = d.rng.Float64() < d.failRate
	d.mu.Unlock()
	time.Sleep(c.ran)
	d.mu.Lock()
	d.inFlight--
	d.calls = append(d.calls, c)
	d.mu.Unlock()
	if c.failed {
		return errSimDropped
	}
	return nil
}

// A simPhase changes the downstream, or the demand, at a time.
type simPhase struct {
	at       time.Duration
	capacity int     // the downstream's capacity from then on
	demand   int     // submitters calling in a closed loop, from then on
	failRate float64 // the downstream's failure rate from then on
}

// simRun is what one run of the simulation saw.
type simRun struct {
	sizes []int // the pool's workers every simTick
	calls []simCall
	stats crew.PoolStats // after Wait
}

const simTick = 10 * time.Millisecond

// A simConfig is one run of the simulation.
type simConfig struct {
	seed          uint64
	collapse      bool // the downstream's second model
	start, lo, hi int  // the pool's workers at first; adaptive between lo and hi unless hi is 0
	phases        []simPhase
	total         time.Duration
	opts          []crew.Option                                     // more options for the pool
	side          func(ctx context.Context, p *crew.Pool[crew.Job]) // runs beside the submitters, if not nil, until ctx ends
}

// simulate runs a pool against a downstream that follows c.phases, for
// c.total, in a synctest bubble: submitters in a closed loop (each
// submits a call, waits for it, and submits the next), as many as the
// phase's demand.
func simulate(t *testing.T, c simConfig) simRun {
	var run simRun
	phases, total := c.phases, c.total
	synctest.Test(t, func(t *testing.T) {
		d := &downstream{base: 10 * time.Millisecond, sigma: 0.2, collapse: c.collapse, epoch: time.Now(),
			rng: rand.New(rand.NewPCG(c.seed, 7)), capacity: phases[0].capacity}
		opts := slices.Clone(c.opts)
		if c.hi > 0 {
			opts = append(opts, crew.WithAdaptiveSize(c.lo, c.hi))
		}
		p := crew.NewGroup(c.start, opts...)
		ctx, stop := context.WithCancel(context.Background())
		var mu sync.Mutex
		demand, changed := 0, make(chan struct{})
		most := 0
		for _, ph := range phases {
			most = max(most, ph.demand)
		}
		var wg sync.WaitGroup
		if c.side != nil {
			wg.Go(func() { c.side(ctx, p) })
		}
		for i := range most {
			wg.Go(func() {
				done := make(chan struct{}, 1)
				job := func(ctx context.Context) error { defer func() { done <- struct{}{} }(); return d.call(ctx) }
				for {
					mu.Lock()
					on, wait := i < demand, changed
					mu.Unlock()
					if !on {
						select {
						case <-wait:
							continue
						case <-ctx.Done():
							return
						}
					}
					if p.Submit(ctx, job) != nil {
						return
					}
					<-done
				}
			})
		}
		for tick := time.Duration(0); tick < total; tick += simTick {
			for _, ph := range phases {
				if ph.at == tick {
					d.mu.Lock()
					d.capacity, d.failRate = ph.capacity, ph.failRate
					d.mu.Unlock()
					mu.Lock()
					demand = ph.demand
					close(changed)
					changed = make(chan struct{})
					mu.Unlock()
				}
			}
			time.Sleep(simTick)
			run.sizes = append(run.sizes, p.Stats().Workers)
		}
		stop()
		wg.Wait()
		_ = p.Wait() // the failures the downstream was told to make
		run.calls, run.stats = d.calls, p.Stats()
	})
	return run
}

// sizeAt returns the size sampled at time at.
func (r simRun) sizeAt(at time.Duration) int { return r.sizes[min(int(at/simTick), len(r.sizes)-1)] }

// within reports whether size is within ±15% of c.
func within(size, c int) bool { return math.Abs(float64(size-c)) <= 0.15*float64(c) }

// reached returns how long after from the size first came within ±15% of
// c, or -1 if it did not before to.
func (r simRun) reached(from, to time.Duration, c int) time.Duration {
	for at := from; at < to; at += simTick {
		if within(r.sizeAt(at), c) {
			return at - from
		}
	}
	return -1
}

// spread returns the sizes' mean and standard deviation between from and
// to, and the part of them within ±15% of c.
func (r simRun) spread(from, to time.Duration, c int) (mean, sd, in float64) {
	var xs []float64
	for at := from; at < to; at += simTick {
		s := r.sizeAt(at)
		xs = append(xs, float64(s))
		if within(s, c) {
			in++
		}
	}
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	for _, x := range xs {
		sd += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(sd / float64(len(xs))), in / float64(len(xs))
}

// throughput returns the calls per second that succeeded, started between
// from and to.
func (r simRun) throughput(from, to time.Duration) float64 {
	n := 0
	for _, c := range r.calls {
		if c.at >= from && c.at < to && !c.failed {
			n++
		}
	}
	return float64(n) / (to - from).Seconds()
}

// p99 returns the 99th percentile of the run times of the calls started
// between from and to, and of those among them made at no load (at most
// the capacity in flight).
func (r simRun) p99(from, to time.Duration) (all, noLoad time.Duration) {
	var xs, ys []time.Duration
	for _, c := range r.calls {
		if c.at >= from && c.at < to {
			xs = append(xs, c.ran)
			if c.inFlight <= c.capacity {
				ys = append(ys, c.ran)
			}
		}
	}
	return quantile(xs, 0.99), quantile(ys, 0.99)
}

func quantile(xs []time.Duration, q float64) time.Duration {
	if len(xs) == 0 {
		return 0
	}
	slices.Sort(xs)
	return xs[min(int(q*float64(len(xs))), len(xs)-1)]
}

// median returns the median of xs.
func median(xs []float64) float64 {
	ys := slices.Clone(xs)
	slices.Sort(ys)
	return ys[len(ys)/2]
}
