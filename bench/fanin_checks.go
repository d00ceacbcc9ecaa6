package main

import "fmt"

// The mailbox scenario's contenders the targets name.
const (
	chanMailboxName = "buffered chan (1024)"
	unboundedName   = "Unbounded"
	segmentedName   = "Segmented"
	boundedName     = "Bounded(1024, Backpressure)"
	crewChanName    = "Chan(1024)"
)

// fifoMailboxes are crew's FIFO mailboxes: those the fan-in targets compare.
// Fair and Priority order messages otherwise, at a cost doc.go states.
var fifoMailboxes = []string{unboundedName, segmentedName, boundedName, crewChanName}

// targets checks the mailbox scenario's figures: the one-producer
// targets, Segmented's and Bounded's under fan-in, and every FIFO
// mailbox's with load.
func (r *mailboxesScenario) targets() []target {
	var ts []target
	vs := func(what string, x, y mailboxResult, limit float64) {
		if x.nsPerMsg > 0 && y.nsPerMsg > 0 {
			q := x.nsPerMsg / y.nsPerMsg
			ts = append(ts, target{fmt.Sprintf("mailboxes, %dP1C%s: %s <= %gx %s", x.producers, what, x.name, limit, y.name),
				fmt.Sprintf("%.2fx (%.1f vs %.1f ns/msg)", q, x.nsPerMsg, y.nsPerMsg), q <= limit})
		}
	}
	for _, p := range fanIn {
		ch, seg := r.mailboxOf(chanMailboxName, p, false), r.mailboxOf(segmentedName, p, false)
		if p == 1 { // the SPSC target
			vs("", r.mailboxOf(unboundedName, p, false), ch, 0.6)
		}
		vs("", seg, ch, 0.6)
		if p > 1 && seg.nsPerMsg > 0 {
			fastest, of := seg, ""
			for _, name := range fifoMailboxes {
				if m := r.mailboxOf(name, p, false); m.nsPerMsg > 0 && m.nsPerMsg < fastest.nsPerMsg {
					fastest = m
				}
				of += fmt.Sprintf(", %s %.1f", name, r.mailboxOf(name, p, false).nsPerMsg)
			}
			ts = append(ts, target{fmt.Sprintf("mailboxes, %dP1C: Segmented is the fastest crew FIFO mailbox", p),
				fmt.Sprintf("fastest: %s (ns/msg%s)", fastest.name, of), fastest.name == segmentedName})
		}
		if p == 1 {
			vs("", r.mailboxOf(boundedName, p, false), r.mailboxOf(unboundedName, p, false), 1.2)
		}
		vs("", r.mailboxOf(boundedName, p, false), ch, 1.0)
	}
	for _, p := range fanIn {
		ch := r.mailboxOf(chanMailboxName, p, true)
		for _, name := range fifoMailboxes {
			vs(", with load", r.mailboxOf(name, p, true), ch, 1.2)
		}
	}
	return ts
}

// targets checks the actor scenario's figures: Tell -> handle against
// a goroutine ranging over a channel and calling the same handler, with
// the default mailbox and, under fan-in, with Segmented.
func (r *actorsScenario) targets() []target {
	var ts []target
	for _, p := range fanIn {
		ch, bp := r.actorOf(chanActorName, p, false), r.actorOf(crewBoundedActName, p, false)
		for _, name := range []string{crewActorName, crewSegmentedName} {
			a := r.actorOf(name, p, false)
			if ch.nsPerMsg <= 0 || a.nsPerMsg <= 0 || (name == crewSegmentedName && p == 1) {
				continue
			}
			q, limit := a.nsPerMsg/ch.nsPerMsg, 0.6
			if p > 1 {
				limit = 0.7
			}
			what := fmt.Sprintf("actor Tell -> handle, %d producer(s): <= %gx a goroutine fed by a buffered channel, 0 allocs", p, limit)
			if name == crewSegmentedName {
				what = fmt.Sprintf("actor Tell -> handle, %d producers, Segmented: <= %gx a goroutine fed by a buffered channel, 0 allocs", p, limit)
			}
			ts = append(ts, target{what, fmt.Sprintf("%.2fx (crew %.1f vs %.1f ns/msg), %.3f allocs/msg", q, a.nsPerMsg, ch.nsPerMsg, a.allocsPerMsg),
				q <= limit && a.allocsPerMsg < 0.01})
		}
		ub := r.actorOf(crewActorName, p, false)
		if p <= 4 && ub.nsPerMsg > 0 && bp.nsPerMsg > 0 {
			q := bp.nsPerMsg / ub.nsPerMsg
			ts = append(ts, target{fmt.Sprintf("actor with Bounded(1024, Backpressure), %d producer(s): <= 1.2x with Unbounded", p),
				fmt.Sprintf("%.2fx (%.1f vs %.1f ns/msg)", q, bp.nsPerMsg, ub.nsPerMsg), q <= 1.2})
		}
	}
	return ts
}

// advice returns the mailboxes' figures for the README's advice: the
// fan-in mailbox, the default one, and what Bounded costs.
func (r *mailboxesScenario) advice() []adviceCheck {
	runs := func(name string, p int, loaded bool) []float64 { return r.mailboxOf(name, p, loaded).runs }
	var out []adviceCheck
	for _, p := range []int{4, 8} { // on a quiet machine: the advice's condition
		out = append(out, adviceCheck{"fan-in", fmt.Sprintf("mailbox, %d producers: Segmented vs Unbounded", p),
			runs(segmentedName, p, false), runs(unboundedName, p, false), nsPerMsg})
	}
	out = append(out, adviceCheck{"default mailbox", "mailbox, 1 producer: Unbounded vs buffered chan",
		runs(unboundedName, 1, false), runs(chanMailboxName, 1, false), nsPerMsg})
	for _, p := range []int{1, 4} {
		out = append(out, adviceCheck{"bounded", fmt.Sprintf("mailbox, %d producer(s): Unbounded vs Bounded(1024, Backpressure)", p),
			runs(unboundedName, p, false), runs(boundedName, p, false), nsPerMsg})
	}
	return out
}

// advice returns the actors' figures for the README's advice: the default
// mailbox, and what Bounded costs an actor.
func (r *actorsScenario) advice() []adviceCheck {
	runs := func(name string, p int) []float64 { return r.actorOf(name, p, false).runs }
	out := []adviceCheck{{"default mailbox", "actor, 1 producer: crew actor vs goroutine + buffered chan",
		runs(crewActorName, 1), runs(chanActorName, 1), nsPerMsg}}
	for _, p := range []int{1, 4} {
		out = append(out, adviceCheck{"bounded", fmt.Sprintf("actor, %d producer(s): Unbounded vs Bounded(1024, Backpressure)", p),
			runs(crewActorName, p), runs(crewBoundedActName, p), nsPerMsg})
	}
	return out
}

const nsPerMsg = "ns/msg"
