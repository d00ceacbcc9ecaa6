package main

import (
	"fmt"
	"math/rand/v2"
	"runtime"
)

// The crowd table, the tenants scenario's earlier form: the batches
// scenario's small requests from crowdClients clients without think time,
// beside one noisy client sending requests of tenantsNoisyJobs such jobs
// one after another. The pool is full all the time, so first come, first
// served does not hurt the small requests here; no target reads it.
const (
	crowdClients = batchClients - 1 // and the noisy client: 64 in all
	// crowdNoisyDraws is how many noisy requests each run draws; the
	// noisy client sends them in turn, for as long as the small clients
	// run.
	crowdNoisyDraws = 4
)

// crowd runs the crowd table: requests small requests per run through
// each contender with workers workers, first alone, then beside the noisy
// client, runs times, each run with its own seeded requests, the same for
// every contender within the run, the contenders one after another within
// each setting of each run, and reports the median of each figure over
// the runs. The jobs spin perMicro rounds per µs of their drawn time. Each
// small request is a share of its own in a fair pool.
func crowd(workers, requests, runs int, perMicro float64, progress func(string)) []tenantsResult {
	cs := crowdContenders()
	// samples[setting][contender]; setting 0 is alone, 1 with the noisy
	// client.
	samples := [2][]tenantsSamples{make([]tenantsSamples, len(cs)), make([]tenantsSamples, len(cs))}
	var names []string
	for _, heavy := range []bool{false, true} {
		for _, c := range cs {
			names = append(names, fmt.Sprintf("crowd, %s: %s", settingName(heavy), c.name))
		}
	}
	got := interleave(runs, names, progress, func(run int) func(i int) tenantsRun {
		small, noisy := batchWork(requests, perMicro, run), noisyWork(perMicro, run)
		return func(i int) tenantsRun {
			var heavy [][]int
			if i >= len(cs) {
				heavy = noisy
			}
			runtime.GC()
			return runCrowd(cs[i%len(cs)].start(workers), small, heavy)
		}
	})
	for i, rs := range got {
		for _, x := range rs {
			samples[i/len(cs)][i%len(cs)].add(x)
		}
	}
	out := make([]tenantsResult, len(cs))
	for i, c := range cs {
		out[i] = tenantsResult{name: c.name, alone: samples[0][i].figures(), noisy: samples[1][i].figures()}
	}
	return out
}

// noisyWork draws the crowd table's noisy requests of one run, with the
// run's seed: crowdNoisyDraws requests of tenantsNoisyJobs jobs each,
// drawn as batchWork draws a small request's jobs.
func noisyWork(perMicro float64, run int) [][]int {
	r := rand.New(rand.NewPCG(4000+uint64(run), 0x6e6f697379))
	work := make([][]int, crowdNoisyDraws)
	for i := range work {
		work[i] = make([]int, tenantsNoisyJobs)
		for j := range work[i] {
			work[i][j] = batchJob(r, perMicro)
		}
	}
	return work
}

// runCrowd runs the small requests through b from crowdClients goroutines
// as runRequests does, and, unless noisy is nil, the noisy client beside
// them (startNoisy), spinning the rounds of its jobs, until the small
// clients are done; then it stops the noisy client and closes b. The noisy
// jobs counted are those that ended while the small clients ran.
func runCrowd(b batcher, small, noisy [][]int) tenantsRun {
	var x tenantsRun
	for _, w := range small {
		x.smallJobs += int64(len(w))
	}
	stop := startNoisy(b, noisy, spin)
	x.lat, x.elapsed = runRequests(b, small, crowdClients)
	x.noisy = stop()
	b.close()
	return x
}
