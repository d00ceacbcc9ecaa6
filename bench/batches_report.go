package main

import (
	"fmt"

	"github.com/crewlib/crew"
)

// batchesScenario runs many concurrent request-batches on one shared pool
// against an errgroup per request and pond's groups, then times a batch's
// fixed cost and the server path.
type batchesScenario struct {
	none
	batchRequests, batchWorkers, batchRuns int
	runs, serverRuns                       int
	batches                                []batchResult
	batchSpinRate                          float64 // rounds of spin per microsecond
	emptyBatch                             emptyBatchCost
	serverPath                             []serverPathResult // by GOMAXPROCS
}

func (*batchesScenario) name() string  { return "batches" }
func (*batchesScenario) title() string { return "Batches on one shared pool" }

func (b *batchesScenario) configure(s settings) error {
	b.batchWorkers, b.batchRuns = s.workers, s.seededRunsFor(1, 3, 3)
	b.batchRequests = pick(s.mode, 1000, 2000, 10_000)
	b.runs = s.runsFor(1, 3, 5)
	b.serverRuns = min(b.runs, 3)
	return nil
}

func (b *batchesScenario) run(progress func(string)) {
	b.batches, b.batchSpinRate = batches(b.batchWorkers, b.batchRequests, b.batchRuns, progress)
	progress("a batch's fixed cost")
	b.emptyBatch = measureEmptyBatch(b.batchWorkers, b.runs)
	b.serverPath = measureServerPath(b.batchWorkers, b.serverRuns, func(what string) { progress("the server path, " + what) })
}

func (r *batchesScenario) markdown(p printer) {
	p("%d requests from %d goroutines, each taking the next request as soon as its last one returned; each request fans out 1 to %d jobs (uniform) and waits for them; each job spins a CPU loop for %v to %v (uniform; a fixed count of rounds, %.0f per µs as measured at the start, so that a preempted job costs no less). The jobs drawn are seeded, the same for every contender within a run. crew and pond run every request as a batch (a group) of one pool of %d workers, shared by all the requests; errgroup runs each request in a group of its own with SetLimit(%d), so it has no limit across requests: up to %d×%d = %d jobs run at once. crew's pool holds at most %d jobs (%d with WithQueueSize(%d)), so its Submits block while it is full, and blocked Submits take turns in arrival order: a request's jobs enter one turn at a time; pond's queue has no bound. Throughput from the first request to the last one's return, the pool's start and close left out; latency per request from its batch's (group's) creation to its Wait's return. %s, each with its own seeds, the contenders interleaved run by run; each figure is the median over the runs, and the last column shows how far p99 ranged over them.\n\n",
		r.batchRequests, batchClients, batchMaxJobs, batchMinSpin, batchMaxSpin, r.batchSpinRate, r.batchWorkers, batchLimit,
		batchClients, batchLimit, batchClients*batchLimit, r.batchWorkers*(1+crew.DefaultQueueSize),
		r.batchWorkers*(1+batchRoomyQueue), batchRoomyQueue, upperFirst(plural(r.batchRuns, "run")))
	p("| contender | requests/s | jobs/s | p50 per request | p99 per request | p99 over the runs |\n|---|---|---|---|---|---|\n")
	for _, x := range r.batches {
		p("| %s | %.0f | %.0f | %s | %s | %s to %s |\n", x.name, x.requestsPerS, x.jobsPerS, ms2(x.p50), ms2(x.p99), ms2(x.p99Min), ms2(x.p99Max))
	}
	p("\n")
	if e := r.emptyBatch; e.ns > 0 {
		p("A batch's fixed cost, NewBatch and Wait with no job on an idle pool (testing.Benchmark, the median of %s, interleaved with errgroup's): %.0f ns and %d allocations; errgroup.WithContext and Wait with no goroutine: %.0f ns and %d allocations.\n\n", plural(r.runs, "run"), e.ns, e.allocs, e.errgroupNs, e.errgroupAllocs)
	}
	r.serverPathTable(p)
}

func (r *batchesScenario) targets() []target {
	var ts []target
	if e := r.emptyBatch; e.ns > 0 {
		x := e.ns / e.errgroupNs
		ts = append(ts, target{"an empty batch (NewBatch + Wait): <= 1.5x errgroup.WithContext + Wait, <= 4 allocs",
			fmt.Sprintf("%.2fx (batch %.0f vs errgroup %.0f ns), %d allocs", x, e.ns, e.errgroupNs, e.allocs), x <= 1.5 && e.allocs <= 4})
	}
	return append(ts, r.serverPathTargets()...)
}

// advice returns the batches' figures for the README's advice on p99 per
// request: errgroup per request, with no limit across requests, against
// crew's batches on one bounded pool.
func (r *batchesScenario) advice() []adviceCheck {
	c := find(r.batches, func(x batchResult) bool { return x.name == batchCrewName })
	eg := find(r.batches, func(x batchResult) bool { return x.name == batchErrgroupName })
	return []adviceCheck{{"batches p99", "batches, p99 per request: errgroup per request vs crew NewBatch on one pool",
		inMsAll(eg.p99s), inMsAll(c.p99s), "ms"}}
}
