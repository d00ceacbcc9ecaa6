package main

import (
	"fmt"
	"math"
	"strings"
	"time"
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

	stream                    []streamResult
	streamJobs, streamWorkers int

	keyed                   []keyedResult
	keyedJobs, keyedWorkers int

	mailboxes   []mailboxResult
	mailboxMsgs int

	memory *memoryResult
}

const crewName = "crew SmallestMailbox"

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
		p("%d no-op jobs through %d workers, from one submitter and from eight; start-up and wait included; median of the runs (contenders interleaved run by run). Allocations from runtime.MemStats.\n\n", r.overheadJobs, r.overheadWorkers)
		p("| contender | submitters | ns/job | allocs/job | vs hand-written |\n|---|---|---|---|---|\n")
		for _, o := range r.overhead {
			base := r.overheadOf(baselineName, o.submitters)
			p("| %s | %d | %.1f | %.2f | %.2fx |\n", o.name, o.submitters, o.nsPerJob, o.allocsPJob, o.nsPerJob/base.nsPerJob)
		}
		p("\n")
	}
	if len(r.burst) > 0 {
		p("## 2. Burst fan-out, uneven jobs\n\n")
		p("%d jobs submitted at once from one goroutine, 95%% sleeping 2 ms and 5%% 100 ms (seeded, the same for every contender), %d workers. Lower bound max(sum/workers, longest job) = %v.\n\n", r.burstJobs, r.burstWorkers, r.burstBound.Round(time.Millisecond))
		p("| contender | makespan | vs lower bound | vs hand-written |\n|---|---|---|---|\n")
		base := r.burstOf(baselineName)
		for _, x := range r.burst {
			p("| %s | %v | %.3fx | %.3fx |\n", x.name, x.makespan.Round(time.Millisecond), x.ratio, float64(x.makespan)/float64(base.makespan))
		}
		p("\n")
	}
	if len(r.stream) > 0 {
		p("## 3. Streaming, uneven jobs\n\n")
		p("%d jobs per contender and load arriving as a Poisson stream (seeded) at the loads below, as fractions of the capacity of %d workers for the jobs drawn, the same job mix; time in system from the scheduled arrival (a Submit that blocks counts) to the job's end.\n\n", r.streamJobs, r.streamWorkers)
		p("| contender | load | p50 | p99 | p99.9 |\n|---|---|---|---|---|\n")
		for _, s := range r.stream {
			p("| %s | %.0f%% | %v | %v | %v |\n", s.name, s.load*100, ms(s.p50), ms(s.p99), ms(s.p999))
		}
		p("\n")
	}
	if len(r.mailboxes) > 0 {
		p("## 4. Mailboxes\n\n")
		p("%d messages from P producers to one consumer, which waits on a signal channel of capacity 1 when it finds the mailbox empty (as an actor does); a buffered channel of 1024 as the baseline; median of the runs.\n\n", r.mailboxMsgs)
		p("| mailbox | producers | ns/msg | allocs/msg | vs buffered chan |\n|---|---|---|---|---|\n")
		for _, m := range r.mailboxes {
			base := r.mailboxOf("buffered chan (1024)", m.producers)
			p("| %s | %d | %.1f | %.3f | %.2fx |\n", m.name, m.producers, m.nsPerMsg, m.allocsPerMsg, m.nsPerMsg/base.nsPerMsg)
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
		p("%d jobs with Zipf(s=1.1) keys over 10,000 keys, the same job mix, a Poisson stream at 80%% of the capacity of %d workers; time in system from the scheduled arrival; order breaches are jobs that ran beside or before an earlier job of their key.\n\n", r.keyedJobs, r.keyedWorkers)
		p("| placement | p50 | p99 | makespan | order breaches |\n|---|---|---|---|---|\n")
		for _, k := range r.keyed {
			p("| %s | %s | %s | %s | %d |\n", k.name, ms(k.p50), ms(k.p99), ms(k.makespan), k.orderBreaches)
		}
		p("\n")
	}
	if t := r.targets(); len(t) > 0 {
		p("## Targets (DESIGN.md)\n\n| target | measured | met |\n|---|---|---|\n")
		for _, x := range t {
			met := "no"
			if x.met {
				met = "yes"
			}
			p("| %s | %s | %s |\n", x.what, x.measured, met)
		}
		p("\n")
	}
	return b.String()
}

type target struct {
	what, measured string
	met            bool
}

// targets checks the figures against DESIGN.md's performance targets.
func (r *report) targets() []target {
	var ts []target
	for _, subs := range []int{1, 8} {
		c, base, eg := r.overheadOf(crewName, subs), r.overheadOf(baselineName, subs), r.overheadOf("errgroup SetLimit", subs)
		if c.nsPerJob == 0 {
			continue
		}
		ratio := c.nsPerJob / base.nsPerJob
		ts = append(ts,
			target{fmt.Sprintf("overhead, %d submitter(s): <= 1.2x the hand-written pool", subs), fmt.Sprintf("%.2fx (%.0f vs %.0f ns/job)", ratio, c.nsPerJob, base.nsPerJob), ratio <= 1.2},
			target{fmt.Sprintf("overhead, %d submitter(s): >= 4x faster than errgroup", subs), fmt.Sprintf("%.2fx (%.0f vs %.0f ns/job)", eg.nsPerJob/c.nsPerJob, c.nsPerJob, eg.nsPerJob), eg.nsPerJob/c.nsPerJob >= 4},
			target{fmt.Sprintf("overhead, %d submitter(s): 0 allocs/job", subs), fmt.Sprintf("%.2f", c.allocsPJob), c.allocsPJob < 0.01})
	}
	if s, base, rr := r.streamOf(crewName, 0.8), r.streamOf(baselineName, 0.8), r.streamOf("crew RoundRobin", 0.8); s.p99 > 0 {
		ts = append(ts,
			target{"streaming 80%: p99 <= 1.5x the shared queue (hand-written)", fmt.Sprintf("%.2fx (%s vs %s)", ratio(s.p99, base.p99), ms(s.p99), ms(base.p99)), ratio(s.p99, base.p99) <= 1.5},
			target{"streaming 80%: p99 <= 0.6x round robin's", fmt.Sprintf("%.2fx (%s vs %s)", ratio(s.p99, rr.p99), ms(s.p99), ms(rr.p99)), ratio(s.p99, rr.p99) <= 0.6},
			target{"streaming 80%: p50 <= 0.1x round robin's", fmt.Sprintf("%.2fx (%s vs %s)", ratio(s.p50, rr.p50), ms(s.p50), ms(rr.p50)), ratio(s.p50, rr.p50) <= 0.1})
	}
	if len(r.keyed) == 3 {
		k, ch := r.keyed[0], r.keyed[1]
		ts = append(ts,
			target{"keyed placement: p99 <= 0.25x consistent hash's", fmt.Sprintf("%.2fx (%s vs %s)", ratio(k.p99, ch.p99), ms(k.p99), ms(ch.p99)), ratio(k.p99, ch.p99) <= 0.25},
			target{"keyed placement: p50 <= 0.1x consistent hash's", fmt.Sprintf("%.2fx (%s vs %s)", ratio(k.p50, ch.p50), ms(k.p50), ms(ch.p50)), ratio(k.p50, ch.p50) <= 0.1},
			target{"keyed placement keeps per-key order", fmt.Sprintf("%d breaches", k.orderBreaches), k.orderBreaches == 0})
	}
	if m := r.memory; m != nil {
		add := m.heapPerActor - m.heapPerGoroutine
		ts = append(ts, target{"an idle actor costs one goroutine plus < 1 KiB", fmt.Sprintf("%.0f bytes beside the goroutine", add), add < 1024})
		for _, k := range []string{"Unbounded", "Segmented"} {
			kept := m.retainedAfterAll[k]
			ts = append(ts, target{k + " drained: holds <= 64 slots (512 bytes of ints)", fmt.Sprintf("%.0f bytes", kept), kept <= 512})
		}
	}
	if c, base := r.burstOf(crewName), r.burstOf(baselineName); c.makespan > 0 {
		x := ratio(c.makespan, base.makespan)
		ts = append(ts, target{"burst makespan, default mailbox: <= 1.05x the shared queue", fmt.Sprintf("%.3fx (%s vs %s)", x, ms(c.makespan), ms(base.makespan)), x <= 1.05})
	}
	return ts
}

func ratio(a, b time.Duration) float64 {
	if b == 0 {
		return math.NaN()
	}
	return float64(a) / float64(b)
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }

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

func (r *report) mailboxOf(name string, producers int) mailboxResult {
	return find(r.mailboxes, func(m mailboxResult) bool { return m.name == name && m.producers == producers })
}
