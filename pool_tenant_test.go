package crew_test

import (
	"context"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/crewlib/crew"
)

// Tenants and weights on a pool without WithFairShare: accepted, so that a
// server can turn fairness off to compare, with the order first come,
// first served (the metrics' labels are checked in metrics_test.go).

func TestWithTenantAndWithWeightOnAPoolWithoutFairShareKeepFirstComeFirstServed(t *testing.T) {
	ctx := context.Background()
	p := crew.NewGroup(1, crew.WithQueueSize(8))
	started, release := make(chan struct{}), make(chan struct{})
	require.NoError(t, p.Submit(ctx, gated(started, release, nil)))
	<-started // the one worker is busy: the batches' jobs queue in the order they come

	var log runLog
	heavy, hctx := p.NewBatch(ctx, crew.WithTenant("heavy"), crew.WithWeight(3))
	light, lctx := p.NewBatch(ctx, crew.WithTenant("light"))
	for range 4 {
		require.NoError(t, heavy.Submit(hctx, log.job("heavy")))
	}
	for range 2 {
		require.NoError(t, light.Submit(lctx, log.job("light")))
	}
	close(release)
	require.NoError(t, heavy.Wait())
	require.NoError(t, light.Wait())
	require.NoError(t, p.Wait())
	assert.Equal(t, []string{"heavy", "heavy", "heavy", "heavy", "light", "light"}, log.get(),
		"a pool WithFairShare would run the light tenant's jobs first; this one runs them in the order they came")
}

func TestEveryBatchOfAPoolWithoutFairShareTakesWithTenantAndWithWeight(t *testing.T) {
	p := crew.NewGroup(2)
	defer p.Wait()
	opts := []crew.Option{crew.WithTenant("t"), crew.WithWeight(2)}
	in := []int{1, 2, 3}

	out, err := crew.MapBatch(t.Context(), p, in, double, opts...)
	require.NoError(t, err)
	assert.Equal(t, []int{2, 4, 6}, out, "MapBatch")

	assert.Equal(t, []pair[int]{{2, nil}, {4, nil}, {6, nil}}, gather(crew.MapSeqBatch(t.Context(), p, slices.Values(in), double, opts...)), "MapSeqBatch")

	var got []int
	s := crew.NewStreamBatch(t.Context(), p, opts...)
	for _, v := range in {
		require.NoError(t, s.Submit(t.Context(), func(context.Context) (func() error, error) {
			return func() error { got = append(got, v); return nil }, nil
		}))
	}
	require.NoError(t, s.Wait())
	assert.Equal(t, in, got, "NewStreamBatch")
}
