package main

import (
	"fmt"
	"math"
	"strings"
	"time"

	"gonum.org/v1/plot/vg"

	"github.com/crewlib/crew"
)

// The tenants scenario's targets, read on the main tables of a quiet
// machine, in both shapes: WithFairShare's small-request p99 with the
// noisy client within tenantsNoisyLimit of its own alone, with sleeping
// jobs, on both pools; with the noisy client, under tenantsRoomyVsFCFS of
// first come, first served's p99 on the pool whose backlog holds a noisy
// request and under tenantsBoundVsFCFS on the default bound, with
// sleeping jobs, and under tenantsSpinVsFCFS on the roomy pool with
// spinning jobs (on the default bound, 8 workers spinning on fewer CPUs
// wait for a CPU whatever the order: reported, not judged); all jobs per
// second WithFairShare at least tenantsWorkConserved of first come, first
// served's on the same pool (the noisy tenant's own throughput is
// reported, not judged: small requests first lower it by design). Each
// weight's share of the run time within weightsPoints of its due; a fair
// pool's cost per job within fairCostLimit of a first come, first served
// pool's.
const (
	tenantsNoisyLimit    = 1.25
	tenantsRoomyVsFCFS   = 0.5
	tenantsBoundVsFCFS   = 0.6
	tenantsSpinVsFCFS    = 0.5
	tenantsWorkConserved = 0.98
	weightsPoints        = 5
	fairCostLimit        = 1.15
)

// markdown writes the tenants scenario's section with p: the main
// tables, a table per kind of job, then the crowd table, the weights check
// and the cost per job, each if r has its figures.
func (r *tenantsScenario) markdown(p printer) {
	if len(r.tenants) > 0 {
		w := r.tenantsWorkers
		p("%d small clients, each sending a request, waiting for it, then thinking before the next (a closed loop); each request fans out %d to %d jobs (uniform) and waits for them. "+
			"In two shapes: clients spread out, each starting after a pause of up to %v and thinking %v after each request, so that their requests seldom meet; and clients starting together, all sending their first request at once and thinking %v after each, so that their requests collide with each other as well as with the noisy client's, all at first and less as they drift apart. "+
			"They run for %v alone, then for %v beside a noisy client that sends requests of %d jobs one after another, as tenant %q and without WithLimit, for as long as the small clients run. "+
			"Every job sleeps %v (time.Sleep, which took %v here, the median of 50 measured at the start), as a job that waits on a database or another service does, or spins a CPU loop for %v (a fixed count of rounds, %.0f per µs as measured at the start; with more workers than CPUs, a spinning job waits for a CPU too). "+
			"A table for each kind of job and shape, on a quiet machine, then again beside %s (one per CPU, started for those tables), as a server's neighbours load its machine; the targets read the quiet tables.\n\n",
			tenantsClients, tenantsMinJobs, tenantsMaxJobs, tenantsThink, tenantsThink, tenantsThink, r.tenantsTime, r.tenantsTime, tenantsNoisyJobs, tenantsNoisyTenant,
			tenantsJobs[0].d, r.tenantsSlept.Round(10*time.Microsecond), tenantsJobs[1].d, r.tenantsSpinRate, loadName(true))
		p("%s runs every request as a batch of one pool of %d workers, whose jobs start in the order they come; the pool holds %d jobs, so the noisy client's Submits block, and blocked Submits take turns in arrival order. "+
			"%s is the same on a pool whose backlog holds a whole noisy request (%d jobs in all), as a server that buffers bursts has: the noisy client queues each request at once, and a small request's jobs start after what is left of it. "+
			"%s and %s are these two pools WithFairShare with its default fair window (%v), each small client a tenant of its own (WithTenant(\"client 1\") and so on) and the noisy client tenant %q: a tenant holding fewer jobs than the pool has workers is let in beyond the bound, by up to a job per worker (%d and %d jobs held at most), its blocked Submits first, and a freed worker goes first to a tenant credited for the run time it left unused while it was quiet, then to the share that has had the least run time. "+
			"%s has no limit across requests: the noisy client's jobs run at most %d at once, beside up to %d×%d small ones; %s queues every request's jobs in one unbounded queue in front of %d workers.\n\n",
			tenantsFCFSName, w, w*(1+crew.DefaultQueueSize),
			tenantsRoomy(tenantsFCFSName, w), w*(1+tenantsBacklog(w)),
			tenantsFairName, tenantsRoomy(tenantsFairName, w), crew.DefaultFairWindow, tenantsNoisyTenant, w*(2+crew.DefaultQueueSize), w*(2+tenantsBacklog(w)),
			batchErrgroupName, batchLimit, tenantsClients, batchLimit, batchPondName, w)
		p("Latency per small request from its batch's (group's) creation to its Wait's return. Throughput counts the jobs that ended while the small clients ran, over that time: the noisy client's, then all the clients'; with the noisy client the pools have more work than workers, so a job one client gains is one another loses. The last column gives how many small requests a run measured, which its p99 rests on. %s, each with its own seeds for the sizes of the requests and the first pauses, the same for every contender within a run, the contenders one after another within each table and setting of each run; each figure is the median over the runs.\n\n",
			plural(r.tenantsRuns, "run"))
		for _, t := range tenantsTables() {
			p("### %s\n\n", upperFirst(t.name()))
			p("| contender | p50 alone | p99 alone | p50 with the noisy client | p99 with the noisy client | p99 with / alone | noisy client jobs/s | all jobs/s with the noisy client | small requests per run, alone / with |\n|---|---|---|---|---|---|---|---|---|\n")
			for _, x := range r.tenants {
				if x.table == t {
					p("| %s | %s | %s | %s | %s | %.2fx | %.0f | %.0f | %d / %d |\n", x.name, ms2(x.alone.p50), ms2(x.alone.p99), ms2(x.noisy.p50), ms2(x.noisy.p99),
						ratio(x.noisy.p99, x.alone.p99), x.noisy.noisyJobsPerS, x.noisy.jobsPerS, x.alone.requests, x.noisy.requests)
				}
			}
			p("\n")
		}
	}
	if len(r.tenantsCrowd) > 0 {
		p("### %d clients without think time\n\n", crowdClients)
		p("The scenario's earlier form, kept for comparison: %d small requests per run from %d clients, each taking the next request as soon as its last one returned; each request fans out 1 to %d jobs (uniform), each spinning a CPU loop for %v to %v (uniform), as in the batches scenario, and is a share of its own WithFairShare. They run on %d workers alone, then beside the noisy client, whose requests are %d such jobs. "+
			"The pool is full all the time, and the noisy client, with one Submit blocked at a time, gets about one turn in %d first come, first served, so that order does not hurt the small requests here; no target reads this table. Throughput over the time the small clients ran, counting the noisy client's jobs that ended in it; %s as above.\n\n",
			r.crowdRequests, crowdClients, batchMaxJobs, batchMinSpin, batchMaxSpin, r.tenantsWorkers, tenantsNoisyJobs, crowdClients+1, plural(r.tenantsRuns, "run"))
		p("| contender | p50 alone | p99 alone | p50 with the noisy client | p99 with the noisy client | p99 with / alone | noisy client jobs/s | jobs/s alone | jobs/s with the noisy client |\n|---|---|---|---|---|---|---|---|---|\n")
		for _, x := range r.tenantsCrowd {
			p("| %s | %s | %s | %s | %s | %.2fx | %.0f | %.0f | %.0f |\n", x.name, ms2(x.alone.p50), ms2(x.alone.p99), ms2(x.noisy.p50), ms2(x.noisy.p99),
				ratio(x.noisy.p99, x.alone.p99), x.noisy.noisyJobsPerS, x.alone.jobsPerS, x.noisy.jobsPerS)
		}
		p("\n")
	}
	if r.weights != nil || r.fairCost.fifoNs > 0 {
		p("### Weights and the cost per job\n\n")
	}
	if w := r.weights; w != nil {
		p("Weights: a pool WithFairShare of %d workers and two tenants, of weights %s, each with %d batches (WithTenant, WithWeight) and %d goroutines submitting jobs that spin for %v to them, so that each always has a Submit blocked on the full pool. Each tenant's share of the run time, the sum of BatchStats.RunTime over its batches, over %v once it settled:\n\n",
			r.tenantsWorkers, joinInts(w.weights), weightsBatches, weightsSubmitters, weightsJob, w.took.Round(time.Millisecond))
		p("| weight | share of run time | due | run time | jobs ended |\n|---|---|---|---|---|\n")
		for i, wt := range w.weights {
			p("| %d | %.1f%% | %.1f%% | %v | %d |\n", wt, 100*w.share(i), 100*w.due(i), w.runTime[i].Round(time.Millisecond), w.jobs[i])
		}
		p("\n")
	}
	if c := r.fairCost; c.fifoNs > 0 {
		p("A fair pool's cost per job: no-op jobs through one batch of a pool of %d workers, first come, first served and WithFairShare, from the first Submit to Wait's return (testing.Benchmark, the two interleaved, the median of %s): %.0f ns WithFairShare against %.0f ns, %.2fx; %.3f and %.3f allocations per job.\n\n",
			r.tenantsWorkers, plural(r.fairCostRuns, "run"), c.fairNs, c.fifoNs, c.fairNs/c.fifoNs, c.fairAllocs, c.fifoAllocs)
	}
}

// A tenantsPool is one of the main tables' two pools, as the targets
// name it, and the names of its contenders first come, first served and
// WithFairShare.
type tenantsPool struct {
	what, fcfs, fair string
	vsFCFS           float64 // the sleeping jobs' target for fair's p99 over first come, first served's
}

// tenantsPools returns the main tables' pools: the default bound, then the
// backlog that holds a noisy request; none if the tenants scenario did not
// run.
func (r *tenantsScenario) tenantsPools() []tenantsPool {
	w := r.tenantsWorkers
	if w == 0 {
		return nil
	}
	return []tenantsPool{
		{"the default bound", tenantsFCFSName, tenantsFairName, tenantsBoundVsFCFS},
		{fmt.Sprintf("WithQueueSize(%d) (holds a noisy request)", tenantsBacklog(w)), tenantsRoomy(tenantsFCFSName, w), tenantsRoomy(tenantsFairName, w), tenantsRoomyVsFCFS},
	}
}

// targets checks the tenants scenario's figures against crew's
// targets, those r has figures for.
func (r *tenantsScenario) targets() []target {
	var ts []target
	add := func(what, measured string, met bool) { ts = append(ts, target{what, measured, met}) }
	sleeps, spins := tenantsJobs[0], tenantsJobs[1]
	for _, shape := range tenantsShapes {
		for _, pool := range r.tenantsPools() {
			t := tenantsTable{sleeps, shape, false}
			if fair := r.tenantsOf(t, pool.fair); fair.alone.p99 > 0 && fair.noisy.p99 > 0 {
				x := ratio(fair.noisy.p99, fair.alone.p99)
				add(fmt.Sprintf("tenants, %s, %s: WithFairShare's small-request p99 with the noisy client <= %gx its p99 alone", t.name(), pool.what, tenantsNoisyLimit),
					fmt.Sprintf("%.2fx (%s with vs %s alone)", x, ms2(fair.noisy.p99), ms2(fair.alone.p99)), x <= tenantsNoisyLimit)
			}
		}
	}
	for _, shape := range tenantsShapes {
		for _, pool := range r.tenantsPools() {
			t := tenantsTable{sleeps, shape, false}
			if fair, fcfs := r.tenantsOf(t, pool.fair), r.tenantsOf(t, pool.fcfs); fair.noisy.p99 > 0 && fcfs.noisy.p99 > 0 {
				x := ratio(fair.noisy.p99, fcfs.noisy.p99)
				add(fmt.Sprintf("tenants, %s, %s: WithFairShare's small-request p99 with the noisy client <= %gx first come, first served's", t.name(), pool.what, pool.vsFCFS),
					fmt.Sprintf("%.2fx (fair %s vs first come, first served %s)", x, ms2(fair.noisy.p99), ms2(fcfs.noisy.p99)), x <= pool.vsFCFS)
			}
		}
	}
	if pools := r.tenantsPools(); len(pools) == 2 {
		pool := pools[1] // the roomy backlog: on the default bound, spinning jobs wait for a CPU whatever the order
		for _, shape := range tenantsShapes {
			t := tenantsTable{spins, shape, false}
			if fair, fcfs := r.tenantsOf(t, pool.fair), r.tenantsOf(t, pool.fcfs); fair.noisy.p99 > 0 && fcfs.noisy.p99 > 0 {
				x := ratio(fair.noisy.p99, fcfs.noisy.p99)
				add(fmt.Sprintf("tenants, %s, %s: WithFairShare's small-request p99 with the noisy client <= %gx first come, first served's", t.name(), pool.what, tenantsSpinVsFCFS),
					fmt.Sprintf("%.2fx (fair %s vs first come, first served %s; fair %.2fx its %s alone)", x, ms2(fair.noisy.p99), ms2(fcfs.noisy.p99),
						ratio(fair.noisy.p99, fair.alone.p99), ms2(fair.alone.p99)), x <= tenantsSpinVsFCFS)
			}
		}
	}
	for _, pool := range r.tenantsPools() {
		var measured []string
		met := true
		for _, t := range tenantsTables() {
			fair, fcfs := r.tenantsOf(t, pool.fair), r.tenantsOf(t, pool.fcfs)
			if t.loaded || fair.noisy.jobsPerS == 0 || fcfs.noisy.jobsPerS == 0 {
				continue
			}
			x := fair.noisy.jobsPerS / fcfs.noisy.jobsPerS
			measured = append(measured, fmt.Sprintf("%s: %.2fx (fair %.0f vs first come, first served %.0f jobs/s; the noisy client's %.0f vs %.0f)",
				t.name(), x, fair.noisy.jobsPerS, fcfs.noisy.jobsPerS, fair.noisy.noisyJobsPerS, fcfs.noisy.noisyJobsPerS))
			met = met && x >= tenantsWorkConserved
		}
		if len(measured) > 0 {
			add(fmt.Sprintf("tenants, %s: all jobs per second with the noisy client WithFairShare >= %gx first come, first served's (work conserved), each table", pool.what, tenantsWorkConserved),
				strings.Join(measured, "; "), met)
		}
	}
	if w := r.weights; w != nil {
		var shares, dues []string
		met := true
		for i := range w.weights {
			shares = append(shares, fmt.Sprintf("%.1f%%", 100*w.share(i)))
			dues = append(dues, fmt.Sprintf("%.0f%%", 100*w.due(i)))
			met = met && math.Abs(w.share(i)-w.due(i)) <= weightsPoints/100.0
		}
		add(fmt.Sprintf("tenants: weights %s get %s of the run time, each within %d points", strings.Join(weightNames(w.weights), ":"), strings.Join(dues, " / "), weightsPoints),
			strings.Join(shares, " / ")+fmt.Sprintf(" (over %v)", w.took.Round(time.Millisecond)), met)
	}
	if c := r.fairCost; c.fifoNs > 0 && c.fairNs > 0 {
		x := c.fairNs / c.fifoNs
		add(fmt.Sprintf("tenants: a fair pool's cost per no-op job (one batch) <= %gx a first-come-first-served pool's, 0 allocs/job", fairCostLimit),
			fmt.Sprintf("%.2fx (fair %.0f vs first come, first served %.0f ns/job), %.3f allocs/job", x, c.fairNs, c.fifoNs, c.fairAllocs), x <= fairCostLimit && c.fairAllocs < 0.01)
	}
	return ts
}

// due returns the share of the run time tenant i is due by its weight.
func (w weightsResult) due(i int) float64 {
	sum := 0
	for _, x := range w.weights {
		sum += x
	}
	return float64(w.weights[i]) / float64(sum)
}

// weightNames writes weights as strings.
func weightNames(weights []int) []string {
	s := make([]string, len(weights))
	for i, w := range weights {
		s[i] = fmt.Sprint(w)
	}
	return s
}

// tenantsOf returns contender name's figures in main table t.
func (r *tenantsScenario) tenantsOf(t tenantsTable, name string) tenantsResult {
	return find(r.tenants, func(x tenantsResult) bool { return x.table == t && x.name == name })
}

// tenantsLabel writes a p99 in ms, to the hundredth under 10 ms.
func tenantsLabel(v float64) string {
	if v < 10 {
		return fmt.Sprintf("%.2f ms", v)
	}
	return msLabel(v)
}

// chartTitle is the tenants chart's title and its caption in the report.
func (r *tenantsScenario) chartTitle() string {
	return fmt.Sprintf("Tenants: the small requests' p99, %d clients with think time, %d workers, alone and with a noisy client", tenantsClients, r.tenantsWorkers)
}

// chart draws each contender's small-request p99 alone and with the
// noisy client, on a quiet machine and beside CPU-bound processes, as four
// bars, a panel per kind of job and shape.
func (r *tenantsScenario) chart(file string) error {
	b := barChart{title: r.chartTitle(), xLabel: "p99 per small request, ms, log scale (median of the runs)", log: true, label: tenantsLabel, width: 14 * vg.Inch, cols: len(tenantsShapes),
		series: []string{"alone", fmt.Sprintf("with the noisy client (%d-job requests)", tenantsNoisyJobs),
			"alone, beside " + loadName(true), "with the noisy client, beside " + loadName(true)}}
	for _, job := range tenantsJobs {
		for _, shape := range tenantsShapes {
			panel := barPanel{title: job.name + ", " + shape.name, values: make([][]float64, 4)}
			for _, x := range r.tenants {
				if x.table.job != job || x.table.shape != shape || x.table.loaded {
					continue
				}
				if len(b.panels) == 0 {
					b.names = append(b.names, x.name)
				}
				loaded := r.tenantsOf(tenantsTable{job, shape, true}, x.name)
				for s, v := range []time.Duration{x.alone.p99, x.noisy.p99, loaded.alone.p99, loaded.noisy.p99} {
					ms := math.NaN() // no bar: not measured
					if v > 0 {
						ms = float64(v) / float64(time.Millisecond)
					}
					panel.values[s] = append(panel.values[s], ms)
				}
			}
			b.panels = append(b.panels, panel)
		}
	}
	return b.save(file)
}
