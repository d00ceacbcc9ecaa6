package crew_test

import (
	"context"
	"math"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/crewlib/crew"
)

// keyOf groups "a1", "a2" under "a".
func keyOf(msg string) string { return msg[:1] }

func TestFairServesOneMessagePerKeyPerTurn(t *testing.T) {
	ctx := context.Background()
	f := crew.NewFair(keyOf)
	for _, m := range []string{"a1", "a2", "a3", "b1", "c1", "b2"} {
		require.NoError(t, f.Enqueue(ctx, m))
	}
	assert.Equal(t, 3, f.Keys())
	assert.Equal(t, 6, f.Len())
	assert.Equal(t, []string{"a1", "b1", "c1", "a2", "b2", "a3"}, drainAll[string](f))
	assert.Equal(t, 0, f.Keys(), "drained keys are forgotten")
}

func TestFairKeyThatDrainedRejoinsAtTheBack(t *testing.T) {
	ctx := context.Background()
	f := crew.NewFair(keyOf)
	for _, m := range []string{"a1", "b1", "b2"} {
		require.NoError(t, f.Enqueue(ctx, m))
	}
	v, _ := f.Dequeue()
	require.Equal(t, "a1", v)
	require.NoError(t, f.Enqueue(ctx, "a2")) // a had drained: it queues behind b
	assert.Equal(t, []string{"b1", "a2", "b2"}, drainAll[string](f))
}

func TestFairChattyKeyCannotStarveAQuietOne(t *testing.T) {
	ctx := context.Background()
	f := crew.NewFair(keyOf)
	for range 1000 {
		require.NoError(t, f.Enqueue(ctx, "chatty"))
	}
	require.NoError(t, f.Enqueue(ctx, "quiet"))
	first, _ := f.Dequeue()
	second, _ := f.Dequeue()
	assert.Equal(t, []string{"chatty", "quiet"}, []string{first, second})
}

func TestFairKeepsFIFOPerKeyUnderConcurrency(t *testing.T) {
	ctx := context.Background()
	const keys, perKey = 8, 500
	f := crew.NewFair(func(v int) int { return v % keys })
	done := make(chan struct{}, keys)
	for k := range keys {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := range perKey {
				assert.NoError(t, f.Enqueue(ctx, i*keys+k))
			}
		}()
	}
	last := make([]int, keys)
	for i := range last {
		last[i] = -1
	}
	for got := 0; got < keys*perKey; {
		v, ok := f.Dequeue()
		if !ok {
			runtime.Gosched()
			continue
		}
		got++
		require.Greater(t, v, last[v%keys], "key %d out of order", v%keys)
		last[v%keys] = v
	}
	for range keys {
		<-done
	}
	assert.Equal(t, 0, f.Keys())
}

func TestFairHoldsNoMemoryForPastKeys(t *testing.T) {
	ctx := context.Background()
	f := crew.NewFair(func(v int) int { return v })
	heap := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}

	t.Run("a million keys passing through a shallow mailbox", func(t *testing.T) {
		for i := range 1_000_000 {
			require.NoError(t, f.Enqueue(ctx, i))
			if i%8 == 7 {
				for range 8 {
					_, _ = f.Dequeue()
				}
				require.Zero(t, f.Keys())
			}
		}
	})

	t.Run("the key table shrinks back after a wide burst", func(t *testing.T) {
		base := heap()
		const wide = 200_000
		for i := range wide {
			require.NoError(t, f.Enqueue(ctx, i))
		}
		peak := heap()
		require.Greater(t, peak, base+wide*16, "the burst should have grown the key table")
		require.Len(t, drainAll[int](f), wide)
		after := heap()
		assert.Less(t, after, base+(peak-base)/10, "drained: retained %d of %d bytes", after-base, peak-base)
		runtime.KeepAlive(f)
	})
}

func TestNewFairRejectsNilKey(t *testing.T) {
	assert.PanicsWithValue(t, "crew: NewFair: nil key function", func() {
		crew.NewFair[string, string](nil)
	})
}

func TestFairCloseReturnsRoundRobinOrder(t *testing.T) {
	ctx := context.Background()
	f := crew.NewFair(keyOf)
	for _, m := range strings.Fields("x1 x2 y1 z1 z2 z3") {
		require.NoError(t, f.Enqueue(ctx, m))
	}
	assert.Equal(t, strings.Fields("x1 y1 z1 x2 z2 z3"), f.Close())
	assert.Equal(t, 0, f.Keys())
}

func TestFairRejectsNaNKeys(t *testing.T) {
	f := crew.NewFair(func(v float64) float64 { return v })
	assert.PanicsWithValue(t, "crew: Fair: the key function returned a key not equal to itself (NaN)", func() {
		_ = f.Enqueue(context.Background(), math.NaN())
	})
	assert.Zero(t, f.Keys())
}
