package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The advice section says, for each piece of advice this run has figures
// for, whether every comparison came out as the advice says, and which
// did not.
func TestTheAdviceSectionSaysWhichAdviceHeld(t *testing.T) {
	r := &report{machine: "test"}
	tenantsSample(r)
	mailbox := func(name string, p int, loaded bool, ns float64) mailboxResult {
		return mailboxResult{name: name, producers: p, loaded: loaded, nsPerMsg: ns}
	}
	for _, loaded := range []bool{false, true} {
		r.mailboxes = append(r.mailboxes,
			mailbox(chanMailboxName, 1, loaded, 40), mailbox(unboundedName, 1, loaded, 25), mailbox(boundedName, 1, loaded, 35),
			mailbox(unboundedName, 4, loaded, 34), mailbox(segmentedName, 4, loaded, 27), mailbox(boundedName, 4, loaded, 40),
			// With 8 producers, Segmented is no faster: the fan-in advice fails.
			mailbox(unboundedName, 8, loaded, 30), mailbox(segmentedName, 8, loaded, 31))
	}
	md := r.markdown()
	require.Contains(t, md, "## The README's advice on this machine")
	byID := map[string]advice{}
	for _, a := range r.advices() {
		byID[a.id] = a
	}
	held := func(id string) bool {
		ok := true
		for _, c := range byID[id].checks {
			ok = ok && c.held()
		}
		return ok
	}
	assert.False(t, held("fan-in"), "Segmented lost at 8 producers")
	assert.Len(t, byID["fan-in"].checks, 4, "4 and 8 producers, alone and with load")
	assert.True(t, held("default mailbox"))
	assert.True(t, held("bounded"))
	assert.True(t, held("fair share"), "the sample's fair p99s are below first come, first served's")
	assert.Len(t, byID["fair share"].checks, 6, "each shape, but spinning jobs on the default bound, which are not part of the advice")
	assert.True(t, held("default bound"))
	assert.NotContains(t, byID, "keyed", "no keyed figures in this run")
	assert.Contains(t, md, "| fan-in | Segmented is the FIFO mailbox for fan-in")
	assert.Contains(t, md, "mailbox, 8 producers: Segmented vs Unbounded: 1.03x (31.0 vs 30.0 ns/msg) (not held)")
	assert.Contains(t, md, "| no | ")
}

// A report of some scenarios only, the tenants scenario not among them,
// has targets and advice for those that ran: it divided by the tenants'
// workers, 0, and crashed.
func TestAReportWithoutTheTenantsScenarioHasTheOthersTargets(t *testing.T) {
	r := &report{machine: "test", mailboxes: []mailboxResult{
		{name: chanMailboxName, producers: 1, nsPerMsg: 40}, {name: unboundedName, producers: 1, nsPerMsg: 25},
	}}
	md := r.markdown()
	assert.Contains(t, md, "## Targets")
	assert.Contains(t, md, "| default mailbox | ")
}
