package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every contender of the adaptive scenario runs against the downstream
// for the whole span, and those that size themselves move off 1 worker.
func TestEveryAdaptiveContenderRunsAndTheSizersResize(t *testing.T) {
	a := &adaptiveScenario{}
	require.NoError(t, a.configure(settings{mode: quick}))
	a.capacity, a.span = 4, 600*time.Millisecond
	a.run(func(string) {})
	require.Len(t, a.results, 7)
	for _, r := range a.results {
		assert.Len(t, r.sizes, int(a.span/adaptiveTick), r.name)
		assert.Positive(t, r.thr, r.name)
		if !slices.Contains([]string{"fixed 2", "fixed 4", "fixed 8"}, r.name) {
			assert.Greater(t, slices.Max(r.sizes), 1, "%s sized the pool", r.name)
		}
	}
	assert.Equal(t, 2, a.resultOf("fixed 2").sizes[0])
}

// adaptiveSample is the scenario's results as a run might leave them.
func adaptiveSample() *adaptiveScenario {
	a := &adaptiveScenario{capacity: 16, runs: 3, span: 8 * time.Second}
	for i, name := range []string{"fixed 8", "fixed 16", "fixed 32", adaptiveCrewName, "Gradient2", "AIMD", "Vegas"} {
		sizes := make([]int, 800)
		for k := range sizes {
			sizes[k] = 8 + i + k%3
		}
		a.results = append(a.results, adaptiveResult{name: name, offBy: []float64{0.6, 0.2, 0.7, 0.15, 7, 9, 0.4}[i],
			reach: time.Duration(i) * 100 * time.Millisecond, thr: []float64{750, 1500, 2000, 1990, 2070, 2075, 1200}[i],
			p99: time.Duration([]float64{16, 16, 29, 18, 87, 87, 22}[i] * 1e6), noLoadP99: 15 * time.Millisecond,
			sizes: sizes, p99s: []float64{15, 16, 17, 18}})
	}
	return a
}

func TestAdaptiveTargetsCompareTheRightFigures(t *testing.T) {
	got := adaptiveSample().targets()
	require.Len(t, got, 6)
	assert.Equal(t, target{"adaptive: within ±15% of the capacity within 100 base latencies of the start", "30 base latencies", true}, got[0])
	assert.Equal(t, target{"adaptive: throughput >= 0.95x the best fixed size's", "0.995x (1990 vs 2000 calls/s)", true}, got[1])
	assert.Equal(t, target{"adaptive: p99 run time <= 1.3x the no-load p99", "1.20x (18.0 ms vs 15.0 ms)", true}, got[2])
	assert.Equal(t, target{"adaptive: closer to the capacity than Vegas (mean |size − capacity|), with no worse p99",
		"off by 0.150 vs 0.400, p99 18.0 ms vs 22.0 ms", true}, got[5])
	worse := adaptiveSample()
	worse.results[3].p99 = 30 * time.Millisecond
	assert.False(t, worse.targets()[5].met, "a p99 worse than Vegas's")
	assert.Nil(t, (&adaptiveScenario{}).targets(), "no figures, no targets")
}

func TestTheAdaptiveChartIsAPNG(t *testing.T) {
	a := adaptiveSample()
	cs := a.charts()
	require.Len(t, cs, 1)
	path := filepath.Join(t.TempDir(), cs[0].file)
	require.NoError(t, cs[0].draw(path))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.True(t, bytes.HasPrefix(b, []byte("\x89PNG")))
}

// A run that never reached the band is the slowest, not the fastest.
func TestTheMedianReachCountsNeverAsTheSlowest(t *testing.T) {
	a := &adaptiveScenario{span: time.Second}
	runs := func(xs ...time.Duration) []adaptiveResult {
		var rs []adaptiveResult
		for _, x := range xs {
			rs = append(rs, adaptiveResult{reach: x})
		}
		return rs
	}
	assert.Equal(t, 900*time.Millisecond, a.medianReach(runs(-1, 200*time.Millisecond, 900*time.Millisecond)))
	assert.Equal(t, time.Duration(-1), a.medianReach(runs(-1, -1, 900*time.Millisecond)))
}
