package main

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// interleave measures every contender once per run, in turn, with the
// run's inputs drawn once before the run's first measurement.
func TestInterleaveTakesTurnsRunByRun(t *testing.T) {
	var order, said []string
	got := interleave(3, []string{"a", "b"}, func(s string) { said = append(said, s) }, func(run int) func(i int) int {
		order = append(order, fmt.Sprintf("prepare %d", run))
		return func(i int) int {
			order = append(order, fmt.Sprintf("%d%c", run, 'a'+i))
			return 10*run + i
		}
	})
	assert.Equal(t, []string{"prepare 0", "0a", "0b", "prepare 1", "1a", "1b", "prepare 2", "2a", "2b"}, order)
	assert.Equal(t, [][]int{{0, 10, 20}, {1, 11, 21}}, got, "by contender, then run")
	assert.Equal(t, "run 1/3: a", said[0])
	assert.Equal(t, "run 3/3: b", said[len(said)-1])
}

// Every scenario has a name of its own, and a mode sizes each: a
// -quick run smaller than the default one, the default smaller than
// -full.
func TestScenariosAreRegisteredOnceAndSizedByTheMode(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range scenarios() {
		assert.False(t, seen[s.name()], "%s registered twice", s.name())
		seen[s.name()] = true
		assert.NotEmpty(t, s.title())
	}
	assert.Len(t, seen, 12)
	c := parseFlags([]string{"-quick", "-scenarios", "tenants,overhead"})
	require.Len(t, c.scenarios, 2)
	assert.Equal(t, "overhead", c.scenarios[0].name(), "the registry's order, whatever the flag's")
	assert.Equal(t, quick, c.mode)
	sizes := map[mode]int{}
	for _, m := range []mode{quick, standard, full} {
		o := &overheadScenario{}
		require.NoError(t, o.configure(settings{mode: m, workers: 8}))
		sizes[m] = o.overheadJobs * o.runs
	}
	assert.Less(t, sizes[quick], sizes[standard])
	assert.Less(t, sizes[standard], sizes[full])
	o := &overheadScenario{}
	require.NoError(t, o.configure(settings{mode: full, workers: 8, runs: 2}))
	assert.Equal(t, 2, o.runs, "-runs overrides the mode")
}

// Off a terminal, progress writes a line per scenario, not per
// measurement, so that a CI log stays short.
func TestProgressOffATerminalWritesALinePerScenario(t *testing.T) {
	var b bytes.Buffer
	p := &progress{w: &b, began: time.Now()}
	for _, s := range []string{"1/2 overhead", "2/2 burst"} {
		p.show(s, "")
		for i := range 50 {
			p.show(s, fmt.Sprintf("run %d", i))
		}
	}
	p.done()
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	require.Len(t, lines, 3)
	assert.Contains(t, lines[0], "1/2 overhead")
	assert.Contains(t, lines[2], "done")
	// On a terminal, one line rewritten in place, never wider than 79
	// columns.
	b.Reset()
	p = &progress{w: &b, began: time.Now(), terminal: true}
	p.show("1/2 overhead", strings.Repeat("x", 200))
	assert.True(t, strings.HasPrefix(b.String(), "\r"))
	assert.NotContains(t, b.String(), "\n")
	assert.LessOrEqual(t, len([]rune(b.String())), 1+progressWidth)
}

// A scenario's bad flag is an error of its own configure, named.
func TestAStreamLoadOutsideZeroAndOneIsRefused(t *testing.T) {
	s := &streamScenario{loadsFlag: "0.8,1.5"}
	assert.EqualError(t, s.configure(settings{mode: standard, workers: 8}), `-loads: "1.5" is not a fraction between 0 and 1`)
	s = &streamScenario{loadsFlag: "0.5,0.9"}
	require.NoError(t, s.configure(settings{mode: full, workers: 8}))
	assert.Equal(t, []float64{0.5, 0.9}, s.loads)
}

// -burst-workers below 1 is refused: the burst's lower bound divides by it.
func TestBurstWorkersBelowOneIsRefused(t *testing.T) {
	b := &burstScenario{burstWorkers: 0}
	assert.EqualError(t, b.configure(settings{mode: standard, workers: 8}), "-burst-workers must be at least 1, not 0")
}
