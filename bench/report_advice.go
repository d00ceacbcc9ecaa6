package main

import (
	"fmt"
	"strings"
	"time"
)

// The README's and doc.go's performance advice, checked against this run:
// each piece of advice names the comparisons that back it, and holds on
// this machine if every one of them that ran came out as the advice says.
// The docs name each piece by its id, so that a reader whose run says
// "no" knows which advice to doubt.

// An advice is one recommendation, with this run's figures for it.
type advice struct {
	id, says, where string
	checks          []adviceCheck
}

// An adviceCheck is one comparison of two figures of the same unit, lower
// is better: the advice expects want to come out lower than other.
type adviceCheck struct {
	what        string
	want, other float64
	unit        string
}

func (c adviceCheck) held() bool { return c.want < c.other }

// ran reports whether both figures were measured.
func (c adviceCheck) ran() bool { return c.want > 0 && c.other > 0 }

// advices returns the advice this run has figures for.
func (r *report) advices() []advice {
	var out []advice
	add := func(a advice) {
		var ran []adviceCheck
		for _, c := range a.checks {
			if c.ran() {
				ran = append(ran, c)
			}
		}
		if a.checks = ran; len(ran) > 0 {
			out = append(out, a)
		}
	}
	ns := "ns/msg"
	mb := func(name string, p int, loaded bool) float64 { return r.mailboxOf(name, p, loaded).nsPerMsg }
	act := func(name string, p int, loaded bool) float64 { return r.actorOf(name, p, loaded).nsPerMsg }

	// An actor's own cost (its wake, its handler) dilutes its mailbox's:
	// the docs advise Segmented for a mailbox under fan-in, and say that
	// an actor gains less; the actors' figures are in the actors section.
	fanIn := advice{id: "fan-in", where: "doc.go (Choosing a mailbox), README (Mailboxes)",
		says: "Segmented is the FIFO mailbox for fan-in: with 4 or 8 producers it costs less per message than Unbounded"}
	for _, p := range []int{4, 8} {
		for _, loaded := range []bool{false, true} {
			fanIn.checks = append(fanIn.checks, adviceCheck{fmt.Sprintf("mailbox, %d producers%s: Segmented vs Unbounded", p, withLoad(loaded)),
				mb(segmentedName, p, loaded), mb(unboundedName, p, loaded), ns})
		}
	}
	add(fanIn)

	// Beside CPU-bound load Unbounded can cost as much as a channel, as
	// doc.go says: the advice is for a machine with room.
	add(advice{id: "default mailbox", where: "doc.go (Choosing a mailbox), README (Mailboxes)",
		says: "Unbounded, an actor's default mailbox, costs less per message than a buffered channel with one producer, with no CPU-bound load beside it",
		checks: []adviceCheck{
			{"mailbox, 1 producer: Unbounded vs buffered chan", mb(unboundedName, 1, false), mb(chanMailboxName, 1, false), ns},
			{"actor, 1 producer: crew actor vs goroutine + buffered chan", act(crewActorName, 1, false), act(chanActorName, 1, false), ns},
		}})

	bounded := advice{id: "bounded", where: "doc.go (Choosing a mailbox), README (Mailboxes)",
		says: "Bounded is for a hard limit, not for speed: Unbounded costs less per message"}
	for _, p := range []int{1, 4} {
		bounded.checks = append(bounded.checks,
			adviceCheck{fmt.Sprintf("mailbox, %d producer(s): Unbounded vs Bounded(1024, Backpressure)", p), mb(unboundedName, p, false), mb(boundedName, p, false), ns},
			adviceCheck{fmt.Sprintf("actor, %d producer(s): Unbounded vs Bounded(1024, Backpressure)", p), act(crewActorName, p, false), act(crewBoundedActName, p, false), ns})
	}
	add(bounded)

	pools := r.tenantsPools()
	fair := advice{id: "fair share", where: "README (Long-lived pools, Tenants), doc.go (Long-lived pools)",
		says: "WithFairShare, a tenant per client, keeps small requests' p99 below first come, first served's beside a noisy client: any jobs on a backlog that holds the noisy request, jobs that wait on the default bound while the CPUs have room"}
	for i, pool := range pools {
		for _, t := range tenantsTables() {
			if t.loaded || t.job.spins && i == 0 {
				continue // CPU-bound jobs on the default bound: every job waits for a CPU too (see the README)
			}
			f, fcfs := r.tenantsOf(t, pool.fair), r.tenantsOf(t, pool.fcfs)
			fair.checks = append(fair.checks, adviceCheck{fmt.Sprintf("%s, %s: fair vs first come, first served, p99", t.name(), pool.what),
				inMs(f.noisy.p99), inMs(fcfs.noisy.p99), "ms"})
		}
	}
	add(fair)

	if len(pools) == 2 {
		small, roomy := pools[0], pools[1]
		bound := advice{id: "default bound", where: "WithQueueSize's godoc, README (Long-lived pools)",
			says: "without WithFairShare, keep the default bound rather than a backlog that holds a noisy request: a small bound keeps the delay behind a burst low"}
		for _, t := range tenantsTables() {
			if t.loaded {
				continue
			}
			bound.checks = append(bound.checks, adviceCheck{fmt.Sprintf("%s: first come, first served's p99 with the noisy client, %s vs %s", t.name(), small.what, roomy.what),
				inMs(r.tenantsOf(t, small.fcfs).noisy.p99), inMs(r.tenantsOf(t, roomy.fcfs).noisy.p99), "ms"})
		}
		add(bound)
	}

	if len(r.keyed) == 3 {
		k, ch := r.keyed[0], r.keyed[1]
		add(advice{id: "keyed", where: "WithConsistentHash's godoc",
			says: "WithKey, not WithConsistentHash, for keyed jobs that must keep their order",
			checks: []adviceCheck{
				{"keyed placement, p50: WithKey vs WithConsistentHash", inMs(k.p50), inMs(ch.p50), "ms"},
				{"keyed placement, p99: WithKey vs WithConsistentHash", inMs(k.p99), inMs(ch.p99), "ms"},
			}})
	}
	return out
}

// adviceMarkdown writes the section that says, for each piece of advice,
// whether it held in this run.
func (r *report) adviceMarkdown(p func(format string, a ...any)) {
	as := r.advices()
	if len(as) == 0 {
		return
	}
	p("## The README's advice on this machine\n\n")
	p("Each performance recommendation of the README and doc.go, by the id the docs give it, checked against this run: it holds here if every comparison of its row came out as it says (the first figure lower). A \"no\" means that this machine (see Machine above), with what ran beside the benchmark, does not back it: measure your own case before you follow it.\n\n")
	p("| advice | says | held here | this run's figures |\n|---|---|---|---|\n")
	for _, a := range as {
		held := true
		var figs []string
		for _, c := range a.checks {
			held = held && c.held()
			mark := ""
			if !c.held() {
				mark = " (not held)"
			}
			figs = append(figs, fmt.Sprintf("%s: %.2fx (%.1f vs %.1f %s)%s", c.what, c.want/c.other, c.want, c.other, c.unit, mark))
		}
		p("| %s | %s (%s) | %s | %s |\n", a.id, a.says, a.where, yesNo(held), strings.Join(figs, "; "))
	}
	p("\n")
}

// withLoad names a mailbox or actor measurement's setting.
func withLoad(loaded bool) string {
	if loaded {
		return ", with load"
	}
	return ""
}

// inMs returns d in milliseconds.
func inMs(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// yesNo writes a boolean as the report's tables do.
func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
