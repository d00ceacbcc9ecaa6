package main

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// heldFloor starts a floor of one worker whose first job holds it until
// release is closed, and fills its ring behind it.
func heldFloor(t *testing.T, ran *[]int, mu *sync.Mutex) (p *floorPool[int], release chan struct{}) {
	t.Helper()
	release = make(chan struct{})
	p = newFloor(1, func(_ context.Context, v int) error {
		if v == 0 {
			<-release
		}
		mu.Lock()
		*ran = append(*ran, v)
		mu.Unlock()
		return nil
	})
	require.NoError(t, p.Submit(context.Background(), 0))
	for i := range len(p.ring) {
		require.NoError(t, p.Submit(context.Background(), 1+i))
	}
	return p, release
}

func TestTheFloorRunsJobsAndLetsBlockedSubmitsInInOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var ran []int
		p, release := heldFloor(t, &ran, &mu)
		queued := len(p.ring)
		const blocked = 3
		for i := range blocked {
			go func() { assert.NoError(t, p.Submit(context.Background(), 1+queued+i)) }()
			synctest.Wait() // each blocks before the next comes
		}
		close(release)
		synctest.Wait()
		p.Wait()
		want := []int{0}
		for i := range queued + blocked {
			want = append(want, 1+i)
		}
		assert.Equal(t, want, ran)
	})
}

func TestABlockedSubmitOnTheFloorReturnsWhenItsContextEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var ran []int
		p, release := heldFloor(t, &ran, &mu)
		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error)
		go func() { errc <- p.Submit(ctx, -1) }()
		synctest.Wait()
		cancel()
		assert.ErrorIs(t, <-errc, context.Canceled)
		close(release)
		p.Wait()
		assert.NotContains(t, ran, -1, "the job of a Submit that gave up ran")
		assert.Len(t, ran, 1+len(p.ring))
	})
}

func TestTheFloorAllocatesNothingPerJob(t *testing.T) {
	p := startFloor(2)
	defer p.wait()
	allocs := testing.AllocsPerRun(10_000, func() { p.submit(noop) })
	assert.Zero(t, allocs)
}
