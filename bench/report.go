package main

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/crewlib/crew"
)

// report gathers what the scenarios measured.
type report struct {
	machine string
	quick   bool
	took    time.Duration

	overhead                      []overheadResult
	overheadJobs, overheadWorkers int

	burst                   []burstResult
	burstBound              time.Duration
	burstJobs, burstWorkers int

	stream                                []streamResult
	streamJobs, streamWorkers, streamRuns int

	keyed                              []keyedResult
	keyedJobs, keyedWorkers, keyedRuns int

	mailboxes   []mailboxResult
	mailboxMsgs int

	actors    []actorResult
	actorMsgs int

	memory *memoryResult

	batches                                []batchResult
	batchSpinRate                          float64 // rounds of spin per microsecond
	emptyBatch                             emptyBatchCost
	serverPath                             []serverPathResult // by GOMAXPROCS
	batchRequests, batchWorkers, batchRuns int

	scaling                  []scalingResult
	scalingJobs, scalingRuns int

	tenants                     []tenantsResult // the main tables, by kind of job, then contender
	tenantsCrowd                []tenantsResult // 63 clients without think time
	tenantsSpinRate             float64         // rounds of spin per microsecond
	tenantsSlept                time.Duration   // how long the sleeping jobs' time.Sleep took
	tenantsWorkers, tenantsRuns int
	tenantsTime                 time.Duration // how long the small clients ran per measurement of the main tables
	crowdRequests               int
	weights                     *weightsResult
	fairCost                    fairCost
	fairCostRuns                int

	ordered *orderedReport
}

func (r *report) markdown() string {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p("# crew benchmark report\n\n")
	p("Machine: %s. Run took %.0f s", r.machine, r.took.Seconds())
	if r.quick {
		p(" (-quick: fewer jobs and runs; for a smoke test, not for figures)")
	}
	p(".\n\n")

	if len(r.overhead) > 0 {
		p("## 1. Overhead: no-op jobs\n\n")
		p("%d no-op jobs through %d workers, from one submitter and from eight; start-up and wait included; median of the runs (contenders interleaved run by run). Allocations from runtime.MemStats. The floor is the least a pool with crew's guarantees costs around one lock (see the scaling scenario).\n\n", r.overheadJobs, r.overheadWorkers)
		p("| contender | submitters | ns/job | allocs/job | vs floor | vs hand-written (shared chan) |\n|---|---|---|---|---|---|\n")
		for _, o := range r.overhead {
			fl, base := r.overheadOf(floorName, o.submitters), r.overheadOf(baselineName, o.submitters)
			p("| %s | %d | %.1f | %.2f | %.2fx | %.2fx |\n", o.name, o.submitters, o.nsPerJob, o.allocsPJob, o.nsPerJob/fl.nsPerJob, o.nsPerJob/base.nsPerJob)
		}
		p("\n")
	}
	if len(r.burst) > 0 {
		p("## 2. Burst fan-out, uneven jobs\n\n")
		p("%d jobs submitted at once from one goroutine, 95%% sleeping 2 ms and 5%% 100 ms (seeded, the same for every contender), %d workers; the median makespan of the runs, contenders interleaved run by run. Lower bound max(sum/workers, longest job) = %v. %s and %s are left out here and in the streaming scenario: they are the same FIFO queues as %s and %s.\n\n",
			r.burstJobs, r.burstWorkers, r.burstBound.Round(time.Millisecond), chan1024Name, crew1024Name, baselineName, crewName)
		p("| contender | makespan | vs lower bound | vs hand-written (shared chan) |\n|---|---|---|---|\n")
		base := r.burstOf(baselineName)
		for _, x := range r.burst {
			p("| %s | %v | %.3fx | %.3fx |\n", x.name, x.makespan.Round(time.Millisecond), x.ratio, float64(x.makespan)/float64(base.makespan))
		}
		p("\n")
	}
	if len(r.stream) > 0 {
		p("## 3. Streaming, uneven jobs\n\n")
		p("%d jobs per contender, load and run arriving as a Poisson stream at the loads below, as fractions of the capacity of %d workers for the jobs drawn, the same job mix; time in system from the scheduled arrival (a Submit that blocks counts) to the job's end. %d runs per load, each with its own seeds for the arrivals and the job times, the same for every contender within a run, the contenders one after another within each run; p50, p99 and p99.9 are each the median over the runs, and the last column shows how far p99 ranged over them.\n\n",
			r.streamJobs, r.streamWorkers, r.streamRuns)
		p("| contender | load | p50 | p99 | p99.9 | p99 over the runs |\n|---|---|---|---|---|---|\n")
		for _, s := range r.stream {
			p("| %s | %.0f%% | %v | %v | %v | %v to %v |\n", s.name, s.load*100, ms(s.p50), ms(s.p99), ms(s.p999), ms(s.p99Min), ms(s.p99Max))
		}
		p("\n")
	}
	if len(r.mailboxes) > 0 {
		p("## 4. Mailboxes\n\n")
		p("%d messages from P producers to one consumer, which waits on a signal channel of capacity 1 when it finds the mailbox empty (as an actor does); a buffered channel of 1024 as the baseline; median of the runs, contenders interleaved run by run. With load, one CPU-bound process per CPU runs beside the measurement.\n\n", r.mailboxMsgs)
		p("| mailbox | producers | load | ns/msg | allocs/msg | vs buffered chan |\n|---|---|---|---|---|---|\n")
		for _, m := range r.mailboxes {
			base := r.mailboxOf(chanMailboxName, m.producers, m.loaded)
			p("| %s | %d | %s | %.1f | %.3f | %.2fx |\n", m.name, m.producers, loadName(m.loaded), m.nsPerMsg, m.allocsPerMsg, m.nsPerMsg/base.nsPerMsg)
		}
		p("\n")
	}
	if m := r.memory; m != nil {
		p("## 5. Memory\n\n")
		p("Heap (and goroutine stacks) after a collection.\n\n")
		p("| what | bytes |\n|---|---|\n")
		p("| one of %d idle actors: heap beside its goroutine | %.0f |\n", m.actors, m.heapPerActor)
		p("| one of %d idle actors: its goroutine's stack | %.0f |\n", m.actors, m.stackPerActor)
		p("| one of %d bare goroutines blocked on a channel: heap (the runtime's g) | %.0f |\n", m.actors, m.heapPerGoroutine)
		p("| what an idle actor adds to its goroutine | %.0f |\n", m.heapPerActor-m.heapPerGoroutine)
		for _, k := range []string{"Unbounded", "Segmented"} {
			p("| %s: per message, %d queued ints | %.1f |\n", k, m.messages, m.perMessage[k])
			p("| %s: retained once drained | %.0f |\n", k, m.retainedAfterAll[k])
		}
		p("\n")
	}
	if len(r.keyed) > 0 {
		p("## 6. Keyed placement\n\n")
		p("%d jobs with Zipf(s=1.1) keys over 10,000 keys, the same job mix, a Poisson stream at 80%% of the capacity of %d workers; time in system from the scheduled arrival; order breaches are jobs that ran beside or before an earlier job of their key (over all runs); busiest worker / mean is the most jobs one worker ran over the mean per worker (1.00 is an even share), from the pool's Stats after Wait. %d runs, each with its own seeds, the same for every placement within a run (WithConsistentHash draws its own hash seed too); each figure is the median over the runs.\n\n", r.keyedJobs, r.keyedWorkers, r.keyedRuns)
		p("| placement | p50 | p99 | makespan | order breaches | busiest worker / mean |\n|---|---|---|---|---|---|\n")
		for _, k := range r.keyed {
			p("| %s | %s | %s | %s | %d | %.2f |\n", k.name, ms(k.p50), ms(k.p99), ms(k.makespan), k.orderBreaches, k.busiest)
		}
		p("\n")
	}
	if len(r.batches) > 0 {
		p("## 7. Batches on one shared pool\n\n")
		p("%d requests from %d goroutines, each taking the next request as soon as its last one returned; each request fans out 1 to %d jobs (uniform) and waits for them; each job spins a CPU loop for %v to %v (uniform; a fixed count of rounds, %.0f per µs as measured at the start, so that a preempted job costs no less). The jobs drawn are seeded, the same for every contender within a run. crew and pond run every request as a batch (a group) of one pool of %d workers, shared by all the requests; errgroup runs each request in a group of its own with SetLimit(%d), so it has no limit across requests: up to %d×%d = %d jobs run at once. crew's pool holds at most %d jobs (%d with WithQueueSize(%d)), so its Submits block while it is full, and blocked Submits take turns in arrival order: a request's jobs enter one turn at a time; pond's queue has no bound. Throughput from the first request to the last one's return, the pool's start and close left out; latency per request from its batch's (group's) creation to its Wait's return. %d runs, each with its own seeds, the contenders one after another within each run; each figure is the median over the runs, and the last column shows how far p99 ranged over them.\n\n",
			r.batchRequests, batchClients, batchMaxJobs, batchMinSpin, batchMaxSpin, r.batchSpinRate, r.batchWorkers, batchLimit,
			batchClients, batchLimit, batchClients*batchLimit, r.batchWorkers*(1+crew.DefaultQueueSize),
			r.batchWorkers*(1+batchRoomyQueue), batchRoomyQueue, r.batchRuns)
		p("| contender | requests/s | jobs/s | p50 per request | p99 per request | p99 over the runs |\n|---|---|---|---|---|---|\n")
		for _, x := range r.batches {
			p("| %s | %.0f | %.0f | %s | %s | %s to %s |\n", x.name, x.requestsPerS, x.jobsPerS, ms2(x.p50), ms2(x.p99), ms2(x.p99Min), ms2(x.p99Max))
		}
		p("\n")
		if e := r.emptyBatch; e.ns > 0 {
			p("A batch's fixed cost, NewBatch and Wait with no job on an idle pool (testing.Benchmark, the median of the runs, interleaved with errgroup's): %.0f ns and %d allocations; errgroup.WithContext and Wait with no goroutine: %.0f ns and %d allocations.\n\n", e.ns, e.allocs, e.errgroupNs, e.errgroupAllocs)
		}
		r.serverPathTable(p)
	}
	if len(r.actors) > 0 {
		p("## 8. Actors\n\n")
		p("%d messages told from P producers to one actor whose handler only counts them, until the last one is handled; the baseline is the hand-written equivalent, a goroutine ranging over a buffered channel of 1024; median of the runs, contenders interleaved run by run. With load, one CPU-bound process per CPU runs beside the measurement.\n\n", r.actorMsgs)
		p("| contender | producers | load | ns/msg | allocs/msg | vs goroutine + chan |\n|---|---|---|---|---|---|\n")
		for _, a := range r.actors {
			base := r.actorOf(chanActorName, a.producers, a.loaded)
			p("| %s | %d | %s | %.1f | %.3f | %.2fx |\n", a.name, a.producers, loadName(a.loaded), a.nsPerMsg, a.allocsPerMsg, a.nsPerMsg/base.nsPerMsg)
		}
		p("\n")
	}
	if len(r.scaling) > 0 {
		r.scalingMarkdown(p)
	}
	if len(r.tenants) > 0 || len(r.tenantsCrowd) > 0 || r.weights != nil || r.fairCost.fifoNs > 0 {
		r.tenantsMarkdown(p)
	}
	if r.ordered != nil {
		r.orderedMarkdown(p)
	}
	r.adviceMarkdown(p)
	if t := r.targets(); len(t) > 0 {
		p("## Targets\n\n")
		p("These are crew's performance targets, each checked against this run; crew means %s unless a row says otherwise, and measured gives the ratio, then crew's figure against the other's.\n\n", crewName)
		p("| target | measured | met |\n|---|---|---|\n")
		for _, x := range t {
			p("| %s | %s | %s |\n", x.what, x.measured, yesNo(x.met))
		}
		p("\n")
	}
	return b.String()
}

type target struct {
	what, measured string
	met            bool
}

// targets checks the figures against crew's performance targets, in the
// order they are listed, leaving out those this run has no figures for.
func (r *report) targets() []target {
	var ts []target
	add := func(what, measured string, met bool) { ts = append(ts, target{what, measured, met}) }
	// ns returns a row's "1.05x (crew 105 vs name 100 ns/job)".
	ns := func(x, y overheadResult) string {
		return fmt.Sprintf("%.2fx (crew %.0f vs %s %.0f ns/job)", x.nsPerJob/y.nsPerJob, x.nsPerJob, y.name, y.nsPerJob)
	}
	overheadVs := func(subs int, other, what string) {
		c, o := r.overheadOf(crewName, subs), r.overheadOf(other, subs)
		if c.nsPerJob > 0 && o.nsPerJob > 0 {
			add(fmt.Sprintf("overhead, %s: <= 1.2x %s", submitters(subs), what), ns(c, o), c.nsPerJob/o.nsPerJob <= 1.2)
		}
	}
	for _, subs := range []int{1, 8} {
		c, fl := r.overheadOf(crewName, subs), r.overheadOf(floorName, subs)
		if c.nsPerJob > 0 && fl.nsPerJob > 0 {
			add(fmt.Sprintf("overhead, %s: <= %gx the floor (single-lock pool)", submitters(subs), scalingFloorLimit), ns(c, fl), c.nsPerJob/fl.nsPerJob <= scalingFloorLimit)
		}
	}
	overheadVs(1, baselineName, "the hand-written pool (shared chan, capacity = workers)")
	overheadVs(8, baselineName, "the hand-written pool (shared chan)")
	overheadVs(1, chan1024Name, "the hand-written pool over a channel of 1024")
	if c, o := r.overheadOf(crew1024Name, 1), r.overheadOf(chan1024Name, 1); c.nsPerJob > 0 && o.nsPerJob > 0 {
		add("overhead, 1 submitter, the same bound: crew with room for 1024 jobs <= 1.2x the hand-written pool over a channel of 1024",
			fmt.Sprintf("%.2fx (crew %.0f vs %s %.0f ns/job)", c.nsPerJob/o.nsPerJob, c.nsPerJob, o.name, o.nsPerJob), c.nsPerJob/o.nsPerJob <= 1.2)
	}
	for _, subs := range []int{1, 8} {
		c, eg := r.overheadOf(crewName, subs), r.overheadOf(errgroupName, subs)
		if c.nsPerJob > 0 && eg.nsPerJob > 0 {
			x := eg.nsPerJob / c.nsPerJob
			add(fmt.Sprintf("overhead, %s: >= 4x faster than errgroup", submitters(subs)),
				fmt.Sprintf("%.2fx faster (crew %.0f vs errgroup %.0f ns/job)", x, c.nsPerJob, eg.nsPerJob), x >= 4)
		}
	}
	for _, subs := range []int{1, 8} {
		if c := r.overheadOf(crewName, subs); c.nsPerJob > 0 {
			add(fmt.Sprintf("overhead, %s: 0 allocs/job", submitters(subs)), fmt.Sprintf("%.2f allocs/job", c.allocsPJob), c.allocsPJob < 0.01)
		}
	}
	for _, subs := range []int{1, 8} {
		b, c := r.overheadOf(crewBatchName, subs), r.overheadOf(crewName, subs)
		if b.nsPerJob > 0 && c.nsPerJob > 0 {
			x := b.nsPerJob / c.nsPerJob
			add(fmt.Sprintf("overhead, %s: a batch's Submit <= 1.1x the pool's, 0 allocs/job", submitters(subs)),
				fmt.Sprintf("%.2fx (batch %.0f vs pool %.0f ns/job), %.2f allocs/job", x, b.nsPerJob, c.nsPerJob, b.allocsPJob), x <= 1.1 && b.allocsPJob < 0.01)
		}
	}
	ts = append(ts, r.scalingTargets()...)
	if e := r.emptyBatch; e.ns > 0 {
		x := e.ns / e.errgroupNs
		add("an empty batch (NewBatch + Wait): <= 1.5x errgroup.WithContext + Wait, <= 4 allocs",
			fmt.Sprintf("%.2fx (batch %.0f vs errgroup %.0f ns), %d allocs", x, e.ns, e.errgroupNs, e.allocs), x <= 1.5 && e.allocs <= 4)
	}
	ts = append(ts, r.serverPathTargets()...)
	streamVs := func(other, what string, limit float64) {
		for _, load := range []float64{0.8, 0.9} {
			s, o := r.streamOf(crewName, load), r.streamOf(other, load)
			if s.p99 > 0 && o.p99 > 0 {
				x := ratio(s.p99, o.p99)
				add(fmt.Sprintf("streaming %.0f%% load: p99 <= %gx %s", load*100, limit, what),
					fmt.Sprintf("%.2fx (crew %s vs %s %s)", x, ms(s.p99), other, ms(o.p99)), x <= limit)
			}
		}
	}
	streamVs(baselineName, "the shared queue's (hand-written shared chan)", 1.03)
	streamVs(shardsName, "the round-robin sharded pool's", 0.6)
	if c, base := r.burstOf(crewName), r.burstOf(baselineName); c.makespan > 0 && base.makespan > 0 {
		x := ratio(c.makespan, base.makespan)
		add("burst makespan: <= 1.02x the shared queue's (hand-written shared chan)",
			fmt.Sprintf("%.3fx (crew %s vs %s %s)", x, ms(c.makespan), baselineName, ms(base.makespan)), x <= 1.02)
	}
	if len(r.keyed) == 3 {
		k, ch := r.keyed[0], r.keyed[1]
		add("keyed placement (WithKey): p50 <= 0.1x consistent hashing's", fmt.Sprintf("%.2fx (WithKey %s vs WithConsistentHash %s)", ratio(k.p50, ch.p50), ms(k.p50), ms(ch.p50)), ratio(k.p50, ch.p50) <= 0.1)
		add("keyed placement (WithKey): p99 <= 0.25x consistent hashing's", fmt.Sprintf("%.2fx (WithKey %s vs WithConsistentHash %s)", ratio(k.p99, ch.p99), ms(k.p99), ms(ch.p99)), ratio(k.p99, ch.p99) <= 0.25)
		add("keyed placement (WithKey): 0 order breaches", fmt.Sprintf("%d breaches", k.orderBreaches), k.orderBreaches == 0)
	}
	ts = append(ts, r.mailboxTargets()...)
	ts = append(ts, r.actorTargets()...)
	if m := r.memory; m != nil {
		extra := m.heapPerActor - m.heapPerGoroutine
		add("memory: an idle actor costs one goroutine plus < 1 KiB", fmt.Sprintf("%.0f bytes beside the goroutine", extra), extra < 1024)
		for _, k := range []string{"Unbounded", "Segmented"} {
			kept := m.retainedAfterAll[k]
			add("memory: "+k+" drained holds <= 64 slots (512 bytes of ints)", fmt.Sprintf("%.0f bytes", kept), kept <= 512)
		}
	}
	ts = append(ts, r.tenantsTargets()...)
	ts = append(ts, r.orderedTargets()...)
	return ts
}

// submitters says "1 submitter" or "8 submitters".
func submitters(n int) string {
	if n == 1 {
		return "1 submitter"
	}
	return fmt.Sprintf("%d submitters", n)
}

func ratio(a, b time.Duration) float64 {
	if b == 0 {
		return math.NaN()
	}
	return float64(a) / float64(b)
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }

// ms2 is ms to the hundredth, for latencies of a millisecond or so.
func ms2(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }

// find returns the first of xs that ok accepts, or a zero X.
func find[X any](xs []X, ok func(X) bool) X {
	for _, x := range xs {
		if ok(x) {
			return x
		}
	}
	var zero X
	return zero
}

func (r *report) overheadOf(name string, subs int) overheadResult {
	return find(r.overhead, func(o overheadResult) bool { return o.name == name && o.submitters == subs })
}

func (r *report) burstOf(name string) burstResult {
	return find(r.burst, func(x burstResult) bool { return x.name == name })
}

func (r *report) streamOf(name string, load float64) streamResult {
	return find(r.stream, func(s streamResult) bool { return s.name == name && s.load == load })
}

func (r *report) actorOf(name string, producers int, loaded bool) actorResult {
	return find(r.actors, func(a actorResult) bool { return a.name == name && a.producers == producers && a.loaded == loaded })
}

func (r *report) mailboxOf(name string, producers int, loaded bool) mailboxResult {
	return find(r.mailboxes, func(m mailboxResult) bool {
		return m.name == name && m.producers == producers && m.loaded == loaded
	})
}
