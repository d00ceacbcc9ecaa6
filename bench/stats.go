package main

import (
	"math"
	"math/rand/v2"
	"slices"
	"time"
)

// median returns the middle of xs (the mean of the two middle ones for an
// even count). It sorts xs.
func median(xs []float64) float64 {
	slices.Sort(xs)
	n := len(xs)
	if n == 0 {
		return math.NaN()
	}
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

// quantile returns the q-quantile of sorted xs, by the nearest rank.
func quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

func ratio(a, b time.Duration) float64 {
	if b == 0 {
		return math.NaN()
	}
	return float64(a) / float64(b)
}

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

// measureSleep returns how long time.Sleep(d) takes on this machine, the
// median of 50 tries: it sleeps at least d, and a short sleep often takes
// markedly longer.
func measureSleep(d time.Duration) time.Duration {
	took := make([]float64, 50)
	for i := range took {
		start := time.Now()
		time.Sleep(d)
		took[i] = float64(time.Since(start))
	}
	return time.Duration(median(took))
}

// drawMix draws n job durations from r: long with probability rate, else
// short.
func drawMix(r *rand.Rand, n int, short, long time.Duration, rate float64) []time.Duration {
	d := make([]time.Duration, n)
	for i := range d {
		d[i] = short
		if r.Float64() < rate {
			d[i] = long
		}
	}
	return d
}

// inMsAll returns durations in ns (as float64) in milliseconds.
func inMsAll(ns []float64) []float64 {
	out := make([]float64, len(ns))
	for i, x := range ns {
		out[i] = x / float64(time.Millisecond)
	}
	return out
}

// maxOf returns the largest of xs, or 0 if there is none.
func maxOf(xs []float64) float64 {
	m := 0.0
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}
