package main

import (
	"fmt"
	"slices"
	"strings"
)

// The README's and doc.go's performance advice, checked against this run:
// each piece of advice names the comparisons that back it, which the
// scenarios give as adviceChecks, each with a figure per run. The docs name
// each piece by its id, so that a reader whose run says "not held" knows
// which advice to doubt.
var adviceCatalogue = []struct{ id, says, where string }{
	{"fan-in", "Segmented is the FIFO mailbox for fan-in: with 4 or 8 producers, on a machine with a CPU to spare, it costs less per message than Unbounded (beside CPU-bound processes the two trade places from run to run: see the mailboxes section)",
		"doc.go (Choosing a mailbox), README (Mailboxes)"},
	{"default mailbox", "Unbounded, an actor's default mailbox, costs less per message than a buffered channel with one producer, with no CPU-bound load beside it",
		"doc.go (Choosing a mailbox), README (Mailboxes)"},
	{"bounded", "Bounded is for a hard limit, not for speed: Unbounded costs less per message",
		"doc.go (Choosing a mailbox), README (Mailboxes)"},
	{"fair share", "WithFairShare, a tenant per client, keeps small requests' p99 below first come, first served's beside a noisy client: any jobs on a backlog that holds the noisy request, jobs that wait on the default bound while the CPUs have room",
		"README (Long-lived pools, Tenants), doc.go (Long-lived pools)"},
	{"default bound", "without WithFairShare, keep the default bound rather than a backlog that holds a noisy request: a small bound keeps the delay behind a burst low",
		"WithQueueSize's godoc, README (Long-lived pools)"},
	{"keyed", "WithKey, not WithConsistentHash, for keyed jobs that must keep their order",
		"WithConsistentHash's godoc"},
	{"batches p99", "errgroup per request, with no limit across requests, gives a request a lower p99 than a batch on one shared bounded pool: the pool trades p99 for one bound on the jobs in flight",
		"README (Performance, Batches)"},
}

// minJudgedRuns is the fewest paired runs an advice's verdict rests on.
const minJudgedRuns = 3

// An adviceCheck is one comparison of two figures of the same unit, lower
// is better, each measured once per run, the runs paired (the contenders
// were interleaved within each): the advice expects want to come out
// lower than other.
type adviceCheck struct {
	id, what    string // the advice it backs, and what it compares
	want, other []float64
	unit        string
}

// ran reports whether both figures were measured in every run.
func (c adviceCheck) ran() bool {
	positive := func(xs []float64) bool { return !slices.ContainsFunc(xs, func(x float64) bool { return !(x > 0) }) }
	return len(c.want) > 0 && len(c.want) == len(c.other) && positive(c.want) && positive(c.other)
}

// ratios returns want over other, run by run.
func (c adviceCheck) ratios() []float64 {
	out := make([]float64, len(c.want))
	for i := range out {
		out[i] = c.want[i] / c.other[i]
	}
	return out
}

// A checkOutcome is what the runs say of one check.
type checkOutcome int

const (
	held     checkOutcome = iota // want came out lower in every run
	notHeld                      // in none
	tooClose                     // in some runs and not in others
)

func (c adviceCheck) outcome() checkOutcome {
	rs := c.ratios()
	below := 0
	for _, x := range rs {
		if x < 1 {
			below++
		}
	}
	switch below {
	case len(rs):
		return held
	case 0:
		return notHeld
	}
	return tooClose
}

// figures writes the check's medians, their ratio and its range over the
// runs.
func (c adviceCheck) figures() string {
	rs := c.ratios()
	s := fmt.Sprintf("%.2fx (%.1f vs %.1f %s", medianKept(rs), medianKept(c.want), medianKept(c.other), c.unit)
	if len(rs) > 1 {
		s += fmt.Sprintf("; %.2fx to %.2fx over %d runs", slices.Min(rs), slices.Max(rs), len(rs))
	}
	return s + ")"
}

// An advice is one recommendation, with this run's checks of it.
type advice struct {
	id, says, where string
	checks          []adviceCheck
}

// advices returns the advice this run has figures for, in the
// catalogue's order.
func (r *report) advices() []advice {
	var checks []adviceCheck
	for _, s := range r.scenarios {
		checks = append(checks, s.advice()...)
	}
	var out []advice
	for _, a := range adviceCatalogue {
		x := advice{id: a.id, says: a.says, where: a.where}
		for _, c := range checks {
			if c.id == a.id && c.ran() {
				x.checks = append(x.checks, c)
			}
		}
		if len(x.checks) > 0 {
			out = append(out, x)
		}
	}
	return out
}

// A verdict is what a run says of an advice: a word, and why.
type verdict struct{ word, why string }

// verdict judges a run by run, a holding in a run if every one of its
// checks does: held if it held in every run, not held if in none, too
// close to call if in some; not judged in a -quick run or on fewer than
// minJudgedRuns runs.
func (a advice) verdict(m mode) verdict {
	runs := len(a.checks[0].want)
	for _, c := range a.checks {
		runs = min(runs, len(c.want))
	}
	switch {
	case m == quick:
		return verdict{"not judged", "a -quick run is a smoke test"}
	case runs < minJudgedRuns:
		return verdict{"not judged", fmt.Sprintf("%s of each figure, too few to tell (%d needed)", plural(runs, "run"), minJudgedRuns)}
	}
	// The advice holds in a run if every one of its comparisons does.
	heldIn := 0
	for run := range runs {
		all := true
		for _, c := range a.checks {
			all = all && c.ratios()[run] < 1
		}
		if all {
			heldIn++
		}
	}
	var failed, split []string
	for _, c := range a.checks {
		switch c.outcome() {
		case notHeld:
			failed = append(failed, c.what+" "+c.figures())
		case tooClose:
			split = append(split, c.what+" "+c.figures())
		}
	}
	switch {
	case heldIn == 0:
		why := append(failed, split...)
		return verdict{"not held", fmt.Sprintf("in none of %s: %s", plural(runs, "run"), strings.Join(why, "; "))}
	case heldIn < runs:
		return verdict{"too close to call", fmt.Sprintf("held in %d of %s: %s", heldIn, plural(runs, "run"), strings.Join(append(failed, split...), "; "))}
	}
	return verdict{"held", fmt.Sprintf("in each of %s", plural(runs, "run"))}
}

// adviceMarkdown writes the section that says, for each piece of advice,
// whether it held in this run.
func (r *report) adviceMarkdown(p printer) {
	as := r.advices()
	if len(as) == 0 {
		return
	}
	p("## The README's advice on this machine\n\n")
	p("Each performance recommendation of the README and doc.go, by the id the docs give it, checked against this run. Every comparison is made run by run (the contenders were interleaved within each run): a comparison holds if its first figure came out lower in every run, fails if in none, and is too close to call if the runs disagree; the figures are the median ratio, the medians, and the ratio's range over the runs. The advice holds in a run if every one of its comparisons did, and here if it held in every run; it is not held if it held in none, and too close to call if in some. A \"not held\" means that this machine (see the Summary), with what ran beside the benchmark, does not back it: measure your own case before you follow it. With fewer than %d runs nothing is judged.\n\n", minJudgedRuns)
	p("| advice | says | verdict | this run's figures |\n|---|---|---|---|\n")
	for _, a := range as {
		v := a.verdict(r.mode)
		var figs []string
		for _, c := range a.checks {
			mark := ""
			switch outcome := c.outcome(); {
			case v.word == "not judged":
			case outcome == notHeld:
				mark = " (not held)"
			case outcome == tooClose:
				mark = " (too close to call)"
			}
			figs = append(figs, fmt.Sprintf("%s: %s%s", c.what, c.figures(), mark))
		}
		p("| %s | %s (%s) | %s | %s |\n", a.id, a.says, a.where, v.word, strings.Join(figs, "; "))
	}
	p("\n")
}
