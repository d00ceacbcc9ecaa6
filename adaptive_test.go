package crew_test

import (
	"context"
	"math"
	"runtime"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/crewlib/crew"
)

// The harness's timeline, in base latencies of 10 ms (100 of them: 1 s):
// the capacity starts at 40, doubles at 3 s and halves back at 5 s; the
// demand (240 submitters in a closed loop) falls to 4 (10% of the
// capacity) from 7 s to 8 s; half the calls fail from 9 s to 9.5 s.
var simPhases = []simPhase{
	{at: 0, capacity: 40, demand: 240},
	{at: 3 * time.Second, capacity: 80, demand: 240},
	{at: 5 * time.Second, capacity: 40, demand: 240},
	{at: 7 * time.Second, capacity: 40, demand: 4},
	{at: 8 * time.Second, capacity: 40, demand: 240},
	{at: 9 * time.Second, capacity: 40, demand: 240, failRate: 0.5},
	{at: 9500 * time.Millisecond, capacity: 40, demand: 240},
}

const simTotal = 11 * time.Second

// simFigures are one run's figures against the targets of WithAdaptiveSize.
type simFigures struct {
	reach, steadySD, steadyIn float64 // from min: time to ±15% (base latencies); sd and part in band over 1.5-3 s
	thr, p99, noLoadP99       float64 // over 1.5-3 s: calls/s, p99 and no-load p99 (ms)
	doubled, halved           float64 // base latencies back within ±15% after the steps
	idleGrew                  int     // workers grown during the idle phase
	burstShrank               int     // workers lost during the error burst
	recovered                 float64 // base latencies back within ±15% after it
}

func figuresOf(r simRun) simFigures {
	var f simFigures
	lat := func(d time.Duration) float64 {
		if d < 0 {
			return -1
		}
		return float64(d) / float64(10*time.Millisecond)
	}
	f.reach = lat(r.reached(0, 3*time.Second, 40))
	_, f.steadySD, f.steadyIn = r.spread(1500*time.Millisecond, 3*time.Second, 40)
	f.steadySD /= 40
	f.thr = r.throughput(1500*time.Millisecond, 3*time.Second)
	p99, _ := r.p99(1500*time.Millisecond, 3*time.Second)
	_, noLoad := r.p99(0, simTotal)
	f.p99, f.noLoadP99 = float64(p99)/1e6, float64(noLoad)/1e6
	f.doubled = lat(r.reached(3*time.Second, 5*time.Second, 80))
	f.halved = lat(r.reached(5*time.Second, 7*time.Second, 40))
	// As the demand falls, the pool still holds up to 3 jobs per worker
	// (its bound), which take about 6 base latencies to drain, and the
	// window that ends meanwhile measured the demand before: growth counts
	// from 10 base latencies in.
	before := r.sizeAt(7*time.Second + 100*time.Millisecond)
	for at := 7*time.Second + 100*time.Millisecond; at < 8*time.Second; at += simTick {
		f.idleGrew = max(f.idleGrew, r.sizeAt(at)-before)
	}
	before = r.sizeAt(9 * time.Second)
	low := before
	for at := 9 * time.Second; at < 9500*time.Millisecond; at += simTick {
		low = min(low, r.sizeAt(at))
	}
	f.burstShrank = before - low
	f.recovered = lat(r.reached(9500*time.Millisecond, simTotal, 40))
	return f
}

// simSeeds is how many seeds each model of the harness runs: fewer under
// the race detector, which makes a run of the bubble ten times slower.
func simSeeds() uint64 {
	if raceEnabled || testing.Short() {
		return 3
	}
	return 9
}

// TestAdaptiveSizeFindsTheCapacity runs the harness (see simPhases) on
// both models of the downstream, over many seeds, and checks the targets
// of WithAdaptiveSize on the medians: from min, within ±15% of the
// capacity within 100 base latencies and a steady-state standard
// deviation of at most 10% of it; throughput at least 0.95x the best
// fixed size's and a p99 run time at most 1.3x the no-load p99; back
// within ±15% within 100 base latencies after the capacity doubles or
// halves, and after an error burst, during which it shrinks; no growth
// while the application sends little work.
func TestAdaptiveSizeFindsTheCapacity(t *testing.T) {
	for _, collapse := range []bool{false, true} {
		t.Run(map[bool]string{false: "proportional", true: "collapse"}[collapse], func(t *testing.T) {
			var reach, sd, in, thr, p99, doubled, halved, recovered, idle, shrank []float64
			for seed := range simSeeds() {
				f := figuresOf(simulate(t, simConfig{seed: seed, collapse: collapse, start: 1, lo: 1, hi: 400, phases: simPhases, total: simTotal}))
				fixed := 0.0
				for _, n := range []int{20, 40, 48, 80} { // too small, the optimum, too large
					r := simulate(t, simConfig{seed: seed, collapse: collapse, start: n, phases: simPhases[:1], total: 3 * time.Second})
					fixed = max(fixed, r.throughput(1500*time.Millisecond, 3*time.Second))
				}
				t.Logf("seed %d: reach %.0f, sd %.3f, in band %.2f, thr %.0f (best fixed %.0f), p99 %.1f ms (no load %.1f), doubled %.0f, halved %.0f, idle +%d, burst -%d, recovered %.0f",
					seed, f.reach, f.steadySD, f.steadyIn, f.thr, fixed, f.p99, f.noLoadP99, f.doubled, f.halved, f.idleGrew, f.burstShrank, f.recovered)
				late := func(x float64) float64 { // not reached counts as never
					if x < 0 {
						return 1e9
					}
					return x
				}
				reach, sd, in = append(reach, late(f.reach)), append(sd, f.steadySD), append(in, f.steadyIn)
				thr, p99 = append(thr, f.thr/fixed), append(p99, f.p99/f.noLoadP99)
				doubled, halved, recovered = append(doubled, late(f.doubled)), append(halved, late(f.halved)), append(recovered, late(f.recovered))
				idle, shrank = append(idle, float64(f.idleGrew)), append(shrank, float64(f.burstShrank))
			}
			t.Logf("worst seeds: reach %.0f, sd %.3f, in band %.2f, throughput %.3fx, p99 %.2fx, doubled %.0f, halved %.0f, recovered %.0f, idle growth %.0f",
				slices.Max(reach), slices.Max(sd), slices.Min(in), slices.Min(thr), slices.Max(p99), slices.Max(doubled), slices.Max(halved), slices.Max(recovered), slices.Max(idle))
			t.Logf("medians: reach %.0f base latencies, sd %.3f of c*, in band %.2f, throughput %.3fx the best fixed size, p99 %.2fx no load, doubled %.0f, halved %.0f, recovered %.0f, idle growth %.0f, burst shrink %.0f",
				median(reach), median(sd), median(in), median(thr), median(p99), median(doubled), median(halved), median(recovered), median(idle), median(shrank))
			assert.LessOrEqual(t, median(reach), 100.0, "base latencies from min to ±15%% of the capacity")
			assert.LessOrEqual(t, median(sd), 0.10, "steady-state standard deviation, as a part of the capacity")
			assert.GreaterOrEqual(t, median(in), 0.9, "the part of the steady state within ±15%% of the capacity")
			assert.GreaterOrEqual(t, median(thr), 0.95, "throughput against the best fixed size")
			assert.LessOrEqual(t, median(p99), 1.3, "p99 run time against the no-load p99")
			assert.LessOrEqual(t, median(doubled), 100.0, "base latencies back to ±15%% after the capacity doubled")
			assert.LessOrEqual(t, median(halved), 100.0, "base latencies back to ±15%% after the capacity halved")
			assert.Zero(t, median(idle), "workers grown while the application sent little work")
			assert.Positive(t, median(shrank), "workers shed during the error burst")
			assert.LessOrEqual(t, median(recovered), 100.0, "base latencies back to ±15%% after the error burst")
		})
	}
}

func TestWithAdaptiveSizeRefusesWhatItCannotDo(t *testing.T) {
	handle := func(context.Context, int) error { return nil }
	assert.PanicsWithValue(t, "crew: WithAdaptiveSize: min must be between 1 and 16777216, got 0", func() { crew.WithAdaptiveSize(0, 4) })
	assert.PanicsWithValue(t, "crew: WithAdaptiveSize: max must be between min (4) and 16777216, got 3", func() { crew.WithAdaptiveSize(4, 3) })
	assert.PanicsWithValue(t, "crew: WithAdaptiveSize: max must be between min (1) and 16777216, got 16777217", func() { crew.WithAdaptiveSize(1, 1<<24+1) })
	assert.PanicsWithValue(t, "crew: NewPool: WithAdaptiveSize(2, 4) needs workers between them, got 8", func() {
		crew.NewPool(8, handle, crew.WithAdaptiveSize(2, 4))
	})
	assert.PanicsWithValue(t, "crew: NewGroup: WithAdaptiveSize(2, 4) needs workers between them, got 1", func() {
		crew.NewGroup(1, crew.WithAdaptiveSize(2, 4))
	})
	assert.PanicsWithValue(t, "crew: WithContext: WithAdaptiveSize(2, 4) needs workers between them, got 5", func() {
		crew.WithContext(context.Background(), 5, crew.WithAdaptiveSize(2, 4))
	})
	assert.PanicsWithValue(t, "crew: NewPool: WithAdaptiveSize resizes the pool, and a pool WithConsistentHash keeps its workers: its keys are pinned to them", func() {
		crew.NewPool(2, handle, crew.WithAdaptiveSize(1, 4), crew.WithConsistentHash(func(v int) int { return v }))
	})
	assert.PanicsWithValue(t, "crew: Map: WithAdaptiveSize (for NewPool, NewGroup and WithContext) does not apply", func() {
		_, _ = crew.Map(context.Background(), 2, []int{1}, func(context.Context, int) (int, error) { return 0, nil }, crew.WithAdaptiveSize(1, 4))
	})
	p := crew.NewPool(2, handle, crew.WithAdaptiveSize(1, 4))
	defer p.Wait()
	assert.PanicsWithValue(t, "crew: NewBatch: WithAdaptiveSize (for NewPool, NewGroup and WithContext) does not apply", func() {
		p.NewBatch(context.Background(), crew.WithAdaptiveSize(1, 4))
	})
	assert.PanicsWithValue(t, "crew: Resize: the pool's WithAdaptiveSize(1, 4) keeps its workers between them, got 5", func() { p.Resize(5) })
	assert.Equal(t, crew.AdaptiveStats{Min: 1, Max: 4}, p.Stats().Adaptive, "before its first window")
	plain := crew.NewGroup(1)
	assert.Equal(t, crew.AdaptiveStats{}, plain.Stats().Adaptive, "a pool without it")
	assert.NoError(t, plain.Wait())
}

func TestSizeReasonsAndTheirEventsHaveNames(t *testing.T) {
	names := map[crew.SizeReason]string{crew.SizeSet: "set", crew.SizeGrown: "grown", crew.SizeShrunk: "shrunk", crew.SizeUndone: "undone", crew.SizeBackedOff: "backed off", 9: "SizeReason(9)"}
	for r, name := range names {
		assert.Equal(t, name, r.String())
	}
	assert.Equal(t, "grown", crew.EventGrown.String())
	assert.Equal(t, "shrunk", crew.EventShrunk.String())
	assert.Equal(t, "backed_off", crew.EventBackedOff.String())
}

// An adaptive pool reports each change of its size to its Recorder, as
// its Stats count them, and its Stats say why the size last changed; a
// Resize is a new starting point, which the controller goes on from,
// even while it resizes the pool itself, and Wait returns however the two
// meet.
func TestAnAdaptivePoolReportsItsChangesAndTakesAResize(t *testing.T) {
	m := &metered{}
	resized := 0
	r := simulate(t, simConfig{
		start: 4, lo: 2, hi: 200, total: 2 * time.Second, opts: []crew.Option{crew.WithMetrics(m)},
		phases: []simPhase{
			{at: 0, capacity: 30, demand: 120},
			{at: 1 * time.Second, capacity: 30, demand: 120, failRate: 0.5},
			{at: 1200 * time.Millisecond, capacity: 30, demand: 120},
		},
		side: func(ctx context.Context, p *crew.Pool[crew.Job]) {
			for { // a manual Resize every 300 ms, beside the controller's own
				select {
				case <-ctx.Done():
					return
				case <-time.After(300 * time.Millisecond):
				}
				p.Resize(2 + resized%3)
				resized++
				assert.Equal(t, crew.SizeSet, p.Stats().Adaptive.Reason, "a Resize sets the size")
			}
		},
	})
	a := r.stats.Adaptive
	t.Logf("%+v, after %d Resizes", a, resized)
	assert.Positive(t, a.Grown)
	assert.Positive(t, a.Shrunk)
	assert.Positive(t, a.BackedOff, "half the jobs failed for 200 ms")
	assert.InDelta(t, 10*time.Millisecond, a.NoLoad, float64(2*time.Millisecond), "the downstream's base run time")
	c := m.only(t).counts
	assert.Equal(t, map[crew.Event]int64{crew.EventGrown: a.Grown, crew.EventShrunk: a.Shrunk, crew.EventBackedOff: a.BackedOff},
		map[crew.Event]int64{crew.EventGrown: int64(c[crew.EventGrown]), crew.EventShrunk: int64(c[crew.EventShrunk]), crew.EventBackedOff: int64(c[crew.EventBackedOff])})
	assert.Equal(t, int64(c[crew.EventCompleted]), r.stats.Completed)
}

// The controller's measurement allocates nothing per job, nor per window
// (with min = max it measures every window and never resizes).
func TestAnAdaptivePoolDoesNotAllocatePerJob(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	assertSubmitsDoNotAllocate(t, crew.NewPool(2, func(context.Context, int) error { return nil }, crew.WithQueueSize(1), crew.WithAdaptiveSize(2, 2)))
}

// Once Wait began, the controller changes nothing and counts nothing: a
// pool told to finish the jobs it holds keeps the workers it has.
func TestAnAdaptivePoolWaitedForCountsNoResize(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := crew.NewGroup(1, crew.WithAdaptiveSize(1, 64), crew.WithQueueSize(4000))
		ctx := context.Background()
		for range 3000 {
			assert.NoError(t, p.Submit(ctx, func(context.Context) error { time.Sleep(10 * time.Millisecond); return nil }))
		}
		assert.NoError(t, p.Wait())
		s := p.Stats()
		assert.Equal(t, crew.AdaptiveStats{Min: 1, Max: 64, Reason: crew.SizeSet, NoLoad: s.Adaptive.NoLoad,
			Latency: s.Adaptive.Latency, Throughput: s.Adaptive.Throughput}, s.Adaptive, "no change counted")
		assert.Equal(t, 1, s.Workers)
	})
}

// goexitOnce is a Recorder whose first RunTime calls runtime.Goexit, and
// whose Add of a change of size reads the pool's Stats: no lock of the
// controller's is held as the Recorder runs.
type goexitOnce struct {
	mu     sync.Mutex
	exited bool
	pool   func() *crew.Pool[crew.Job]
	sizes  int
}

func (g *goexitOnce) Track(crew.Source) crew.Recorder { return g }
func (g *goexitOnce) Add(e crew.Event, _ int) {
	if e == crew.EventGrown || e == crew.EventShrunk || e == crew.EventBackedOff {
		_ = g.pool().Stats()
		g.mu.Lock()
		g.sizes++
		g.mu.Unlock()
	}
}
func (g *goexitOnce) Observe(t crew.Timing, _ time.Duration, _ string) {
	g.mu.Lock()
	first := t == crew.RunTime && !g.exited
	g.exited = g.exited || first
	g.mu.Unlock()
	if first {
		runtime.Goexit()
	}
}
func (g *goexitOnce) Close() {}

func TestAnAdaptivePoolsRecorderRunsOutsideItsLockAndMayGoexit(t *testing.T) {
	rec := &goexitOnce{}
	var pool *crew.Pool[crew.Job]
	rec.pool = func() *crew.Pool[crew.Job] { return pool }
	synctest.Test(t, func(t *testing.T) {
		pool = crew.NewGroup(1, crew.WithAdaptiveSize(1, 64), crew.WithMetrics(rec))
		ctx, stop := context.WithTimeout(context.Background(), time.Second)
		defer stop()
		var wg sync.WaitGroup
		for range 40 { // a closed loop, until the second ends
			wg.Go(func() {
				done := make(chan struct{}, 1)
				job := func(context.Context) error { time.Sleep(10 * time.Millisecond); done <- struct{}{}; return nil }
				for pool.Submit(ctx, job) == nil {
					<-done
				}
			})
		}
		wg.Wait()
		assert.ErrorIs(t, pool.Wait(), crew.ErrGoexit, "the Goexit fails the job it ended")
		s := pool.Stats()
		assert.Greater(t, s.Workers, 1, "it grew")
		assert.Equal(t, int(s.Adaptive.Grown+s.Adaptive.Shrunk+s.Adaptive.BackedOff), rec.sizes, "each change reported")
		assert.Zero(t, crew.AdaptiveRunning(pool), "every job counted out, the one whose Recorder called Goexit too")
	})
}

// Jobs that take no time on the bubble's clock close no window: the
// controller reports nothing that is not a number.
func TestAnAdaptivePoolOfJobsThatTakeNoTimeStaysFinite(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := crew.NewGroup(2, crew.WithAdaptiveSize(1, 8))
		ctx := context.Background()
		for range 5000 {
			assert.NoError(t, p.Submit(ctx, func(context.Context) error { return nil }))
		}
		assert.NoError(t, p.Wait())
		a := p.Stats().Adaptive
		assert.False(t, math.IsInf(a.Throughput, 0) || math.IsNaN(a.Throughput), "throughput %v", a.Throughput)
		assert.Equal(t, crew.SizeSet, a.Reason)
	})
}
