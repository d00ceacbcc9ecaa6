package main

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestLimiterAIMDGrowsAndBacksOff checks AIMD's additive increase, its
// app-limited hold, and its multiplicative decrease on a drop and on an rtt
// above the 5s timeout.
func TestLimiterAIMDGrowsAndBacksOff(t *testing.T) {
	l := newAIMD(20, 1, 100)
	require.Equal(t, "AIMD", l.name())
	require.Equal(t, 21, l.sample(time.Millisecond, 10, false), "10*2 >= 20 grows by one")
	require.Equal(t, 22, l.sample(time.Millisecond, 11, false))
	require.Equal(t, 22, l.sample(time.Millisecond, 10, false), "10*2 < 22 holds")
	require.Equal(t, 19, l.sample(time.Millisecond, 22, true), "int(22*0.9)")
	require.Equal(t, 17, l.sample(6*time.Second, 19, false), "rtt above the timeout is a drop: int(19*0.9)")
	require.Equal(t, 18, l.sample(5*time.Second, 17, false), "rtt equal to the timeout is no drop")
}

// TestLimiterAIMDBounds checks AIMD stays within [min, max].
func TestLimiterAIMDBounds(t *testing.T) {
	l := newAIMD(9, 8, 10)
	require.Equal(t, 10, l.sample(time.Millisecond, 10, false))
	require.Equal(t, 10, l.sample(time.Millisecond, 10, false), "capped at max")
	require.Equal(t, 9, l.sample(time.Millisecond, 10, true))
	require.Equal(t, 8, l.sample(time.Millisecond, 10, true))
	require.Equal(t, 8, l.sample(time.Millisecond, 10, true), "floored at min")
	require.Equal(t, 5, newAIMD(500, 1, 5).sample(time.Millisecond, 0, false), "initial clamped to max")
}

// TestLimiterVegasQueueRules walks Vegas's queue bands at limit 20 (log10 is
// 1, so threshold 1, alpha 3, beta 6) against a no-load rtt of 10ms.
func TestLimiterVegasQueueRules(t *testing.T) {
	l := newVegas(20, 1, 1000)
	require.Equal(t, "Vegas", l.name())
	require.Equal(t, 20, l.sample(10*time.Millisecond, 20, false), "first sample only sets the no-load rtt")
	// queue ceil(20*(1-10/12)) = 4: between alpha and beta, holds.
	require.Equal(t, 20, l.sample(12*time.Millisecond, 20, false))
	// queue ceil(20*(1-10/10.6)) = 2: above threshold, below alpha, grows by log10.
	require.Equal(t, 21, l.sample(10600*time.Microsecond, 20, false))
	// queue ceil(21*(1-10/20)) = 11 > beta: shrinks by log10.
	require.Equal(t, 20, l.sample(20*time.Millisecond, 21, false))
	// A drop shrinks by log10 whatever the queue.
	require.Equal(t, 19, l.sample(10*time.Millisecond, 20, true))
	// Fewer than half in flight: holds even with no queue.
	require.Equal(t, 19, l.sample(10*time.Millisecond, 9, false))
	// Queue 0 <= threshold: grows by beta = 6.
	require.Equal(t, 25, l.sample(10*time.Millisecond, 19, false))
	// A faster rtt only lowers the no-load rtt ...
	require.Equal(t, 25, l.sample(5*time.Millisecond, 25, false))
	// ... after which 10ms shows a queue of ceil(25*0.5) = 13 > 6: shrinks.
	require.Equal(t, 24, l.sample(10*time.Millisecond, 25, false))
}

// TestLimiterVegasBandEdges checks the band edges at limit 20: a queue equal
// to beta (6) holds, and one equal to the threshold (1) grows by beta.
func TestLimiterVegasBandEdges(t *testing.T) {
	l := newVegas(20, 1, 1000)
	l.sample(10*time.Millisecond, 20, false)
	// queue ceil(20*(1-10/13.5)) = 6 = beta: holds.
	require.Equal(t, 20, l.sample(13500*time.Microsecond, 20, false))
	// queue ceil(20*(1-10/10.4)) = 1 = threshold: grows by beta.
	require.Equal(t, 26, l.sample(10400*time.Microsecond, 20, false))
}

// TestLimiterVegasJitter checks the probe jitter is drawn from [0.5, 1) and
// spreads over that range.
func TestLimiterVegasJitter(t *testing.T) {
	v := newVegas(20, 1, 1000).(*vegas)
	lo, hi := 1.0, 0.0
	for range 1000 {
		v.resetProbeJitter()
		lo, hi = min(lo, v.probeJitter), max(hi, v.probeJitter)
	}
	require.GreaterOrEqual(t, lo, 0.5)
	require.Less(t, lo, 0.51)
	require.Less(t, hi, 1.0)
	require.Greater(t, hi, 0.99)
}

// TestLimiterVegasProbe checks the no-load rtt is re-probed on the sample
// that brings the count to jitter×probeMultiplier×limit (30×20 here, jitter in
// [0.5, 1)): a steady 12ms rtt holds the limit (queue 4) until the probe
// adopts it as the no-load rtt, and the next sample then grows the limit.
func TestLimiterVegasProbe(t *testing.T) {
	l := newVegas(20, 1, 1000)
	v := l.(*vegas)
	want := int(math.Ceil(v.probeJitter * 30 * 20))
	require.GreaterOrEqual(t, want, 300)
	require.LessOrEqual(t, want, 600)
	l.sample(10*time.Millisecond, 20, false)
	for n := 2; n <= want; n++ {
		require.Equal(t, 10*time.Millisecond, time.Duration(v.rttNoLoad), "sample %d", n)
		require.Equal(t, 20, l.sample(12*time.Millisecond, 20, false), "sample %d", n)
	}
	require.Equal(t, 12*time.Millisecond, time.Duration(v.rttNoLoad), "probed on sample %d", want)
	require.Equal(t, 0, v.probeCount)
	require.Equal(t, 26, l.sample(12*time.Millisecond, 20, false))
}

// TestLimiterVegasBounds checks Vegas stays within [min, max], min replacing
// Java's floor of 1.
func TestLimiterVegasBounds(t *testing.T) {
	l := newVegas(20, 1, 30)
	l.sample(10*time.Millisecond, 20, false)
	require.Equal(t, 26, l.sample(10*time.Millisecond, 20, false))
	require.Equal(t, 30, l.sample(10*time.Millisecond, 26, false))
	require.Equal(t, 30, l.sample(10*time.Millisecond, 30, false))
	l = newVegas(5, 4, 30)
	l.sample(10*time.Millisecond, 5, false)
	require.Equal(t, 4, l.sample(10*time.Millisecond, 5, true))
	require.Equal(t, 4, l.sample(10*time.Millisecond, 5, true))
}

// TestLimiterGradient2Steps checks Gradient2's first steps by hand: at a
// steady rtt the gradient is 1 and the limit moves 0.2 of the way to
// limit+4, i.e. +0.8 a sample, truncated on return.
func TestLimiterGradient2Steps(t *testing.T) {
	l := newGradient2(20, 5, 200)
	require.Equal(t, "Gradient2", l.name())
	require.Equal(t, 20, l.sample(10*time.Millisecond, 20, false)) // 20.8
	require.Equal(t, 21, l.sample(10*time.Millisecond, 20, false)) // 21.6
	require.Equal(t, 22, l.sample(10*time.Millisecond, 20, false)) // 22.4
	require.Equal(t, 22, l.sample(10*time.Millisecond, 10, false), "10 < 22.4/2 holds")
	require.InDelta(t, 22.4, l.(*gradient2).limit, 1e-9)
	// 1.4× the long rtt is within the 1.5 tolerance: still grows.
	require.Equal(t, 23, l.sample(14*time.Millisecond, 22, false)) // 23.2
	require.InDelta(t, 23.2, l.(*gradient2).limit, 1e-9)
}

// TestLimiterGradient2ShrinksAndRecovers checks Gradient2 shrinks while the
// short rtt is well above the long one and grows back once it falls.
func TestLimiterGradient2ShrinksAndRecovers(t *testing.T) {
	l := newGradient2(50, 5, 200)
	g := l.(*gradient2)
	for range 100 {
		l.sample(10*time.Millisecond, 200, false)
	}
	require.InDelta(t, 130, g.limit, 1e-6, "100 steady samples: +0.8 each")
	// Long rtt stays near 10ms; 40ms gives gradient max(0.5, 1.5/4) = 0.5:
	// limit -> 0.9*limit + 0.8.
	prev := g.limit
	for i := range 20 {
		l.sample(40*time.Millisecond, 200, false)
		require.Less(t, g.limit, prev, "sample %d", i)
		if i == 0 {
			require.InDelta(t, 0.9*130+0.8, g.limit, 1e-6)
		}
		prev = g.limit
	}
	low := l.sample(40*time.Millisecond, 200, false)
	for range 10 {
		l.sample(10*time.Millisecond, 200, false)
	}
	require.Greater(t, l.sample(10*time.Millisecond, 200, false), low)
}

// TestLimiterGradient2LongAverage checks the long rtt: the mean of the first
// 10 samples, then an exponential average with factor 2/601, cut by 5% when
// more than twice the sample.
func TestLimiterGradient2LongAverage(t *testing.T) {
	l := newGradient2(20, 5, 200)
	g := l.(*gradient2)
	for i := 1; i <= 10; i++ {
		l.sample(time.Duration(i)*time.Millisecond, 0, false)
	}
	require.InDelta(t, 5.5e6, g.longRtt.value, 1e-6)
	l.sample(10*time.Millisecond, 0, false)
	f := 2.0 / 601
	want := 5.5e6*(1-f) + 10e6*f
	require.InDelta(t, want, g.longRtt.value, 1e-6)
	l.sample(time.Millisecond, 0, false)
	want = (want*(1-f) + 1e6*f) * 0.95
	require.InDelta(t, want, g.longRtt.value, 1e-6)
}

// TestLimiterGradient2Bounds checks Gradient2 stays within [min, max].
func TestLimiterGradient2Bounds(t *testing.T) {
	l := newGradient2(20, 20, 25)
	for range 50 {
		l.sample(10*time.Millisecond, 25, false)
	}
	require.Equal(t, 25, l.sample(10*time.Millisecond, 25, false))
	for range 100 {
		l.sample(time.Second, 25, false)
	}
	require.Equal(t, 20, l.sample(time.Second, 25, false))
}

// TestLimiterBoundsRandom feeds each limiter random samples, zero rtts
// included, and checks every limit lies within [min, max].
func TestLimiterBoundsRandom(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 4))
	for _, mk := range []func(int, int, int) limiter{newGradient2, newAIMD, newVegas} {
		l := mk(10, 3, 40)
		require.NotEmpty(t, l.params())
		for i := range 20000 {
			rtt := time.Duration(rnd.IntN(int(20 * time.Millisecond)))
			if i%50 == 0 {
				rtt = 6 * time.Second
			}
			got := l.sample(rtt, rnd.IntN(60), rnd.IntN(20) == 0)
			require.GreaterOrEqual(t, got, 3, "%s sample %d", l.name(), i)
			require.LessOrEqual(t, got, 40, "%s sample %d", l.name(), i)
		}
	}
}
