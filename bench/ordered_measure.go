package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"runtime"
	"runtime/metrics"
	"sync/atomic"
	"time"

	"github.com/crewlib/crew"
)

// The jobs of the ordered scenario: no-op jobs return their input; uneven
// jobs sleep orderedShortJob, or orderedLongJob for orderedLongRate of
// them, then return it; the jobs of the heap measurement allocate a
// result of orderedPayload bytes, and the first of them sleeps first.
const (
	orderedNoop      = "no-op"
	orderedUneven    = "uneven"
	orderedShortJob  = 100 * time.Microsecond
	orderedLongJob   = 5 * time.Millisecond
	orderedLongRate  = 0.05
	orderedPayload   = 1024
	orderedHeapEvery = 5 * time.Millisecond // how often the heap is sampled
)

// orderedConfig is the ordered scenario's size.
type orderedConfig struct {
	workers                      int
	noopItems, unevenItems, runs int
	heapItems, heapRuns          int
	stall                        time.Duration // how long the heap measurement's first input sleeps
}

// orderedScenario consumes results in input order through crew's MapSeq
// and Stream, conc's stream and a hand-written ordered pipeline, against
// crew's unordered pool.
type orderedScenario struct {
	none
	cfg     orderedConfig
	ordered *orderedReport
}

func (*orderedScenario) name() string  { return "ordered" }
func (*orderedScenario) title() string { return "Ordered streams" }

// configure sizes the ordered scenario: with -full, 100,000 no-op inputs
// and 20,000 uneven ones, the -runs flag's runs (5), and a slow first input
// of 1 s before 100,000 more, 3 times; by default, 20,000 no-op inputs,
// 4,000 uneven ones, 3 runs, and 0.3 s before 20,000 inputs, once; with
// -quick, 10,000 no-op inputs, 2,000 uneven ones, one run, and 0.3 s
// before 10,000 inputs, once. Fewer uneven inputs than no-op ones: where
// time.Sleep takes a millisecond at least, as on a two-core Linux machine,
// 20,000 uneven inputs take 6 s through a window of one input per worker,
// and a run of every contender 45 s.
func (s *orderedScenario) configure(c settings) error {
	runs := c.runsFor(1, 3, 5)
	s.cfg = pick(c.mode,
		orderedConfig{c.workers, 10_000, 2000, runs, 10_000, 1, 300 * time.Millisecond},
		orderedConfig{c.workers, 20_000, 4000, runs, 20_000, 1, 300 * time.Millisecond},
		orderedConfig{c.workers, 100_000, 20_000, runs, 100_000, min(runs, 3), time.Second})
	return nil
}

func (s *orderedScenario) run(progress func(string)) {
	o := ordered(s.cfg, progress)
	s.ordered = &o
}

func (r *orderedScenario) charts() []chart {
	return chartIf(r.ordered != nil, r.chartTitle(), "ordered.png", r.chart)
}

// orderedResult is one contender's figures with one kind of job, each the
// median over the runs.
type orderedResult struct {
	form          string
	window        int // 0 for the unordered pool
	job           string
	nsPerItem     float64       // from the start to the last result consumed, per input
	first         time.Duration // from the start to the first result consumed; 0 for the unordered pool, which consumes after its Wait
	allocsPerItem float64
}

// orderedHeap is one contender's heap with a slow first input, over the
// level before its run, the median over the runs: its peak while the
// first input ran, which the window bounds, and over the whole run, which
// counts the results consumed and not yet collected too.
type orderedHeap struct {
	form         string
	window       int
	held, peaked float64 // bytes
}

// orderedReport is what the ordered scenario measured.
type orderedReport struct {
	orderedConfig
	results []orderedResult // by kind of job, then contender
	heap    []orderedHeap
	// streamOwnAllocs is crew Stream's allocations per no-op input at its
	// default window with its tasks and callbacks made before the count:
	// what crew allocates, not the user's closures.
	streamOwnAllocs float64
	// How long the uneven jobs' sleeps took, measured at the start.
	sleptShort, sleptLong time.Duration
}

// ordered runs the ordered scenario: cfg.runs runs, each timing every
// contender with no-op jobs, then with uneven ones drawn with the run's
// seed, the contenders one after another, a collection before each; then
// crew Stream's own allocations; then cfg.heapRuns runs of the heap
// measurement. Each figure is the median over the runs.
func ordered(cfg orderedConfig, progress func(string)) orderedReport {
	cs := orderedContenders[int](cfg.workers, true)
	out := orderedReport{orderedConfig: cfg, sleptShort: measureSleep(orderedShortJob), sleptLong: measureSleep(orderedLongJob)}
	type timing struct{ ns, first, allocs float64 }
	jobs := []string{orderedNoop, orderedUneven}
	var names []string
	for _, job := range jobs {
		for _, c := range cs {
			names = append(names, fmt.Sprintf("%s jobs: %s", job, orderedName(c.form, c.window, cfg.workers)))
		}
	}
	got := interleave(cfg.runs, names, progress, func(run int) func(i int) timing {
		uneven := unevenOrdered(unevenTimes(cfg.unevenItems, run))
		return func(i int) timing {
			n, f := cfg.noopItems, noopOrdered
			if jobs[i/len(cs)] == orderedUneven {
				n, f = cfg.unevenItems, uneven
			}
			t := timeOrdered(cs[i%len(cs)], n, f)
			return timing{float64(t.last) / float64(n), float64(t.first), t.allocs / float64(n)}
		}
	})
	for i, ts := range got {
		c := cs[i%len(cs)]
		x := orderedResult{c.form, c.window, jobs[i/len(cs)], medianOf(ts, func(t timing) float64 { return t.ns }),
			time.Duration(medianOf(ts, func(t timing) float64 { return t.first })), medianOf(ts, func(t timing) float64 { return t.allocs })}
		if c.window == 0 {
			x.first = 0
		}
		out.results = append(out.results, x)
	}
	var own []float64
	for run := range cfg.runs {
		progress(fmt.Sprintf("run %d/%d: crew Stream's own allocations", run+1, cfg.runs))
		own = append(own, streamOwnAllocs(cfg.workers, crew.DefaultWindowPerWorker*cfg.workers, cfg.noopItems))
	}
	out.streamOwnAllocs = median(own)
	hs := orderedContenders[[]byte](cfg.workers, false)
	var heapNames []string
	for _, c := range hs {
		heapNames = append(heapNames, "heap: "+orderedName(c.form, c.window, cfg.workers))
	}
	type heapRun struct{ held, peaked float64 }
	heaps := interleave(cfg.heapRuns, heapNames, progress, each(func(i int) heapRun {
		h, p := heapOrdered(hs[i], cfg.heapItems, cfg.stall)
		return heapRun{h, p}
	}))
	for i, c := range hs {
		out.heap = append(out.heap, orderedHeap{c.form, c.window,
			medianOf(heaps[i], func(x heapRun) float64 { return x.held }), medianOf(heaps[i], func(x heapRun) float64 { return x.peaked })})
	}
	return out
}

// noopOrdered is the no-op job: it returns its input.
func noopOrdered(_ context.Context, i int) int { return i }

// unevenOrdered returns the uneven job: input i sleeps d[i], then returns i.
func unevenOrdered(d []time.Duration) func(context.Context, int) int {
	return func(_ context.Context, i int) int {
		time.Sleep(d[i])
		return i
	}
}

// unevenTimes draws the sleeps of n uneven jobs with run's seed: the same
// for every contender within the run.
func unevenTimes(n, run int) []time.Duration {
	return drawMix(rand.New(rand.NewPCG(4000+uint64(run), 0x6f726465726564)), n, orderedShortJob, orderedLongJob, orderedLongRate)
}

// An orderedCheck is the consumer of one run of a contender: it panics
// at a result that is not the next input's, so that a result skipped,
// repeated or out of order cannot pass, and notes when the first and the
// last result came.
type orderedCheck[R any] struct {
	valid       func(i int, r R) bool // whether r is input i's result
	n, next     int
	start       time.Time
	first, last time.Duration
	onFirst     func() // called as the first result comes; may be nil
}

func (c *orderedCheck[R]) consume(r R) {
	if c.next >= c.n || !c.valid(c.next, r) {
		panic(fmt.Sprintf("bench: ordered: result %d of %d is not input %d's", c.next, c.n, c.next))
	}
	if c.next == 0 {
		c.first = time.Since(c.start)
		if c.onFirst != nil {
			c.onFirst()
		}
	}
	c.next++
	if c.next == c.n {
		c.last = time.Since(c.start)
	}
}

// done panics unless every input's result came.
func (c *orderedCheck[R]) done() {
	if c.next != c.n {
		panic(fmt.Sprintf("bench: ordered: %d results of %d", c.next, c.n))
	}
}

// An orderedTiming is one run of one contender: from its start to the
// first result consumed and to the last, and the allocations from its
// start to its end.
type orderedTiming struct {
	first, last time.Duration
	allocs      float64
}

// timeOrdered runs c on n inputs of f, checking that each result is its
// input, after a collection.
func timeOrdered(c orderedContender[int], n int, f func(context.Context, int) int) orderedTiming {
	check := &orderedCheck[int]{valid: func(i, r int) bool { return i == r }, n: n}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	check.start = time.Now()
	c.run(n, f, check.consume)
	runtime.ReadMemStats(&after)
	check.done()
	return orderedTiming{check.first, check.last, float64(after.Mallocs - before.Mallocs)}
}

// streamOwnAllocs counts the allocations per input of a crew Stream with
// window window over n no-op inputs whose tasks and callbacks are made
// before the count starts: crew's own.
func streamOwnAllocs(workers, window, n int) float64 {
	out := make([]int, n)
	check := &orderedCheck[int]{valid: func(i, r int) bool { return i == r }, n: n, start: time.Now()}
	tasks := make([]crew.StreamTask, n)
	for i := range tasks {
		callback := func() error {
			check.consume(out[i])
			return nil
		}
		tasks[i] = func(context.Context) (func() error, error) {
			out[i] = i
			return callback, nil
		}
	}
	ctx := context.Background()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	s := crew.NewStream(ctx, workers, crew.WithWindow(window))
	for _, task := range tasks {
		if err := s.Submit(ctx, task); err != nil {
			panic(err)
		}
	}
	if err := s.Wait(); err != nil {
		panic(err)
	}
	runtime.ReadMemStats(&after)
	check.done()
	return float64(after.Mallocs-before.Mallocs) / float64(n)
}

// heapObjects reads the bytes of the heap's objects, live and not yet
// swept, through its own sample: one per goroutine that reads.
type heapObjects []metrics.Sample

func newHeapObjects() heapObjects {
	return heapObjects{{Name: "/memory/classes/heap/objects:bytes"}}
}

func (h heapObjects) read() float64 {
	metrics.Read(h)
	return float64(h[0].Value.Uint64())
}

// heapOrdered runs c on n inputs, the first sleeping stall, each
// allocating a result of orderedPayload bytes that holds its index, and
// returns the heap's peak over its level after a collection before the
// run: while the first input ran, and over the whole run. A sampler
// goroutine, which heapOrdered starts and stops before it returns, reads
// the heap every orderedHeapEvery; the consumer reads it too as the first
// result comes, when the results behind the first input are all held.
func heapOrdered(c orderedContender[[]byte], n int, stall time.Duration) (held, peaked float64) {
	f := func(_ context.Context, i int) []byte {
		if i == 0 {
			time.Sleep(stall)
		}
		b := make([]byte, orderedPayload)
		binary.LittleEndian.PutUint64(b, uint64(i))
		return b
	}
	valid := func(i int, b []byte) bool {
		return len(b) == orderedPayload && binary.LittleEndian.Uint64(b) == uint64(i)
	}
	var released atomic.Bool // the first result has come
	atFirst, consumer := 0.0, newHeapObjects()
	check := &orderedCheck[[]byte]{valid: valid, n: n, onFirst: func() {
		atFirst = consumer.read()
		released.Store(true)
	}}
	runtime.GC()
	base := newHeapObjects().read()
	stop, sampled := make(chan struct{}), make(chan [2]float64)
	go func() {
		h := newHeapObjects()
		tick := time.NewTicker(orderedHeapEvery)
		defer tick.Stop()
		var most [2]float64 // while the first input ran, and in all
		for {
			select {
			case <-stop:
				sampled <- most
				return
			case <-tick.C:
				v := h.read()
				if !released.Load() {
					most[0] = max(most[0], v)
				}
				most[1] = max(most[1], v)
			}
		}
	}()
	check.start = time.Now()
	c.run(n, f, check.consume)
	close(stop)
	most := <-sampled
	check.done()
	held = max(most[0], atFirst) - base
	return held, max(most[1], held+base) - base
}
