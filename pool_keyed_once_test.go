package crew_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/crewlib/crew"
)

// A record is a keyed job whose key function counts its calls, and may
// read a name that the job itself changes.
type record struct {
	mu    sync.Mutex
	name  string
	calls atomic.Int64
	panic bool // the key function panics from its second call on
}

func (r *record) key() string {
	if n := r.calls.Add(1); r.panic && n > 1 {
		panic("key read twice")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.name
}

func (r *record) rename(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.name = name
}

func TestAKeyFunctionIsCalledOncePerJob(t *testing.T) {
	t.Run("jobs through idle workers, the backlog and blocked Submits read their key once", func(t *testing.T) {
		p := crew.NewPool(3, func(context.Context, *record) error { return nil },
			crew.WithKey((*record).key), crew.WithQueueSize(1))
		jobs := make([]*record, 300)
		for i := range jobs {
			jobs[i] = &record{name: string(rune('a' + i%5))}
			require.NoError(t, p.Submit(context.Background(), jobs[i]))
		}
		require.NoError(t, p.Wait())
		for i, r := range jobs {
			assert.EqualValues(t, 1, r.calls.Load(), "job %d", i)
		}
		assert.Zero(t, p.Stats().Keys)
	})
}

func TestAJobThatChangesWhatItsKeyReadsLetsWaitReturn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := crew.NewPool(2, func(_ context.Context, r *record) error {
			r.rename("archived/" + r.key())
			return nil
		}, crew.WithKey((*record).key))
		moved := &record{name: "a"}
		other := &record{name: "b"}
		for _, r := range []*record{moved, moved, other, moved} {
			require.NoError(t, p.Submit(context.Background(), r))
		}
		synctest.Wait() // they ran: the keys they left behind serve the next ones
		for _, name := range []string{"a", "x", "archived/b", "a", "y"} {
			require.NoError(t, p.Submit(context.Background(), &record{name: name}))
		}
		done := inBackground(p.Wait)
		synctest.Wait()
		select {
		case err := <-done:
			assert.NoError(t, err)
		default:
			t.Fatalf("Wait hangs: %+v", p.Stats())
		}
		s := p.Stats()
		assert.EqualValues(t, 9, s.Completed)
		assert.Zero(t, s.Queued)
		assert.Zero(t, s.Keys)
	})
}

func TestAKeyFunctionThatWouldPanicOnASecondCallIsNotCalledAgain(t *testing.T) {
	p := crew.NewPool(2, func(context.Context, *record) error { return nil }, crew.WithKey((*record).key))
	for range 20 {
		require.NoError(t, p.Submit(context.Background(), &record{name: "k", panic: true}))
	}
	assert.NoError(t, p.Wait())
	assert.EqualValues(t, 20, p.Stats().Completed)
}

func TestAKeyFunctionsPanicReachesTheSubmitter(t *testing.T) {
	boom := func(r *record) string {
		if r.panic {
			panic("bad key")
		}
		return r.name
	}
	t.Run("a Submit that finds room panics, and the pool goes on", func(t *testing.T) {
		p := crew.NewPool(1, func(context.Context, *record) error { return nil }, crew.WithKey(boom))
		assert.PanicsWithValue(t, "bad key", func() { _ = p.Submit(context.Background(), &record{name: "a", panic: true}) })
		require.NoError(t, p.Submit(context.Background(), &record{name: "a"}))
		assert.NoError(t, p.Wait())
		assert.EqualValues(t, 1, p.Stats().Submitted)
	})
	t.Run("a Submit blocked on a full pool panics on its own goroutine once admitted", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			release := make(chan struct{})
			p := crew.NewPool(1, func(_ context.Context, r *record) error {
				if r.name == "hold" {
					<-release
				}
				return nil
			}, crew.WithKey(boom), crew.WithQueueSize(1)) // a bound of 2
			require.NoError(t, p.Submit(context.Background(), &record{name: "hold"}))
			require.NoError(t, p.Submit(context.Background(), &record{name: "b"}))
			panicked := make(chan any, 1)
			go func() {
				defer func() { panicked <- recover() }()
				_ = p.Submit(context.Background(), &record{name: "c", panic: true})
			}()
			synctest.Wait()
			require.Equal(t, 1, crew.PoolBlocked(p))
			close(release)
			assert.Equal(t, "bad key", <-panicked)
			assert.NoError(t, p.Wait())
			assert.EqualValues(t, 2, p.Stats().Completed)
		})
	})
}
