package main

import (
	"fmt"
	"math"
	"strings"
	"time"

	"gonum.org/v1/plot/vg"

	"github.com/crewlib/crew"
)

// The tenants scenario's targets: WithFairShare's small-request p99 with
// the noisy client within tenantsNoisyLimit of its own without it, and
// under tenantsVsFCFSLimit of first come, first served's with it; each
// weight's share of the run time within weightsPoints of its due; a fair
// pool's cost per job within fairCostLimit of a first come, first served
// pool's.
const (
	tenantsNoisyLimit  = 1.25
	tenantsVsFCFSLimit = 0.5
	weightsPoints      = 5
	fairCostLimit      = 1.15
)

// tenantsMarkdown writes the tenants scenario's section with p: the small
// requests' latency and the throughput per contender, then the weights
// check and the cost per job, each if r has its figures.
func (r *report) tenantsMarkdown(p func(format string, a ...any)) {
	p("## 10. Tenants: fair shares on one pool\n\n")
	if len(r.tenants) > 0 {
		p("%d small requests per run from %d clients, each taking the next request as soon as its last one returned; each request fans out 1 to %d jobs (uniform), each spinning a CPU loop for %v to %v (uniform; %.0f rounds per µs as measured at the start), and waits for them, as in the batches scenario. They run on %d workers alone, then beside a noisy client that sends requests of %d such jobs one after another, as a tenant of its own and without WithLimit, until the small clients are done. "+
			"%s runs every request as a batch of one pool, whose jobs start in the order they come; the pool holds %d jobs, and its blocked Submits take turns in arrival order, so the noisy client, with one Submit blocked at a time, gets about one turn in %d while every client has one. %s makes each small request a share of its own and the noisy client's batches one share, WithTenant(%q), so that a freed worker goes to the share that has had the least run time, and room in the full pool to the shares with a blocked Submit in turn. "+
			"%s has no limit across requests: the noisy client's jobs run at most %d at once, beside up to %d×%d small ones; %s queues every request's jobs in one unbounded queue. "+
			"Latency per small request from its batch's (group's) creation to its Wait's return; throughput over the time the small clients ran, counting the noisy client's jobs that ended in it. %d runs, each with its own seeds, the same for every contender within a run, the contenders one after another within each setting of each run; each figure is the median over the runs.\n\n",
			r.tenantsRequests, tenantsSmallClients, batchMaxJobs, batchMinSpin, batchMaxSpin, r.tenantsSpinRate, r.tenantsWorkers, tenantsNoisyJobs,
			tenantsFCFSName, r.tenantsWorkers*(1+crew.DefaultQueueSize), tenantsSmallClients+1, tenantsFairName, tenantsNoisyTenant,
			batchErrgroupName, batchLimit, tenantsSmallClients, batchLimit, batchPondName, r.tenantsRuns)
		p("| contender | p50 alone | p99 alone | p50 with the noisy client | p99 with the noisy client | p99 with / alone | noisy client jobs/s | jobs/s alone | jobs/s with the noisy client |\n|---|---|---|---|---|---|---|---|---|\n")
		for _, x := range r.tenants {
			p("| %s | %s | %s | %s | %s | %.2fx | %.0f | %.0f | %.0f |\n", x.name, ms2(x.alone.p50), ms2(x.alone.p99), ms2(x.noisy.p50), ms2(x.noisy.p99),
				ratio(x.noisy.p99, x.alone.p99), x.noisy.noisyJobsPerS, x.alone.jobsPerS, x.noisy.jobsPerS)
		}
		p("\n")
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
		p("A fair pool's cost per job: no-op jobs through one batch of a pool of %d workers, first come, first served and WithFairShare, from the first Submit to Wait's return (testing.Benchmark, the two interleaved, the median of %d runs): %.0f ns WithFairShare against %.0f ns, %.2fx; %.3f and %.3f allocations per job.\n\n",
			r.tenantsWorkers, r.fairCostRuns, c.fairNs, c.fifoNs, c.fairNs/c.fifoNs, c.fairAllocs, c.fifoAllocs)
	}
}

// tenantsTargets checks the tenants scenario's figures against crew's
// targets, those r has figures for.
func (r *report) tenantsTargets() []target {
	var ts []target
	fair, fcfs := r.tenantsOf(tenantsFairName), r.tenantsOf(tenantsFCFSName)
	if fair.alone.p99 > 0 && fair.noisy.p99 > 0 {
		x := ratio(fair.noisy.p99, fair.alone.p99)
		ts = append(ts, target{fmt.Sprintf("tenants: WithFairShare's small-request p99 with the noisy client <= %gx its p99 without it", tenantsNoisyLimit),
			fmt.Sprintf("%.2fx (%s with vs %s without)", x, ms2(fair.noisy.p99), ms2(fair.alone.p99)), x <= tenantsNoisyLimit})
	}
	if fair.noisy.p99 > 0 && fcfs.noisy.p99 > 0 {
		x := ratio(fair.noisy.p99, fcfs.noisy.p99)
		others := ""
		for _, name := range []string{batchErrgroupName, batchPondName} {
			if o := r.tenantsOf(name); o.noisy.p99 > 0 {
				others += fmt.Sprintf("; %s %s", name, ms2(o.noisy.p99))
			}
		}
		ts = append(ts, target{fmt.Sprintf("tenants: WithFairShare's small-request p99 with the noisy client <= %gx first come, first served's", tenantsVsFCFSLimit),
			fmt.Sprintf("%.2fx (fair %s vs first come, first served %s%s)", x, ms2(fair.noisy.p99), ms2(fcfs.noisy.p99), others), x <= tenantsVsFCFSLimit})
	}
	if w := r.weights; w != nil {
		var shares, dues []string
		met := true
		for i := range w.weights {
			shares = append(shares, fmt.Sprintf("%.1f%%", 100*w.share(i)))
			dues = append(dues, fmt.Sprintf("%.0f%%", 100*w.due(i)))
			met = met && math.Abs(w.share(i)-w.due(i)) <= weightsPoints/100.0
		}
		ts = append(ts, target{fmt.Sprintf("tenants: weights %s get %s of the run time, each within %d points", strings.Join(weightNames(w.weights), ":"), strings.Join(dues, " / "), weightsPoints),
			strings.Join(shares, " / ") + fmt.Sprintf(" (over %v)", w.took.Round(time.Millisecond)), met})
	}
	if c := r.fairCost; c.fifoNs > 0 && c.fairNs > 0 {
		x := c.fairNs / c.fifoNs
		ts = append(ts, target{fmt.Sprintf("tenants: a fair pool's cost per no-op job (one batch) <= %gx a first-come-first-served pool's, 0 allocs/job", fairCostLimit),
			fmt.Sprintf("%.2fx (fair %.0f vs first come, first served %.0f ns/job), %.3f allocs/job", x, c.fairNs, c.fifoNs, c.fairAllocs), x <= fairCostLimit && c.fairAllocs < 0.01})
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

func (r *report) tenantsOf(name string) tenantsResult {
	return find(r.tenants, func(x tenantsResult) bool { return x.name == name })
}

// tenantsLabel writes a p99 in ms, to the hundredth under 10 ms.
func tenantsLabel(v float64) string {
	if v < 10 {
		return fmt.Sprintf("%.2f ms", v)
	}
	return msLabel(v)
}

func (r *report) tenantsTitle() string {
	return fmt.Sprintf("Tenants: the small requests' p99, %d clients, %d workers, without and with a noisy client", tenantsSmallClients, r.tenantsWorkers)
}

// tenantsChart draws each contender's small-request p99 without the noisy
// client and with it, side by side, on a logarithmic axis.
func (r *report) tenantsChart(file string) error {
	d := dotChart{title: r.tenantsTitle(), xLabel: "p99 per small request, ms, log scale", log: true, label: tenantsLabel, width: 10 * vg.Inch}
	alone, noisy := dotPanel{title: "alone"}, dotPanel{title: fmt.Sprintf("with the noisy client (%d-job requests)", tenantsNoisyJobs)}
	for _, x := range r.tenants {
		d.names = append(d.names, x.name)
		alone.values = append(alone.values, float64(x.alone.p99)/float64(time.Millisecond))
		noisy.values = append(noisy.values, float64(x.noisy.p99)/float64(time.Millisecond))
	}
	d.panels = []dotPanel{alone, noisy}
	return d.save(file)
}
