package main

import (
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestEveryContenderRunsEveryJobOnceBeforeWaitReturns(t *testing.T) {
	for _, c := range contenders() {
		t.Run(c.name, func(t *testing.T) {
			var ran atomic.Int64
			r := c.start(4)
			var wg sync.WaitGroup
			for range 4 {
				wg.Go(func() {
					for range 500 {
						r.submit(func() { ran.Add(1) })
					}
				})
			}
			wg.Wait()
			r.wait()
			if got := ran.Load(); got != 2000 {
				t.Fatalf("ran %d of 2000 jobs by the time wait returned", got)
			}
		})
	}
}

func TestJobMixIsSeededAndNearFivePercentLong(t *testing.T) {
	a, b := jobTimes(20000, 7), jobTimes(20000, 7)
	long := 0
	for i := range a {
		if a[i] != b[i] {
			t.Fatal("the same seed gave different job times")
		}
		switch a[i] {
		case longJob:
			long++
		case shortJob:
		default:
			t.Fatalf("job time %v is neither %v nor %v", a[i], shortJob, longJob)
		}
	}
	if f := float64(long) / float64(len(a)); math.Abs(f-longRate) > 0.01 {
		t.Fatalf("%.3f of jobs are long, want %.2f", f, longRate)
	}
	if meanJob != 6900*time.Microsecond {
		t.Fatalf("mean job %v, want 6.9ms", meanJob)
	}
}

func TestMedianAndQuantile(t *testing.T) {
	if m := median([]float64{5, 1, 3}); m != 3 {
		t.Fatalf("median of 5,1,3 = %v", m)
	}
	if m := median([]float64{4, 1, 3, 2}); m != 2.5 {
		t.Fatalf("median of 4,1,3,2 = %v", m)
	}
	sorted := make([]float64, 1000)
	for i := range sorted {
		sorted[i] = float64(i + 1)
	}
	for _, tc := range []struct{ q, want float64 }{{0.5, 500}, {0.99, 990}, {0.999, 999}, {1, 1000}} {
		if got := quantile(sorted, tc.q); got != tc.want {
			t.Fatalf("quantile(%v) = %v, want %v", tc.q, got, tc.want)
		}
	}
	if !math.IsNaN(median(nil)) || !math.IsNaN(quantile(nil, 0.5)) {
		t.Fatal("no data must give NaN")
	}
}
