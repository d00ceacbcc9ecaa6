package crew_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/crewlib/crew"
)

var updateFairTrace = flag.Bool("update-fair-trace", false, "record testdata/fair_trace.txt from this build's fair order")

// fairTrace runs a fixed workload on a pool of one worker made with opts
// (fair shares) in a synctest bubble and returns the order its jobs
// started in, one "share:job" (or "share") per line. One worker ends one job at a time,
// and every arrival falls on a microsecond no job ends on, so that the
// order depends on the scheduler alone: the same on every run.
//
// The workload: a noisy tenant whose one goroutine keeps the pool full
// with 1 ms jobs; a heavy tenant of weight 3 with two goroutines of 0.7 ms
// jobs; three small clients, each sending a few requests of 3 to 5 jobs
// of 0.3 ms as a batch of their tenant, with think times between them; and
// two batches of no tenant, one with a job that submits to its own batch.
func fairTrace(t *testing.T, opts ...crew.Option) string {
	var (
		mu  sync.Mutex
		out []string
	)
	started := func(name string, i int) {
		mu.Lock()
		if i < 0 {
			out = append(out, name)
		} else {
			out = append(out, fmt.Sprintf("%s:%d", name, i))
		}
		mu.Unlock()
	}
	synctest.Test(t, func(t *testing.T) {
		p := crew.NewGroup(1, append([]crew.Option{crew.WithFairShare(), crew.WithQueueSize(3)}, opts...)...)
		ctx := context.Background()
		var wg sync.WaitGroup
		// submitter sends n jobs of length d to a batch of its own made
		// with bopts, from g goroutines, after waiting for delay. With
		// more than one goroutine, which of them a job comes from is up to
		// the Go scheduler: the trace names its share alone.
		submitter := func(name string, delay time.Duration, g, n int, d time.Duration, bopts ...crew.Option) {
			wg.Go(func() {
				time.Sleep(delay)
				b, bctx := p.NewBatch(ctx, bopts...)
				var sg sync.WaitGroup
				for k := range g {
					sg.Go(func() {
						for i := k; i < n; i += g {
							require.NoError(t, b.Submit(bctx, func(context.Context) error {
								if g > 1 {
									started(name, -1)
								} else {
									started(name, i)
								}
								time.Sleep(d)
								return nil
							}))
						}
					})
				}
				sg.Wait()
				require.NoError(t, b.Wait())
			})
		}
		submitter("noisy", 0, 1, 120, time.Millisecond, crew.WithTenant("noisy"))
		submitter("heavy", 5*time.Millisecond+13*time.Microsecond, 2, 40, 700*time.Microsecond, crew.WithTenant("heavy"), crew.WithWeight(3))
		for c := range 3 {
			name := fmt.Sprintf("small%d", c)
			wg.Go(func() {
				time.Sleep(time.Duration(2000+1000*c+11+c) * time.Microsecond)
				for r := range 4 {
					b, bctx := p.NewBatch(ctx, crew.WithTenant(name))
					for i := range 3 + (r+c)%3 {
						require.NoError(t, b.Submit(bctx, func(context.Context) error {
							started(name, 10*r+i)
							time.Sleep(300 * time.Microsecond)
							return nil
						}))
					}
					require.NoError(t, b.Wait())
					time.Sleep(time.Duration(7000+1300*c+17) * time.Microsecond)
				}
			})
		}
		submitter("loose", 31*time.Millisecond+23*time.Microsecond, 1, 12, 500*time.Microsecond)
		wg.Go(func() {
			time.Sleep(47*time.Millisecond + 29*time.Microsecond)
			b, bctx := p.NewBatch(ctx)
			require.NoError(t, b.Submit(bctx, func(jctx context.Context) error {
				started("nested", 0)
				for i := 1; i <= 3; i++ {
					assert.NoError(t, b.Submit(jctx, func(context.Context) error {
						started("nested", i)
						time.Sleep(400 * time.Microsecond)
						return nil
					}))
				}
				time.Sleep(200 * time.Microsecond)
				return nil
			}))
			require.NoError(t, b.Wait())
		})
		wg.Wait()
		require.NoError(t, p.Wait())
	})
	return strings.Join(out, "\n") + "\n"
}

// The order of a fair pool with a zero window, recorded (go test -run
// TestAFairPoolWithNoWindowKeepsItsOrder -update-fair-trace) before quiet
// shares were credited and again when light shares were let in beyond the
// bound: a small client's first Submit, which waited for a job's end on
// the full pool, now gets in at once, so its jobs start earlier, among the
// noisy and heavy tenants' rather than after them; the dispatch order
// among the jobs in the pool is unchanged.
func TestAFairPoolWithNoWindowKeepsItsOrder(t *testing.T) {
	const golden = "testdata/fair_trace.txt"
	got := fairTrace(t, crew.WithFairWindow(0))
	if *updateFairTrace {
		require.NoError(t, os.WriteFile(golden, []byte(got), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	require.Equal(t, string(want), got)
}
