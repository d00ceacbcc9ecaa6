package main

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/alitto/pond/v2"

	"github.com/crewlib/crew"
)

// The tenants scenario: tenantsClients small clients, each sending a
// request of tenantsMinJobs to tenantsMaxJobs jobs, waiting for it, then
// thinking for tenantsThink, first alone, then beside one noisy client
// sending requests of tenantsNoisyJobs jobs one after another, as tenant
// tenantsNoisyTenant. The jobs are of each of tenantsJobs' kinds in turn.
// The pool runs first come, first served and WithFairShare, each on the
// default bound and on a backlog that holds a whole noisy request;
// errgroup per request and pond's groups run beside. The crowd table
// (tenants_crowd.go) keeps the scenario's earlier form, and
// tenants_checks.go checks WithWeight's shares and what fair sharing
// costs per job.
const (
	tenantsClients     = 8
	tenantsMinJobs     = 8
	tenantsMaxJobs     = 16
	tenantsThink       = 20 * time.Millisecond
	tenantsNoisyJobs   = 2000
	tenantsNoisyTenant = "noisy"
)

// A tenantsJob is a kind of job of the tenants scenario's main tables:
// every job of a run sleeps for d, or spins a CPU loop for d.
type tenantsJob struct {
	name  string // as the report's headings write it
	d     time.Duration
	spins bool
}

// tenantsJobs are the kinds of job the main tables measure, a table each:
// jobs that wait (on a disk, a database, another service), which leave
// the CPUs free, and jobs that compute, which with more workers than CPUs
// also wait for a CPU.
var tenantsJobs = []tenantsJob{
	{"jobs that sleep 0.5 ms", 500 * time.Microsecond, false},
	{"jobs that spin 200 µs", 200 * time.Microsecond, true},
}

// arg returns the argument a job of kind j is called with, at perMicro
// rounds of spin per µs: the rounds to spin, or the nanoseconds to sleep.
func (j tenantsJob) arg(perMicro float64) int {
	if j.spins {
		return int(perMicro * float64(j.d) / float64(time.Microsecond))
	}
	return int(j.d)
}

// run returns the job of kind j, called with arg's value.
func (j tenantsJob) run() func(n int) {
	if j.spins {
		return spin
	}
	return func(n int) { time.Sleep(time.Duration(n)) }
}

// A tenantsShape is how the small clients' requests fall in time: spread
// out (each client starts after a pause of its own), or starting together,
// so that their requests collide with each other as well as with the noisy
// client's, all at first, and less as they drift apart.
type tenantsShape struct {
	name     string // as the report's headings write it
	together bool
}

// tenantsShapes are the main tables' shapes, a table each.
var tenantsShapes = []tenantsShape{
	{"clients spread out", false},
	{"clients starting together", true},
}

// A tenantsTable is one of the main tables: a kind of job, a shape, and
// whether CPU-bound processes ran beside it (startLoad).
type tenantsTable struct {
	job    tenantsJob
	shape  tenantsShape
	loaded bool
}

// tenantsTables returns the main tables, in report order: each kind of
// job and shape on a quiet machine, then the same beside CPU-bound
// processes. The targets read the former only.
func tenantsTables() []tenantsTable {
	var ts []tenantsTable
	for _, loaded := range []bool{false, true} {
		for _, job := range tenantsJobs {
			for _, shape := range tenantsShapes {
				ts = append(ts, tenantsTable{job, shape, loaded})
			}
		}
	}
	return ts
}

// name names table t in the report's headings.
func (t tenantsTable) name() string {
	s := t.job.name + ", " + t.shape.name
	if t.loaded {
		s += ", beside " + loadName(true)
	}
	return s
}

// The names of the crew contenders on the default bound; tenantsRoomy
// names them on the backlog that holds a noisy request.
const (
	tenantsFCFSName = "crew NewBatch, one pool, first come first served"
	tenantsFairName = "crew NewBatch, one pool, WithFairShare"
)

// tenantsBacklog returns the queue size (WithQueueSize) of a pool of
// workers workers whose backlog holds a whole noisy request:
// tenantsNoisyJobs rounded up to a multiple of workers, per worker.
func tenantsBacklog(workers int) int {
	return (tenantsNoisyJobs + workers - 1) / workers
}

// tenantsRoomy returns the name of contender name on the pool whose
// backlog holds a whole noisy request, with workers workers.
func tenantsRoomy(name string, workers int) string {
	return fmt.Sprintf("%s, WithQueueSize(%d)", name, tenantsBacklog(workers))
}

// tenantContenders returns the contenders of the tenants scenario's main
// tables, in report order, for pools of workers workers: crew first come,
// first served and WithFairShare, on the default bound, then on a backlog
// that holds a whole noisy request (tenantsBacklog); errgroup per request
// with SetLimit(batchLimit), which has no limit across requests; pond's
// groups on one pool, whose queue has no bound. The fair pools put each
// request in its tenant's share (crewBatcher).
func tenantContenders(workers int) []batchContender {
	backlog := crew.WithQueueSize(tenantsBacklog(workers))
	return []batchContender{
		{tenantsFCFSName, crewStart(false)},
		{tenantsFairName, crewStart(true)},
		{tenantsRoomy(tenantsFCFSName, workers), crewStart(false, backlog)},
		{tenantsRoomy(tenantsFairName, workers), crewStart(true, backlog)},
		{batchErrgroupName, func(int) batcher { return errgroupBatcher{} }},
		{batchPondName, func(w int) batcher { return pondBatcher{pond.NewPool(w)} }},
	}
}

// crowdContenders returns the contenders of the crowd table, in report
// order: tenantContenders' but for those on the roomy backlog.
func crowdContenders() []batchContender {
	return []batchContender{
		{tenantsFCFSName, crewStart(false)},
		{tenantsFairName, crewStart(true)},
		{batchErrgroupName, func(int) batcher { return errgroupBatcher{} }},
		{batchPondName, func(w int) batcher { return pondBatcher{pond.NewPool(w)} }},
	}
}

// crewStart returns a contender's start: a crewBatcher on a pool made with
// opts, and WithFairShare if fair.
func crewStart(fair bool, opts ...crew.Option) func(workers int) batcher {
	if fair {
		opts = append(opts, crew.WithFairShare())
	}
	return func(w int) batcher { return crewBatcher{p: crew.NewGroup(w, opts...), fair: fair} }
}

// tenantsResult is one contender's figures without the noisy client and
// with it, in one of the main tables (none in the crowd table).
type tenantsResult struct {
	name         string
	table        tenantsTable
	alone, noisy tenantsFigures
}

// tenantsFigures are the medians over the runs of one contender's figures
// in one setting.
type tenantsFigures struct {
	p50, p99      time.Duration // the small requests' latency
	noisyJobsPerS float64       // the noisy client's jobs ended while the small clients ran, per second; 0 alone
	jobsPerS      float64       // every job ended while the small clients ran, per second
	requests      int           // the small requests measured
	p99s          []float64     // each run's p99 in ns, for the advice
}

// tenantsRun is what one run of one contender measured.
type tenantsRun struct {
	lat              []float64 // the small requests' latencies (ns), sorted
	elapsed          time.Duration
	smallJobs, noisy int64 // the small requests' jobs, and the noisy client's that ended within elapsed
}

// tenantsSamples gathers one contender's figures in one setting, a value
// per run.
type tenantsSamples struct {
	p50, p99, noisyJobsPerS, jobsPerS, requests []float64
}

// add records what one run measured.
func (s *tenantsSamples) add(x tenantsRun) {
	secs := x.elapsed.Seconds()
	s.p50 = append(s.p50, quantile(x.lat, 0.50))
	s.p99 = append(s.p99, quantile(x.lat, 0.99))
	s.noisyJobsPerS = append(s.noisyJobsPerS, float64(x.noisy)/secs)
	s.jobsPerS = append(s.jobsPerS, float64(x.smallJobs+x.noisy)/secs)
	s.requests = append(s.requests, float64(len(x.lat)))
}

// figures returns the median of each figure over the runs.
func (s *tenantsSamples) figures() tenantsFigures {
	return tenantsFigures{time.Duration(medianKept(s.p50)), time.Duration(medianKept(s.p99)),
		medianKept(s.noisyJobsPerS), medianKept(s.jobsPerS), int(medianKept(s.requests)), s.p99}
}

// tenants runs the main tables (tenantsTables): for each, the small
// clients through each contender with workers workers for d, first alone,
// then beside the noisy client. It does so runs times, each run with its
// own seeds for the clients' requests, the same for every contender
// within the run, the contenders one after another within each table and
// setting of each run (the quiet tables' runs first, then the loaded
// tables' with CPU-bound processes started for them), and reports the median of each figure over the runs. It
// returns the results, by table then contender, the measured spin rate,
// and how long the sleeping jobs' time.Sleep took.
func tenants(workers, runs int, d time.Duration, progress func(string)) ([]tenantsResult, float64, time.Duration) {
	cs := tenantContenders(workers)
	runtime.GC()
	perMicro := spinsPerMicrosecond()
	slept := measureSleep(tenantsJobs[0].d)
	tables := tenantsTables()
	// samples[table][setting][contender]; setting 0 is alone, 1 with the
	// noisy client.
	samples := make([][2][]tenantsSamples, len(tables))
	for k := range samples {
		for s := range samples[k] {
			samples[k][s] = make([]tenantsSamples, len(cs))
		}
	}
	// A measurement is one contender in one setting of one table; the
	// loaded tables run beside CPU-bound processes started for them.
	type measurement struct{ table, setting, contender int }
	for _, loaded := range []bool{false, true} {
		var ms []measurement
		var names []string
		for k, t := range tables {
			for setting, noisy := range []bool{false, true} {
				for i, c := range cs {
					if t.loaded == loaded {
						ms = append(ms, measurement{k, setting, i})
						names = append(names, fmt.Sprintf("%s, %s: %s", t.name(), settingName(noisy), c.name))
					}
				}
			}
		}
		stop := func() {}
		if loaded {
			stop = startLoad()
		}
		got := interleave(runs, names, progress, func(run int) func(i int) tenantsRun {
			return func(i int) tenantsRun {
				m := ms[i]
				runtime.GC()
				return runThinking(cs[m.contender].start(workers), tables[m.table], perMicro, run, d, m.setting == 1)
			}
		})
		stop()
		for i, m := range ms {
			for _, x := range got[i] {
				samples[m.table][m.setting][m.contender].add(x)
			}
		}
	}
	var out []tenantsResult
	for k, t := range tables {
		for i, c := range cs {
			out = append(out, tenantsResult{c.name, t, samples[k][0][i].figures(), samples[k][1][i].figures()})
		}
	}
	return out, perMicro, slept
}

// settingName says "alone" or "with the noisy client".
func settingName(noisy bool) string {
	if noisy {
		return "with the noisy client"
	}
	return "alone"
}

// runThinking runs the tenantsClients small clients through b for about
// d, and, if noisy, the noisy client beside them, started first, with jobs
// of table t's kind, in its shape; then it stops the noisy client and
// closes b. Each small client is tenant "client 1", "client 2" and so on.
// It waits a pause of up to tenantsThink (spread out) or none (starting
// together), then sends a request, waits for it and thinks for
// tenantsThink, and so on, as long as its next request would start within
// d of the start. The sizes of its requests and its first pause come from
// the run's seed and the client's number.
func runThinking(b batcher, t tenantsTable, perMicro float64, run int, d time.Duration, noisy bool) tenantsRun {
	job := t.job
	arg, do := job.arg(perMicro), job.run()
	var heavy [][]int
	if noisy {
		heavy = [][]int{make([]int, tenantsNoisyJobs)}
		for i := range heavy[0] {
			heavy[0][i] = arg
		}
	}
	stop := startNoisy(b, heavy, do)
	lats := make([][]float64, tenantsClients)
	jobs := make([]int64, tenantsClients)
	start := time.Now()
	deadline := start.Add(d)
	// The small clients, owned by this function: each ends once d has
	// passed.
	var wg sync.WaitGroup
	for c := range tenantsClients {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(5000+uint64(run), uint64(c)))
			tenant := fmt.Sprint("client ", c+1)
			work := make([]int, tenantsMaxJobs)
			for i := range work {
				work[i] = arg
			}
			pause := time.Duration(r.Int64N(int64(tenantsThink)))
			if !t.shape.together {
				time.Sleep(pause)
			}
			for time.Now().Before(deadline) {
				w := work[:tenantsMinJobs+r.IntN(tenantsMaxJobs-tenantsMinJobs+1)]
				sent := time.Now()
				b.request(tenant, w, do)
				lats[c] = append(lats[c], float64(time.Since(sent)))
				jobs[c] += int64(len(w))
				if time.Until(deadline) < tenantsThink {
					return
				}
				time.Sleep(tenantsThink)
			}
		})
	}
	wg.Wait()
	x := tenantsRun{elapsed: time.Since(start), noisy: stop()}
	b.close()
	for c := range tenantsClients {
		x.lat = append(x.lat, lats[c]...)
		x.smallJobs += jobs[c]
	}
	slices.Sort(x.lat)
	return x
}

// startNoisy starts the noisy client, unless noisy is nil: a goroutine that
// sends the requests of noisy in turn through b, as tenant
// tenantsNoisyTenant, each job calling job with its element of the request.
// The returned stop ends it: it counts the noisy jobs that ended so far,
// makes the jobs not yet started return at once, so that the pool drains
// quickly, and waits for the client's last request to return. The caller
// must call stop, once, before it closes b.
func startNoisy(b batcher, noisy [][]int, job func(int)) (stop func() (ended int64)) {
	if noisy == nil {
		return func() int64 { return 0 }
	}
	var stopped atomic.Bool
	var count atomic.Int64
	noisyJob := func(n int) {
		if stopped.Load() {
			return
		}
		job(n)
		count.Add(1)
	}
	// The noisy client, owned by stop, which ends it through stopped and
	// waits for it.
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 0; !stopped.Load(); i++ {
			b.request(tenantsNoisyTenant, noisy[i%len(noisy)], noisyJob)
		}
	})
	return func() int64 {
		ended := count.Load()
		stopped.Store(true)
		wg.Wait()
		return ended
	}
}
