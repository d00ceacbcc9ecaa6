package main

import (
	"errors"
	"flag"
	"fmt"
	"time"
)

// tenantsScenario runs small clients beside a noisy one on one pool, first
// come, first served against WithFairShare, then checks WithWeight's
// shares and what fair sharing costs per job.
type tenantsScenario struct {
	tenantsWorkers, tenantsRuns int
	tenantsTime, weightsTime    time.Duration // how long the main tables' small clients, and the weights check, run per measurement
	crowdRequests, fairCostRuns int

	tenants         []tenantsResult // the main tables, by kind of job, then contender
	tenantsCrowd    []tenantsResult // 63 clients without think time
	tenantsSpinRate float64         // rounds of spin per microsecond
	tenantsSlept    time.Duration   // how long the sleeping jobs' time.Sleep took
	weights         *weightsResult
	fairCost        fairCost
}

func (*tenantsScenario) name() string  { return "tenants" }
func (*tenantsScenario) title() string { return "Tenants: fair shares on one pool" }

func (t *tenantsScenario) flags(fs *flag.FlagSet) {
	fs.IntVar(&t.tenantsRuns, "tenant-runs", 0, "seeded runs of the tenants scenario's tables, each running every contender in every setting; the median of each figure is reported (default 1 with -quick, 3, 5 with -full)")
	fs.DurationVar(&t.tenantsTime, "tenant-time", 0, "how long the small clients run per contender, table, setting and run in the tenants scenario's main tables (a table per kind of job, shape and load) (default 200ms with -quick, 300ms, 1s with -full)")
	fs.IntVar(&t.crowdRequests, "tenant-requests", 0, "small requests per contender, setting and run in the tenants scenario's table of 63 clients without think time (default 1000, 4000 with -full)")
	fs.DurationVar(&t.weightsTime, "weights-time", 0, "how long the tenants scenario's weights check measures (default 500ms, 2s with -full)")
}

func (t *tenantsScenario) configure(s settings) error {
	if t.tenantsRuns < 0 || t.tenantsTime < 0 || t.crowdRequests < 0 || t.weightsTime < 0 {
		return errors.New("-tenant-runs, -tenant-time, -tenant-requests and -weights-time must be more than 0 when given")
	}
	t.tenantsWorkers = s.workers
	if t.tenantsRuns <= 0 {
		t.tenantsRuns = pick(s.mode, 1, 3, 5)
	}
	if t.tenantsTime <= 0 {
		t.tenantsTime = pick(s.mode, 200*time.Millisecond, 300*time.Millisecond, time.Second)
	}
	if t.crowdRequests <= 0 {
		t.crowdRequests = pick(s.mode, 1000, 1000, 4000)
	}
	if t.weightsTime <= 0 {
		t.weightsTime = pick(s.mode, 500*time.Millisecond, 500*time.Millisecond, 2*time.Second)
	}
	t.fairCostRuns = s.runsFor(1, 3, 5)
	return nil
}

func (t *tenantsScenario) run(progress func(string)) {
	t.tenants, t.tenantsSpinRate, t.tenantsSlept = tenants(t.tenantsWorkers, t.tenantsRuns, t.tenantsTime, progress)
	t.tenantsCrowd = crowd(t.tenantsWorkers, t.crowdRequests, t.tenantsRuns, t.tenantsSpinRate, progress)
	progress(fmt.Sprintf("weights %d and %d for %v", weightsLight, weightsHeavy, t.weightsTime))
	jobSpin := int(t.tenantsSpinRate * float64(weightsJob) / float64(time.Microsecond))
	w := weightsCheck(t.tenantsWorkers, []int{weightsLight, weightsHeavy}, t.weightsTime, jobSpin)
	t.weights = &w
	progress("cost per job, first come first served and WithFairShare")
	t.fairCost = measureFairCost(t.tenantsWorkers, t.fairCostRuns)
}

func (r *tenantsScenario) charts() []chart {
	return chartIf(len(r.tenants) > 0, r.chartTitle(), "tenants-p99.png", r.chart)
}

// advice returns the tenants' figures for the README's advice: fair
// sharing beside a noisy client, and the default bound without it.
func (r *tenantsScenario) advice() []adviceCheck {
	var out []adviceCheck
	pools := r.tenantsPools()
	for i, pool := range pools {
		for _, t := range tenantsTables() {
			if t.loaded || t.job.spins && i == 0 {
				continue // CPU-bound jobs on the default bound: every job waits for a CPU too (see the README)
			}
			f, fcfs := r.tenantsOf(t, pool.fair), r.tenantsOf(t, pool.fcfs)
			out = append(out, adviceCheck{"fair share", fmt.Sprintf("%s, %s: fair vs first come, first served, p99", t.name(), pool.what),
				inMsAll(f.noisy.p99s), inMsAll(fcfs.noisy.p99s), "ms"})
		}
	}
	if len(pools) == 2 {
		small, roomy := pools[0], pools[1]
		for _, t := range tenantsTables() {
			if t.loaded {
				continue
			}
			out = append(out, adviceCheck{"default bound", fmt.Sprintf("%s: first come, first served's p99 with the noisy client, %s vs %s", t.name(), small.what, roomy.what),
				inMsAll(r.tenantsOf(t, small.fcfs).noisy.p99s), inMsAll(r.tenantsOf(t, roomy.fcfs).noisy.p99s), "ms"})
		}
	}
	return out
}
