package main

import (
	"bytes"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestEveryContenderRunsEveryJobOnceBeforeWaitReturns(t *testing.T) {
	const submitters, each = 4, 500
	for _, c := range contenders() {
		t.Run(c.name, func(t *testing.T) {
			var ran [submitters * each]atomic.Int32
			r := c.start(4)
			var wg sync.WaitGroup
			for s := range submitters {
				wg.Go(func() {
					for i := range each {
						r.submit(func() { ran[s*each+i].Add(1) })
					}
				})
			}
			wg.Wait()
			r.wait()
			for j := range ran {
				if n := ran[j].Load(); n != 1 {
					t.Fatalf("job %d ran %d times by the time wait returned, want once", j, n)
				}
			}
		})
	}
}

func TestContenderNamesAreUniqueAndEachHasItsOwnLook(t *testing.T) {
	colors, markers := map[color.Color]string{}, map[marker]string{}
	for _, c := range contenders() {
		l, ok := looks[c.name]
		if !ok {
			t.Fatalf("%s has no look of its own", c.name)
		}
		if other, dup := colors[l.color]; dup {
			t.Errorf("%s and %s share a colour", c.name, other)
		}
		if other, dup := markers[l.marker]; dup {
			t.Errorf("%s and %s share a marker", c.name, other)
		}
		colors[l.color], markers[l.marker] = c.name, c.name
	}
	if len(looks) != len(contenders()) {
		t.Errorf("%d looks for %d contenders", len(looks), len(contenders()))
	}
}

func TestShardedPoolSendsJobIToShardIModN(t *testing.T) {
	p := startShardedPool(3)
	// Job 1 holds up its worker; job 4 goes to the same shard, so it waits
	// behind job 1 while the other two workers run the rest and idle.
	gate := make(chan struct{})
	var ran [6]atomic.Bool
	for i := range 6 {
		p.submit(func() {
			if i == 1 {
				<-gate
			}
			ran[i].Store(true)
		})
	}
	deadline := time.Now().Add(10 * time.Second)
	for _, i := range []int{0, 2, 3, 5} {
		for !ran[i].Load() {
			if time.Now().After(deadline) {
				t.Fatalf("job %d did not run while job 1 held its worker", i)
			}
			time.Sleep(time.Millisecond)
		}
	}
	time.Sleep(20 * time.Millisecond)
	if ran[4].Load() {
		t.Fatal("job 4 ran while job 1, of the same shard, held its worker")
	}
	close(gate)
	p.wait()
	for i := range ran {
		if !ran[i].Load() {
			t.Fatalf("job %d did not run by the time wait returned", i)
		}
	}
}

func TestOutDir(t *testing.T) {
	const cwd = "/repo/bench" // where go -C bench runs the program
	for _, tc := range []struct{ flag, pwd, want string }{
		{"", "/repo", "/repo/bench/out"},                   // the default ignores PWD
		{"", "", "/repo/bench/out"},                        // and needs none
		{"bench/results", "/repo", "/repo/bench/results"},  // from the root: PWD, not bench/
		{"results", "/repo/bench", "/repo/bench/results"},  // from bench/ itself
		{"../x", "/repo/sub", "/repo/x"},                   // cleaned
		{"/tmp/run1", "/repo", "/tmp/run1"},                // absolute: as given (CI)
		{"/tmp/run1/", "", "/tmp/run1"},                    // absolute without PWD
		{"results", "", "/repo/bench/results"},             // no PWD: the working directory
		{"results", "relative/pwd", "/repo/bench/results"}, // a relative PWD is not trusted
	} {
		if got := outDir(tc.flag, tc.pwd, cwd); got != filepath.FromSlash(tc.want) {
			t.Errorf("outDir(%q, PWD=%q, cwd=%q) = %q, want %q", tc.flag, tc.pwd, cwd, got, tc.want)
		}
	}
}

func TestEveryBatchContenderRunsEveryJobOfARequestBeforeItReturns(t *testing.T) {
	const clients, requests = 8, 50
	for _, c := range batchContenders() {
		t.Run(c.name, func(t *testing.T) {
			b := c.start(4)
			var ran [clients * requests * batchMaxJobs]atomic.Int32
			var wg sync.WaitGroup
			for cl := range clients {
				wg.Go(func() {
					for r := range requests {
						// Job n of the request marks ran[n].
						first := (cl*requests + r) * batchMaxJobs
						work := make([]int, 1+r%batchMaxJobs)
						for j := range work {
							work[j] = first + j
						}
						b.request("", work, func(n int) { ran[n].Add(1) })
						for _, n := range work {
							if got := ran[n].Load(); got != 1 {
								t.Errorf("job %d ran %d times by the time its request returned, want once", n, got)
								return
							}
						}
					}
				})
			}
			wg.Wait()
			b.close()
		})
	}
}

func TestBatchWorkIsSeededPerRunAndWithinItsBounds(t *testing.T) {
	const perMicro = 100
	a, b, other := batchWork(500, perMicro, 1), batchWork(500, perMicro, 1), batchWork(500, perMicro, 2)
	if !slices.EqualFunc(a, b, slices.Equal) {
		t.Fatal("the same run gave different requests")
	}
	if slices.EqualFunc(a, other, slices.Equal) {
		t.Fatal("two runs gave the same requests")
	}
	sizes := map[int]bool{}
	for _, w := range a {
		if len(w) < 1 || len(w) > batchMaxJobs {
			t.Fatalf("a request of %d jobs, want 1 to %d", len(w), batchMaxJobs)
		}
		sizes[len(w)] = true
		for _, n := range w {
			if lo, hi := int(perMicro*batchMinSpin.Microseconds()), int(perMicro*batchMaxSpin.Microseconds()); n < lo || n > hi {
				t.Fatalf("a job of %d rounds, want %d to %d", n, lo, hi)
			}
		}
	}
	if len(sizes) != batchMaxJobs {
		t.Fatalf("500 requests drew %d sizes of %d", len(sizes), batchMaxJobs)
	}
	if r := spinsPerMicrosecond(); r <= 0 || math.IsInf(r, 0) {
		t.Fatalf("spin rate %v", r)
	}
}

func TestStreamSeedsDifferByRun(t *testing.T) {
	seen := map[uint64]bool{}
	for run := range 5 {
		j, a := streamSeeds(run)
		if seen[j] || seen[a] {
			t.Fatalf("run %d reuses a seed", run)
		}
		seen[j], seen[a] = true, true
	}
}

func TestJobMixIsSeededAndNearFivePercentLong(t *testing.T) {
	a, b := jobTimes(20000, 7), jobTimes(20000, 7)
	long := 0
	for i := range a {
		if a[i] != b[i] {
			t.Fatal("the same seed gave different job times")
		}
		switch a[i] {
		case longJob:
			long++
		case shortJob:
		default:
			t.Fatalf("job time %v is neither %v nor %v", a[i], shortJob, longJob)
		}
	}
	if f := float64(long) / float64(len(a)); math.Abs(f-longRate) > 0.01 {
		t.Fatalf("%.3f of jobs are long, want %.2f", f, longRate)
	}
	if meanJob != 6900*time.Microsecond {
		t.Fatalf("mean job %v, want 6.9ms", meanJob)
	}
}

func TestMedianAndQuantile(t *testing.T) {
	if m := median([]float64{5, 1, 3}); m != 3 {
		t.Fatalf("median of 5,1,3 = %v", m)
	}
	if m := median([]float64{4, 1, 3, 2}); m != 2.5 {
		t.Fatalf("median of 4,1,3,2 = %v", m)
	}
	sorted := make([]float64, 1000)
	for i := range sorted {
		sorted[i] = float64(i + 1)
	}
	for _, tc := range []struct{ q, want float64 }{{0.5, 500}, {0.99, 990}, {0.999, 999}, {1, 1000}} {
		if got := quantile(sorted, tc.q); got != tc.want {
			t.Fatalf("quantile(%v) = %v, want %v", tc.q, got, tc.want)
		}
	}
	if !math.IsNaN(median(nil)) || !math.IsNaN(quantile(nil, 0.5)) {
		t.Fatal("no data must give NaN")
	}
}

// sampleReport is a report with every section but the ordered one filled
// with plausible figures, as a full run leaves it.
func sampleReport() *report {
	ov := &overheadScenario{overheadJobs: 1000, overheadWorkers: 8, runs: 5}
	ns := []float64{109, 103, 100, 60, 115, 50, 53, 48, 70, 367, 209, 426, 569}
	for k, subs := range []int{1, 8} {
		for i, c := range contenders() {
			allocs := 0.0
			if c.name == errgroupName {
				allocs = 2
			}
			ov.overhead = append(ov.overhead, overheadResult{c.name, subs, ns[i] * (1 + 0.3*float64(k)), allocs})
		}
	}
	bu := &burstScenario{burstJobs: 2000, burstWorkers: 16, runs: 5, burstBound: 863 * time.Millisecond}
	for i, c := range queueing() {
		span := time.Duration(float64(940*time.Millisecond) * (1 + 0.002*float64(i)))
		bu.burst = append(bu.burst, burstResult{c.name, span, float64(span) / float64(bu.burstBound)})
	}
	st := &streamScenario{streamJobs: 4000, streamWorkers: 8, streamRuns: 3}
	for _, load := range []float64{0.5, 0.8, 0.9} {
		for i, c := range queueing() {
			p99 := time.Duration(float64(100*time.Millisecond) * (1 + (load-0.5)*(1+0.1*float64(i))))
			if c.name == shardsName {
				p99 *= 3
			}
			st.stream = append(st.stream, streamResult{c.name, load, 3 * time.Millisecond, p99, p99 * 5 / 4, p99 * 9 / 10, p99 * 11 / 10})
		}
	}
	ke := &keyedScenario{keyedJobs: 4000, keyedWorkers: 8, keyedRuns: 3}
	ke.keyed = []keyedResult{
		{"crew WithKey", 9 * time.Millisecond, 490 * time.Millisecond, 4600 * time.Millisecond, 0, 1.1, runsAround(9e6), runsAround(490e6)},
		{"crew WithConsistentHash", 255 * time.Millisecond, 2237 * time.Millisecond, 6500 * time.Millisecond, 0, 3.2, runsAround(255e6), runsAround(2237e6)},
		{"crew SmallestMailbox (ignores order)", 9 * time.Millisecond, 197 * time.Millisecond, 4550 * time.Millisecond, 655, 1.02, runsAround(9e6), runsAround(197e6)},
	}
	mb := &mailboxesScenario{mailboxMsgs: 1000, runs: 5}
	ac := &actorsScenario{actorMsgs: 1000, runs: 5}
	for _, loaded := range []bool{false, true} {
		for _, p := range fanIn {
			for i, name := range []string{"buffered chan (1024)", "Unbounded", "Segmented", "Bounded(1024, Backpressure)", "Fair (16 keys)", "Priority", "StablePriority", "Chan(1024)"} {
				x := 30 * []float64{1, 0.31, 0.35, 0.53, 1.7, 6.9, 8.2, 1.56}[i] * float64(p)
				mb.mailboxes = append(mb.mailboxes, mailboxResult{name, p, loaded, x, 0, runsAround(x)})
			}
			for i, name := range []string{chanActorName, bareLoopName, crewActorName, crewSegmentedName, crewBoundedActName, protoActorName} {
				x := 80 * []float64{1, 0.8, 0.45, 0.5, 0.8, 2.5}[i] / float64(p)
				ac.actors = append(ac.actors, actorResult{name, p, loaded, x, []float64{0, 0, 0.001, 0, 0, 1.7}[i], runsAround(x)})
			}
		}
	}
	me := &memoryScenario{memory: &memoryResult{actors: 10000, heapPerActor: 1010, heapPerGoroutine: 599, stackPerActor: 2032, messages: 1000,
		perMessage: map[string]float64{"Unbounded": 8.4, "Segmented": 9}, retainedAfterAll: map[string]float64{"Unbounded": 432, "Segmented": 144}}}
	ba := &batchesScenario{batchRequests: 4000, batchWorkers: 8, batchRuns: 3, batchSpinRate: 250, runs: 5}
	for i, c := range batchContenders() {
		p99 := time.Duration(1+i) * 2 * time.Millisecond
		ba.batches = append(ba.batches, batchResult{c.name, 10000 / float64(1+i), 85000 / float64(1+i), p99 / 3, p99, p99 * 9 / 10, p99 * 11 / 10, runsAround(float64(p99))})
	}
	ba.emptyBatch = emptyBatchCost{ns: 280, errgroupNs: 200, allocs: 3, errgroupAllocs: 2}
	for _, procs := range scalingProcs { // a batch 0.5x errgroup's time, with metrics 0.8x
		ba.serverPath = append(ba.serverPath, serverPathResult{procs: procs, ns: [4]float64{300, 150, 240, 330}, allocs: [4]float64{0, 3, 3, 3}})
	}
	// crew at 1.15x the hand-written pool at every setting, errgroup 500 ns.
	sc := &scalingScenario{scaling: scalingSample(115, 500, 0), scalingJobs: 1000, scalingRuns: 5}
	return &report{machine: "test", mode: full, took: time.Minute,
		scenarios: []scenario{ov, bu, st, ke, mb, ac, me, ba, sc, tenantsSample()}}
}

// without returns r without the scenarios named.
func without(r *report, names ...string) *report {
	out := *r
	out.scenarios = slices.DeleteFunc(slices.Clone(r.scenarios), func(s scenario) bool { return slices.Contains(names, s.name()) })
	return &out
}

func TestTargetsAreCrewsListInOrder(t *testing.T) {
	var got []string
	for _, x := range sampleReport().targets() {
		got = append(got, x.what)
	}
	// By scenario, in the order they run, each in its own order.
	want := []string{
		"overhead, 1 submitter: <= 1.3x the floor (single-lock pool)",
		"overhead, 8 submitters: <= 1.3x the floor (single-lock pool)",
		"overhead, 1 submitter: <= 1.2x the hand-written pool (shared chan, capacity = workers)",
		"overhead, 8 submitters: <= 1.2x the hand-written pool (shared chan)",
		"overhead, 1 submitter: <= 1.2x the hand-written pool over a channel of 1024",
		"overhead, 1 submitter, the same bound: crew with room for 1024 jobs <= 1.2x the hand-written pool over a channel of 1024",
		"overhead, 1 submitter: >= 4x faster than errgroup",
		"overhead, 8 submitters: >= 4x faster than errgroup",
		"overhead, 1 submitter: 0 allocs/job",
		"overhead, 8 submitters: 0 allocs/job",
		"overhead, 1 submitter: a batch's Submit <= 1.1x the pool's, 0 allocs/job",
		"overhead, 8 submitters: a batch's Submit <= 1.1x the pool's, 0 allocs/job",
		"burst makespan: <= 1.02x the shared queue's (hand-written shared chan)",
		"streaming 80% load: p99 <= 1.03x the shared queue's (hand-written shared chan)",
		"streaming 90% load: p99 <= 1.03x the shared queue's (hand-written shared chan)",
		"streaming 80% load: p99 <= 0.6x the round-robin sharded pool's",
		"streaming 90% load: p99 <= 0.6x the round-robin sharded pool's",
		"keyed placement (WithKey): p50 <= 0.1x consistent hashing's",
		"keyed placement (WithKey): p99 <= 0.25x consistent hashing's",
		"keyed placement (WithKey): 0 order breaches",
		"mailboxes, 1P1C: Unbounded <= 0.6x buffered chan (1024)",
		"mailboxes, 1P1C: Segmented <= 0.6x buffered chan (1024)",
		"mailboxes, 1P1C: Bounded(1024, Backpressure) <= 1.2x Unbounded",
		"mailboxes, 1P1C: Bounded(1024, Backpressure) <= 1x buffered chan (1024)",
		"mailboxes, 4P1C: Segmented <= 0.6x buffered chan (1024)",
		"mailboxes, 4P1C: Segmented is the fastest crew FIFO mailbox",
		"mailboxes, 4P1C: Bounded(1024, Backpressure) <= 1x buffered chan (1024)",
		"mailboxes, 8P1C: Segmented <= 0.6x buffered chan (1024)",
		"mailboxes, 8P1C: Segmented is the fastest crew FIFO mailbox",
		"mailboxes, 8P1C: Bounded(1024, Backpressure) <= 1x buffered chan (1024)",
		"mailboxes, 1P1C, with load: Unbounded <= 1.2x buffered chan (1024)",
		"mailboxes, 1P1C, with load: Segmented <= 1.2x buffered chan (1024)",
		"mailboxes, 1P1C, with load: Bounded(1024, Backpressure) <= 1.2x buffered chan (1024)",
		"mailboxes, 1P1C, with load: Chan(1024) <= 1.2x buffered chan (1024)",
		"mailboxes, 4P1C, with load: Unbounded <= 1.2x buffered chan (1024)",
		"mailboxes, 4P1C, with load: Segmented <= 1.2x buffered chan (1024)",
		"mailboxes, 4P1C, with load: Bounded(1024, Backpressure) <= 1.2x buffered chan (1024)",
		"mailboxes, 4P1C, with load: Chan(1024) <= 1.2x buffered chan (1024)",
		"mailboxes, 8P1C, with load: Unbounded <= 1.2x buffered chan (1024)",
		"mailboxes, 8P1C, with load: Segmented <= 1.2x buffered chan (1024)",
		"mailboxes, 8P1C, with load: Bounded(1024, Backpressure) <= 1.2x buffered chan (1024)",
		"mailboxes, 8P1C, with load: Chan(1024) <= 1.2x buffered chan (1024)",
		"actor Tell -> handle, 1 producer(s): <= 0.6x a goroutine fed by a buffered channel, 0 allocs",
		"actor with Bounded(1024, Backpressure), 1 producer(s): <= 1.2x with Unbounded",
		"actor Tell -> handle, 4 producer(s): <= 0.7x a goroutine fed by a buffered channel, 0 allocs",
		"actor Tell -> handle, 4 producers, Segmented: <= 0.7x a goroutine fed by a buffered channel, 0 allocs",
		"actor with Bounded(1024, Backpressure), 4 producer(s): <= 1.2x with Unbounded",
		"actor Tell -> handle, 8 producer(s): <= 0.7x a goroutine fed by a buffered channel, 0 allocs",
		"actor Tell -> handle, 8 producers, Segmented: <= 0.7x a goroutine fed by a buffered channel, 0 allocs",
		"memory: an idle actor costs one goroutine plus < 1 KiB",
		"memory: Unbounded drained holds <= 64 slots (512 bytes of ints)",
		"memory: Segmented drained holds <= 64 slots (512 bytes of ints)",
		"an empty batch (NewBatch + Wait): <= 1.5x errgroup.WithContext + Wait, <= 4 allocs",
		"server path, GOMAXPROCS 2: a batch per request <= 0.5x errgroup per request",
		"server path, GOMAXPROCS 2: the same, WithMetrics <= 0.55x errgroup per request",
		"server path, GOMAXPROCS 8: a batch per request <= 0.5x errgroup per request",
		"server path, GOMAXPROCS 8: the same, WithMetrics <= 0.55x errgroup per request",
		"server path, GOMAXPROCS 16: a batch per request <= 0.5x errgroup per request",
		"server path, GOMAXPROCS 16: the same, WithMetrics <= 0.55x errgroup per request",
		"scaling, GOMAXPROCS 2, 8 workers, 1 submitter: <= 1.3x the floor (single-lock pool)",
		"scaling, GOMAXPROCS 8, 8 workers, 1 submitter: <= 1.3x the floor (single-lock pool)",
		"scaling, GOMAXPROCS 16, 8 workers, 1 submitter: <= 1.3x the floor (single-lock pool)",
		"scaling, GOMAXPROCS 2, 8 workers, 8 submitters: <= 1.3x the floor (single-lock pool)",
		"scaling, GOMAXPROCS 8, 8 workers, 8 submitters: <= 1.3x the floor (single-lock pool)",
		"scaling, GOMAXPROCS 16, 8 workers, 8 submitters: <= 1.3x the floor (single-lock pool)",
		"scaling, GOMAXPROCS 2, 64 workers, 1 submitter: <= 1.3x the floor (single-lock pool)",
		"scaling, GOMAXPROCS 8, 64 workers, 1 submitter: <= 1.3x the floor (single-lock pool)",
		"scaling, GOMAXPROCS 16, 64 workers, 1 submitter: <= 1.3x the floor (single-lock pool)",
		"scaling, GOMAXPROCS 2, 64 workers, 8 submitters: <= 1.3x the floor (single-lock pool)",
		"scaling, GOMAXPROCS 8, 64 workers, 8 submitters: <= 1.3x the floor (single-lock pool)",
		"scaling, GOMAXPROCS 16, 64 workers, 8 submitters: <= 1.3x the floor (single-lock pool)",
		"scaling, GOMAXPROCS 2, 1024 workers, 1 submitter: <= 1.3x the floor (single-lock pool)",
		"scaling, GOMAXPROCS 8, 1024 workers, 1 submitter: <= 1.3x the floor (single-lock pool)",
		"scaling, GOMAXPROCS 16, 1024 workers, 1 submitter: <= 1.3x the floor (single-lock pool)",
		"scaling, GOMAXPROCS 2, 1024 workers, 8 submitters: <= 1.3x the floor (single-lock pool)",
		"scaling, GOMAXPROCS 8, 1024 workers, 8 submitters: <= 1.3x the floor (single-lock pool)",
		"scaling, GOMAXPROCS 16, 1024 workers, 8 submitters: <= 1.3x the floor (single-lock pool)",
		"scaling, GOMAXPROCS 2, 8 workers, 1 submitter: <= 1.2x the hand-written pool (shared chan, capacity = workers)",
		"scaling, GOMAXPROCS 8, 8 workers, 1 submitter: <= 1.2x the hand-written pool (shared chan, capacity = workers)",
		"scaling, GOMAXPROCS 16, 8 workers, 1 submitter: <= 1.2x the hand-written pool (shared chan, capacity = workers)",
		"scaling, GOMAXPROCS 2, 8 workers, 1 submitter: >= 4x faster than errgroup",
		"scaling, every setting: faster than conc",
		"scaling, every setting: 0 allocs/job",
	}
	want = append(want, tenantsTargetNames...)
	if !slices.Equal(got, want) {
		t.Fatalf("targets:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// A run of some scenarios only checks the targets it has figures for.
	r := without(sampleReport(), "overhead", "memory", "scaling")
	for _, x := range r.targets() {
		if strings.HasPrefix(x.what, "overhead") || strings.HasPrefix(x.what, "memory") || strings.HasPrefix(x.what, "scaling") {
			t.Fatalf("target %q without its figures", x.what)
		}
	}
}

func TestTargetsCompareTheRightFigures(t *testing.T) {
	r := sampleReport()
	met := map[string]target{}
	for _, x := range r.targets() {
		met[x.what] = x
	}
	// The sample's crew is 2.06x the shared chan, its shards 3x the others'
	// p99, its consistent hashing far behind.
	for what, want := range map[string]bool{
		"overhead, 1 submitter: <= 1.2x the hand-written pool (shared chan, capacity = workers)":       false,
		"overhead, 1 submitter: 0 allocs/job":                                                          true,
		"an empty batch (NewBatch + Wait): <= 1.5x errgroup.WithContext + Wait, <= 4 allocs":           true,
		"server path, GOMAXPROCS 8: a batch per request <= 0.5x errgroup per request":                  true,
		"server path, GOMAXPROCS 8: the same, WithMetrics <= 0.55x errgroup per request":               false,
		"streaming 80% load: p99 <= 0.6x the round-robin sharded pool's":                               true,
		"keyed placement (WithKey): 0 order breaches":                                                  true,
		"mailboxes, 1P1C: Unbounded <= 0.6x buffered chan (1024)":                                      true,
		"mailboxes, 1P1C: Bounded(1024, Backpressure) <= 1.2x Unbounded":                               false,
		"actor Tell -> handle, 4 producer(s): <= 0.7x a goroutine fed by a buffered channel, 0 allocs": true,
		"actor with Bounded(1024, Backpressure), 1 producer(s): <= 1.2x with Unbounded":                false,
	} {
		if met[what].met != want {
			t.Errorf("%s: met %v, want %v (%s)", what, met[what].met, want, met[what].measured)
		}
	}
	if m := met["overhead, 1 submitter: <= 1.2x the hand-written pool (shared chan, capacity = workers)"].measured; !strings.HasPrefix(m, "2.06x (crew 109 vs hand-written (shared chan) 53 ns/job)") {
		t.Errorf("measured %q", m)
	}
	if m := met["actor with Bounded(1024, Backpressure), 1 producer(s): <= 1.2x with Unbounded"].measured; m != "1.78x (64.0 vs 36.0 ns/msg)" {
		t.Errorf("measured %q", m)
	}
}

func TestReportAndChartsFromAFullReport(t *testing.T) {
	r := sampleReport()
	md := r.markdown()
	for _, want := range []string{"## Targets\n\nThese are crew's performance targets, each checked against this run", "busiest worker / mean", "median over the runs",
		"## 8. Batches on one shared pool", "| " + batchErrgroupName + " | 2500 | 21250 | 2.67 ms | 8.00 ms | 7.20 ms to 8.80 ms |",
		"## 6. Actors", "| " + protoActorName + " | 4 | none | 50.0 | 1.700 | 2.50x |",
		"## 9. Scaling: GOMAXPROCS, workers and submitters", "### GOMAXPROCS 8, 64 workers, 8 submitters",
		"## 10. Tenants: fair shares on one pool"} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if strings.Contains(md, "DESIGN.md") {
		t.Error("report cites DESIGN.md")
	}
	dir := t.TempDir()
	charts, err := r.charts(dir)
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, ch := range charts {
		files = append(files, ch.file)
		b, err := os.ReadFile(filepath.Join(dir, ch.file))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(b, []byte("\x89PNG")) {
			t.Errorf("%s is not a PNG", ch.file)
		}
	}
	want := []string{"overhead.png", "burst-makespan.png", "stream-p99.png", "keyed.png", "mailboxes.png", "scaling.png", "tenants-p99.png"}
	if !slices.Equal(files, want) {
		t.Errorf("charts %v, want %v", files, want)
	}
	// A run of some scenarios draws the charts it has figures for.
	charts, err = without(r, "overhead", "mailboxes", "keyed", "scaling", "tenants").charts(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if len(charts) != 2 || charts[0].file != "burst-makespan.png" || charts[1].file != "stream-p99.png" {
		t.Errorf("charts of a burst and stream run: %v", charts)
	}
}

func TestTicks(t *testing.T) {
	var got []string
	for _, tk := range oneTwoFive.Ticks(0.4, 30) {
		got = append(got, tk.Label)
	}
	if want := []string{"0.5", "1", "2", "5", "10", "20"}; !slices.Equal(got, want) {
		t.Errorf("log ticks over 0.4..30: %v, want %v", got, want)
	}
	got = nil
	for _, tk := range (linearTicks{}).Ticks(0.99, 1.12) {
		got = append(got, tk.Label)
	}
	if want := []string{"1.00", "1.02", "1.04", "1.06", "1.08", "1.10"}; !slices.Equal(got, want) {
		t.Errorf("linear ticks over 0.99..1.12: %v, want %v", got, want)
	}
}
