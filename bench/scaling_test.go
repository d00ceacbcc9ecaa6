package main

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAtProcsSetsGOMAXPROCSAndRestoresIt(t *testing.T) {
	before := runtime.GOMAXPROCS(0)
	t.Run("while f runs, GOMAXPROCS is procs; after, what it was", func(t *testing.T) {
		var during int
		atProcs(before+3, func() { during = runtime.GOMAXPROCS(0) })
		assert.Equal(t, before+3, during)
		assert.Equal(t, before, runtime.GOMAXPROCS(0))
	})
	t.Run("a panic in f restores GOMAXPROCS too", func(t *testing.T) {
		assert.Panics(t, func() { atProcs(before+5, func() { panic("boom") }) })
		assert.Equal(t, before, runtime.GOMAXPROCS(0))
	})
}

func TestScalingSettingsAreTheWholeGridWithGOMAXPROCSVaryingFastest(t *testing.T) {
	ss := scalingSettings()
	require.Len(t, ss, len(scalingProcs)*len(scalingWorkers)*len(scalingSubmitters))
	for _, w := range scalingWorkers {
		for _, subs := range scalingSubmitters {
			for _, procs := range scalingProcs {
				assert.Contains(t, ss, scalingSetting{procs, w, subs})
			}
		}
	}
	for i := 1; i < len(ss); i++ {
		a, b := ss[i-1], ss[i]
		if i%len(scalingProcs) != 0 {
			assert.Equal(t, scalingSetting{b.procs, a.workers, a.submitters}, b, "neighbours %v and %v differ in more than GOMAXPROCS", a, b)
		}
	}
	assert.Equal(t, "GOMAXPROCS 2, 8 workers, 1 submitter", ss[0].String())
	assert.Equal(t, "GOMAXPROCS 16, 1024 workers, 8 submitters", ss[len(ss)-1].String())
}

func TestScalingContendersAndTheChannelPoolsCapacity(t *testing.T) {
	var names []string
	for _, c := range scalingContenders() {
		names = append(names, c.name)
	}
	assert.Equal(t, []string{crewName, floorName, baselineName, errgroupName, concName}, names)
	for _, w := range scalingWorkers {
		p := scalingContenders()[2].start(w)
		cp, ok := p.(*channelPool)
		require.True(t, ok, "the baseline is a %T", p)
		assert.Equal(t, w, cap(cp.jobs), "the channel of a pool of %d workers", w)
		p.wait()
	}
}

func TestScalingRunsEachSettingAtItsGOMAXPROCSAndRestoresIt(t *testing.T) {
	before := runtime.GOMAXPROCS(0)
	settings := []scalingSetting{{2, 8, 1}, {before + 3, 64, 8}}
	var mu sync.Mutex // guards seen
	seen := map[string]int{}
	res := scaling(settings, 400, 2, func(what string) {
		mu.Lock()
		defer mu.Unlock()
		seen[what] = runtime.GOMAXPROCS(0)
	})
	assert.Equal(t, before, runtime.GOMAXPROCS(0))
	require.Len(t, res, len(settings)*len(scalingContenders()))
	for _, s := range settings {
		for _, c := range scalingContenders() {
			assert.Equal(t, s.procs, seen[fmt.Sprintf("%s: run 2/2: %s", s, c.name)], "GOMAXPROCS while measuring %s at %v", c.name, s)
			x := find(res, func(x scalingResult) bool { return x.name == c.name && x.scalingSetting == s })
			assert.Positive(t, x.nsPerJob, "%s at %v", c.name, s)
		}
	}
}

// scalingSample returns made-up scaling results at every setting of the
// grid: per job, the floor 90 ns, the hand-written pool 100 ns, crew
// crewNs, errgroup egNs with 2 allocations, conc 300 ns; crew allocates
// crewAllocs.
func scalingSample(crewNs, egNs, crewAllocs float64) []scalingResult {
	var out []scalingResult
	for _, s := range scalingSettings() {
		out = append(out,
			scalingResult{s, crewName, crewNs, crewAllocs},
			scalingResult{s, floorName, 90, 0},
			scalingResult{s, baselineName, 100, 0},
			scalingResult{s, errgroupName, egNs, 2},
			scalingResult{s, concName, 300, 0})
	}
	return out
}

func TestScalingTargets(t *testing.T) {
	const (
		floor2   = "scaling, GOMAXPROCS 2, 8 workers, 1 submitter: <= 1.3x the floor (single-lock pool)"
		floorBig = "scaling, GOMAXPROCS 16, 1024 workers, 8 submitters: <= 1.3x the floor (single-lock pool)"
		chan2    = "scaling, GOMAXPROCS 2, 8 workers, 1 submitter: <= 1.2x the hand-written pool (shared chan, capacity = workers)"
		chan16   = "scaling, GOMAXPROCS 16, 8 workers, 1 submitter: <= 1.2x the hand-written pool (shared chan, capacity = workers)"
		eg2      = "scaling, GOMAXPROCS 2, 8 workers, 1 submitter: >= 4x faster than errgroup"
		conc     = "scaling, every setting: faster than conc"
		allocs   = "scaling, every setting: 0 allocs/job"
		nTarget  = 18 + 3 + 1 + 1 + 1
	)
	for _, tc := range []struct {
		name      string
		r         *scalingScenario
		met       map[string]bool
		measured  map[string]string
		unchecked []string
	}{
		{
			name: "crew at 1.15x the channel pool and 1.28x the floor meets the floor's 1.3x but not the channel's 1.2x",
			r:    &scalingScenario{scaling: scalingSample(115, 500, 0)},
			met:  map[string]bool{floor2: true, floorBig: true, chan2: true, chan16: true, eg2: true, conc: true, allocs: true},
			measured: map[string]string{
				floor2: "1.28x (crew 115 vs floor (single-lock pool) 90 ns/job)",
				chan2:  "1.15x (crew 115 vs hand-written (shared chan) 100 ns/job)",
				eg2:    "4.35x faster (crew 115 vs errgroup 500 ns/job)",
				conc:   "0.38x conc's time at most (GOMAXPROCS 2, 8 workers, 1 submitter: crew 115 vs conc 300 ns/job)",
				allocs: "0.000 allocs/job at most (GOMAXPROCS 2, 8 workers, 1 submitter)",
			},
		},
		{
			name: "crew at 1.25x the channel pool, 1.39x the floor, fails both with its figures",
			r:    &scalingScenario{scaling: scalingSample(125, 600, 0)},
			met:  map[string]bool{floor2: false, floorBig: false, chan2: false, chan16: false, eg2: true},
			measured: map[string]string{
				floorBig: "1.39x (crew 125 vs floor (single-lock pool) 90 ns/job)",
				chan16:   "1.25x (crew 125 vs hand-written (shared chan) 100 ns/job)",
			},
		},
		{
			name:     "crew 3.9 times as fast as errgroup fails the 4x target",
			r:        &scalingScenario{scaling: scalingSample(100, 390, 0)},
			met:      map[string]bool{eg2: false},
			measured: map[string]string{eg2: "3.90x faster (crew 100 vs errgroup 390 ns/job)"},
		},
		{
			name: "errgroup is checked with one submitter at GOMAXPROCS 2 only",
			r:    &scalingScenario{scaling: scalingSample(100, 100, 0)},
			unchecked: []string{
				"scaling, GOMAXPROCS 2, 8 workers, 8 submitters: >= 4x faster than errgroup",
				"scaling, GOMAXPROCS 16, 8 workers, 1 submitter: >= 4x faster than errgroup",
				"scaling, GOMAXPROCS 2, 64 workers, 1 submitter: <= 1.2x the hand-written pool (shared chan, capacity = workers)",
			},
		},
		{
			name:     "an allocation per fifty jobs fails the 0 allocs target",
			r:        &scalingScenario{scaling: scalingSample(100, 500, 0.02)},
			met:      map[string]bool{allocs: false},
			measured: map[string]string{allocs: "0.020 allocs/job at most (GOMAXPROCS 2, 8 workers, 1 submitter)"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := map[string]target{}
			for _, x := range tc.r.targets() {
				got[x.what] = x
			}
			assert.Len(t, got, nTarget)
			for what, met := range tc.met {
				require.Contains(t, got, what)
				assert.Equal(t, met, got[what].met, "%s (%s)", what, got[what].measured)
			}
			for what, measured := range tc.measured {
				assert.Equal(t, measured, got[what].measured, what)
			}
			for _, what := range tc.unchecked {
				assert.NotContains(t, got, what)
			}
		})
	}
	t.Run("the setting where crew comes closest to conc is the one reported", func(t *testing.T) {
		r := &scalingScenario{scaling: scalingSample(100, 500, 0)}
		i := slices.IndexFunc(r.scaling, func(x scalingResult) bool {
			return x.name == concName && x.scalingSetting == scalingSetting{8, 64, 8}
		})
		r.scaling[i].nsPerJob = 95
		x := r.targets()[nTarget-2]
		assert.Equal(t, conc, x.what)
		assert.Equal(t, "1.05x conc's time at most (GOMAXPROCS 8, 64 workers, 8 submitters: crew 100 vs conc 95 ns/job)", x.measured)
		assert.False(t, x.met)
	})
	t.Run("the worst setting's allocations are the ones reported", func(t *testing.T) {
		r := &scalingScenario{scaling: scalingSample(100, 500, 0)}
		i := slices.IndexFunc(r.scaling, func(x scalingResult) bool {
			return x.name == crewName && x.scalingSetting == scalingSetting{16, 1024, 1}
		})
		r.scaling[i].allocsPJob = 0.1
		x := r.targets()[nTarget-1]
		assert.Equal(t, allocs, x.what)
		assert.Equal(t, "0.100 allocs/job at most (GOMAXPROCS 16, 1024 workers, 1 submitter)", x.measured)
		assert.False(t, x.met)
	})
	t.Run("a report without the scenario checks none of its targets", func(t *testing.T) {
		assert.Empty(t, (&scalingScenario{}).targets())
	})
}

func TestScalingSectionHasASummaryAndATablePerSetting(t *testing.T) {
	r := &scalingScenario{scaling: scalingSample(115, 500, 0), scalingJobs: 1000, scalingRuns: 5}
	var b strings.Builder
	r.markdown(func(format string, a ...any) { fmt.Fprintf(&b, format, a...) })
	md := b.String()
	assert.Contains(t, md, "GOMAXPROCS 2, 8 and 16")
	assert.Contains(t, md, "8, 64 and 1024 workers and 1 and 8 submitters")
	assert.Contains(t, md, "| GOMAXPROCS 2, 8 workers, 1 submitter | 1.28x | 1.15x | 0.90x | 4.35x | 2.61x | 0.000 |\n")
	assert.Equal(t, len(scalingSettings()), strings.Count(md, "\n### "))
	assert.Contains(t, md, "### GOMAXPROCS 16, 1024 workers, 8 submitters\n\n| contender | ns/job | allocs/job | vs floor | vs hand-written (shared chan) |\n|---|---|---|---|---|\n"+
		"| crew SmallestMailbox | 115.0 | 0.000 | 1.28x | 1.15x |\n| floor (single-lock pool) | 90.0 | 0.000 | 1.00x | 0.90x |\n"+
		"| hand-written (shared chan) | 100.0 | 0.000 | 1.11x | 1.00x |\n"+
		"| errgroup SetLimit | 500.0 | 2.000 | 5.56x | 5.00x |\n| conc pool | 300.0 | 0.000 | 3.33x | 3.00x |\n")
}
