package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mailboxAt is a mailbox's result in three runs around ns.
func mailboxAt(name string, p int, loaded bool, ns float64) mailboxResult {
	return mailboxResult{name: name, producers: p, loaded: loaded, nsPerMsg: ns, runs: runsAround(ns)}
}

// The advice section says, for each piece of advice this run has figures
// for, whether every comparison came out as the advice says, and which
// did not.
func TestTheAdviceSectionSaysWhichAdviceHeld(t *testing.T) {
	mb := &mailboxesScenario{mailboxMsgs: 1000, runs: 3}
	for _, loaded := range []bool{false, true} {
		mb.mailboxes = append(mb.mailboxes,
			mailboxAt(chanMailboxName, 1, loaded, 40), mailboxAt(unboundedName, 1, loaded, 25), mailboxAt(boundedName, 1, loaded, 35),
			mailboxAt(unboundedName, 4, loaded, 34), mailboxAt(segmentedName, 4, loaded, 27), mailboxAt(boundedName, 4, loaded, 40),
			// With 8 producers, Segmented is no faster: the fan-in advice fails.
			mailboxAt(unboundedName, 8, loaded, 30), mailboxAt(segmentedName, 8, loaded, 31))
	}
	r := &report{machine: "test", mode: standard, scenarios: []scenario{mb, tenantsSample()}}
	md := r.markdown()
	require.Contains(t, md, "## The README's advice on this machine")
	byID := map[string]advice{}
	for _, a := range r.advices() {
		byID[a.id] = a
	}
	word := func(id string) string { return byID[id].verdict(r.mode).word }
	assert.Equal(t, "not held", word("fan-in"), "Segmented lost at 8 producers")
	assert.Len(t, byID["fan-in"].checks, 2, "4 and 8 producers, on a quiet machine only: the advice's condition")
	assert.Equal(t, "held", word("default mailbox"))
	assert.Len(t, byID["default mailbox"].checks, 1, "no actor figures in this run")
	assert.Equal(t, "held", word("bounded"))
	assert.Equal(t, "held", word("fair share"), "the sample's fair p99s are below first come, first served's")
	assert.Len(t, byID["fair share"].checks, 6, "each shape, but spinning jobs on the default bound, which are not part of the advice")
	assert.Equal(t, "held", word("default bound"))
	assert.NotContains(t, byID, "keyed", "no keyed figures in this run")
	assert.Contains(t, md, "| fan-in | Segmented is the FIFO mailbox for fan-in")
	assert.Contains(t, md, "mailbox, 8 producers: Segmented vs Unbounded: 1.03x (31.0 vs 30.0 ns/msg; 1.03x to 1.03x over 3 runs) (not held)")
	assert.Contains(t, md, "| not held | ")
	// The summary names each verdict, and why fan-in failed.
	summary := md[:strings.Index(md, "## 1. ")]
	assert.Contains(t, summary, "  - fan-in: not held: in none of 3 runs: mailbox, 8 producers: Segmented vs Unbounded 1.03x")
	assert.Contains(t, summary, "  - fair share: held: in each of 3 runs.\n")
}

// A check whose runs disagree is too close to call, and says how far its
// ratio ranged; a run too short is not judged at all.
func TestAdviceVerdictsFollowTheRuns(t *testing.T) {
	check := func(want, other []float64) advice {
		return advice{id: "x", checks: []adviceCheck{{"x", "a vs b", want, other, "ns"}}}
	}
	assert.Equal(t, "held", check([]float64{1, 2, 3}, []float64{2, 3, 4}).verdict(standard).word)
	assert.Equal(t, "not held", check([]float64{2, 3, 4}, []float64{1, 3, 3}).verdict(standard).word, "a tie is no win")
	v := check([]float64{1, 4, 3}, []float64{2, 2, 4}).verdict(standard)
	assert.Equal(t, "too close to call", v.word)
	assert.Contains(t, v.why, "a vs b 0.75x (3.0 vs 2.0 ns; 0.50x to 2.00x over 3 runs)")
	// The advice holds in a run if all its comparisons do: one comparison
	// holding in runs 1 and 2, the other in run 3 only, hold together in
	// none.
	split := advice{id: "x", checks: []adviceCheck{
		{"x", "a vs b", []float64{1, 1, 3}, []float64{2, 2, 2}, "ns"},
		{"x", "c vs d", []float64{3, 3, 1}, []float64{2, 2, 2}, "ns"},
	}}
	v = split.verdict(standard)
	assert.Equal(t, "not held", v.word)
	assert.Contains(t, v.why, "in none of 3 runs")
	split.checks[1].want[1] = 1
	assert.Equal(t, "too close to call", split.verdict(standard).word, "both hold in run 2")
	assert.Contains(t, split.verdict(standard).why, "held in 1 of 3 runs")
	assert.Equal(t, "not judged", check([]float64{1, 2, 3}, []float64{2, 3, 4}).verdict(quick).word, "-quick judges nothing")
	assert.Equal(t, "not judged", check([]float64{1, 2}, []float64{2, 3}).verdict(full).word, "two runs are too few")
}

// A report of some scenarios only, the tenants scenario not among them,
// has targets and advice for those that ran: it divided by the tenants'
// workers, 0, and crashed.
func TestAReportWithoutTheTenantsScenarioHasTheOthersTargets(t *testing.T) {
	mb := &mailboxesScenario{mailboxes: []mailboxResult{mailboxAt(chanMailboxName, 1, false, 40), mailboxAt(unboundedName, 1, false, 25)}}
	md := (&report{machine: "test", mode: standard, scenarios: []scenario{mb}}).markdown()
	assert.Contains(t, md, "## Targets")
	assert.Contains(t, md, "| default mailbox | ")
}

// A -quick report judges no target: it says "not judged", not "no".
func TestAQuickReportJudgesNoTarget(t *testing.T) {
	r := sampleReport()
	r.mode = quick
	md := r.markdown()
	assert.NotContains(t, md, "| no |")
	assert.Contains(t, md, "| not judged |")
	assert.Contains(t, md, "- **Targets:** not judged in a -quick run")
	r.mode = full
	assert.Contains(t, r.markdown(), "- **Targets:** ")
	assert.NotContains(t, r.markdown(), "| not judged |")
}
