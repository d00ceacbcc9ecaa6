package crew_test

import (
	"context"
	"errors"
	"flag"
	"os"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/crewlib/crew"
)

func TestMain(m *testing.M) {
	flag.Parse()
	if fuzz := flag.Lookup("test.fuzz"); fuzz != nil && fuzz.Value.String() != "" {
		// While fuzzing, the fuzzing engine's own goroutines may still be
		// winding down when the run ends; goleak would report them.
		os.Exit(m.Run())
	}
	goleak.VerifyTestMain(m)
}

// A kind is one mailbox configuration under the shared contract tests.
type kind struct {
	name     string
	capacity int  // 0 when unbounded
	fifo     bool // Dequeue order is arrival order
	new      func() crew.Mailbox[int]
}

const kindCapacity = 8

var kinds = []kind{
	{"Unbounded", 0, true, func() crew.Mailbox[int] { return crew.NewUnbounded[int]() }},
	{"Segmented", 0, true, func() crew.Mailbox[int] { return crew.NewSegmented[int]() }},
	{"Chan", kindCapacity, true, func() crew.Mailbox[int] { return crew.NewChan[int](kindCapacity) }},
	{"Bounded/Fail", kindCapacity, true, func() crew.Mailbox[int] { return crew.NewBounded[int](kindCapacity, crew.Fail) }},
	{"Bounded/DropNewest", kindCapacity, true, func() crew.Mailbox[int] { return crew.NewBounded[int](kindCapacity, crew.DropNewest) }},
	{"Bounded/DropOldest", kindCapacity, true, func() crew.Mailbox[int] { return crew.NewBounded[int](kindCapacity, crew.DropOldest) }},
	{"Bounded/Backpressure", kindCapacity, true, func() crew.Mailbox[int] { return crew.NewBounded[int](kindCapacity, crew.Backpressure) }},
	{"Fair", 0, false, func() crew.Mailbox[int] { return crew.NewFair(func(v int) int { return v % 3 }) }},
	{"Priority", 0, false, func() crew.Mailbox[int] { return crew.NewPriority(byValue) }},
	{"StablePriority", 0, false, func() crew.Mailbox[int] { return crew.NewStablePriority(byValue) }},
	{"BoundedPriority", kindCapacity, false, func() crew.Mailbox[int] { return crew.NewBoundedPriority(kindCapacity, byValue) }},
	{"BoundedStablePriority", kindCapacity, false, func() crew.Mailbox[int] { return crew.NewBoundedStablePriority(kindCapacity, byValue) }},
}

// Every mailbox type satisfies the interface; the DropOldest one reports
// evictions through Dropper.
var (
	_ crew.Mailbox[int]    = (*crew.Unbounded[int])(nil)
	_ crew.Mailbox[int]    = (*crew.Segmented[int])(nil)
	_ crew.Mailbox[int]    = (*crew.Chan[int])(nil)
	_ crew.Mailbox[int]    = (*crew.Fair[int, string])(nil)
	_ crew.Mailbox[int]    = (*crew.Priority[int])(nil)
	_ crew.Dropper[string] = (*crew.Bounded[string])(nil)
)

func TestMailboxContract(t *testing.T) {
	ctx := context.Background()
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			t.Run("a new mailbox is empty", func(t *testing.T) {
				mb := k.new()
				assert.Equal(t, 0, mb.Len())
				_, ok := mb.Dequeue()
				assert.False(t, ok)
			})

			t.Run("every accepted message comes out once and Len follows", func(t *testing.T) {
				mb := k.new()
				in := []int{5, 3, 9, 1, 7, 2}
				for i, v := range in {
					require.NoError(t, mb.Enqueue(ctx, v))
					assert.Equal(t, i+1, mb.Len())
				}
				var out []int
				for mb.Len() > 0 {
					v, ok := mb.Dequeue()
					require.True(t, ok)
					out = append(out, v)
				}
				_, ok := mb.Dequeue()
				assert.False(t, ok)
				if k.fifo {
					assert.Equal(t, in, out)
				} else {
					assert.ElementsMatch(t, in, out)
				}
			})

			t.Run("Close returns what is queued in Dequeue order", func(t *testing.T) {
				in := []int{4, 8, 15, 16, 23, 42, 6}
				closed, drained := k.new(), k.new()
				for _, v := range in {
					require.NoError(t, closed.Enqueue(ctx, v))
					require.NoError(t, drained.Enqueue(ctx, v))
				}
				_, _ = closed.Dequeue()
				_, _ = drained.Dequeue()
				var want []int
				for v, ok := drained.Dequeue(); ok; v, ok = drained.Dequeue() {
					want = append(want, v)
				}
				assert.Equal(t, want, closed.Close())
				assert.Equal(t, 0, closed.Len())
			})

			t.Run("a closed mailbox rejects, yields nothing and closes again quietly", func(t *testing.T) {
				mb := k.new()
				require.NoError(t, mb.Enqueue(ctx, 1))
				assert.Equal(t, []int{1}, mb.Close())
				assert.ErrorIs(t, mb.Enqueue(ctx, 2), crew.ErrMailboxClosed)
				_, ok := mb.Dequeue()
				assert.False(t, ok)
				assert.Equal(t, 0, mb.Len())
				assert.Empty(t, mb.Close())
			})
		})
	}
}

// enqueueRetry enqueues v, yielding while a bounded mailbox reports it full
// (the caller keeps a rejected message, so retrying loses nothing). It
// returns the first other outcome.
func enqueueRetry(mb crew.Mailbox[int], v int) error {
	for {
		err := mb.Enqueue(context.Background(), v)
		if !errors.Is(err, crew.ErrMailboxFull) {
			return err
		}
		runtime.Gosched()
	}
}

// evictions installs a drop hook on mb if it has one and returns the
// function that reports what it received.
func evictions(t *testing.T, mb crew.Mailbox[int]) func() []int {
	var mu sync.Mutex
	var got []int
	if d, ok := mb.(crew.Dropper[int]); ok {
		d.OnDrop(func(v int, reason error) {
			assert.ErrorIs(t, reason, crew.ErrEvicted)
			mu.Lock()
			got = append(got, v)
			mu.Unlock()
		})
	}
	return func() []int {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(got)
	}
}

// watchLen samples mb.Len until stop is closed and fails the test if it is
// ever negative or above capacity.
func watchLen(t *testing.T, mb crew.Mailbox[int], capacity int, stop <-chan struct{}, wg *sync.WaitGroup) {
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			n := mb.Len()
			if n < 0 || (capacity > 0 && n > capacity) {
				t.Errorf("Len() = %d, outside [0, %d]", n, capacity)
				return
			}
			runtime.Gosched()
		}
	}()
}

// assertExactlyOnce checks that the union of the parts holds each of 0..n-1
// exactly once.
func assertExactlyOnce(t *testing.T, n int, parts ...[]int) {
	t.Helper()
	seen := make([]int, n)
	for _, part := range parts {
		for _, v := range part {
			require.True(t, v >= 0 && v < n, "unknown message %d", v)
			seen[v]++
		}
	}
	for v, c := range seen {
		if c != 1 {
			t.Fatalf("message %d seen %d times", v, c)
		}
	}
}

// startConsumers starts n goroutines that dequeue from mb, yielding when it
// is empty, until they find it empty after stop was set. wait waits for them and
// returns what each one got.
func startConsumers(mb crew.Mailbox[int], n int, stop *atomic.Bool) (wait func() [][]int) {
	var wg sync.WaitGroup
	got := make([][]int, n)
	for c := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				// Read stop before looking: if it was set, every message
				// sent before it is visible to this Dequeue.
				stopping := stop.Load()
				if v, ok := mb.Dequeue(); ok {
					got[c] = append(got[c], v)
				} else if stopping {
					return
				} else {
					runtime.Gosched()
				}
			}
		}()
	}
	return func() [][]int {
		wg.Wait()
		return got
	}
}

// sorted returns the parts joined and sorted.
func sorted(parts ...[]int) []int {
	return slices.Sorted(slices.Values(slices.Concat(parts...)))
}

func TestMailboxConcurrentDelivery(t *testing.T) {
	const producers, consumers, perProducer = 4, 3, 2000
	const total = producers * perProducer
	for _, k := range kinds {
		t.Run(k.name+": every message is delivered exactly once", func(t *testing.T) {
			mb := k.new()
			evicted := evictions(t, mb)
			stop := make(chan struct{})
			var watchers, producing sync.WaitGroup
			watchLen(t, mb, k.capacity, stop, &watchers)

			for p := range producers {
				producing.Add(1)
				go func() {
					defer producing.Done()
					for i := range perProducer {
						assert.NoError(t, enqueueRetry(mb, p*perProducer+i))
					}
				}()
			}
			var done atomic.Bool
			consumed := startConsumers(mb, consumers, &done)
			producing.Wait()
			done.Store(true) // once the producers are done, empty means drained
			got := consumed()
			close(stop)
			watchers.Wait()

			assert.Equal(t, 0, mb.Len())
			assertExactlyOnce(t, total, append(got, evicted())...)
		})
	}
}

func TestMailboxCloseRacesEnqueue(t *testing.T) {
	const producers, consumers = 4, 2
	const total = 1 << 20 // far more than the producers usually reach before Close; they stop there if Close comes late
	for _, k := range kinds {
		t.Run(k.name+": Close loses and duplicates nothing", func(t *testing.T) {
			mb := k.new()
			evicted := evictions(t, mb)
			var next, accepted atomic.Int64
			halfway := make(chan struct{})
			var once sync.Once
			var producing sync.WaitGroup
			acceptedBy := make([][]int, producers)
			for p := range producers {
				producing.Add(1)
				go func() {
					defer producing.Done()
					for {
						v := int(next.Add(1) - 1)
						if v >= total {
							return
						}
						err := enqueueRetry(mb, v)
						if errors.Is(err, crew.ErrMailboxClosed) {
							return
						}
						if !assert.NoError(t, err) {
							return
						}
						acceptedBy[p] = append(acceptedBy[p], v)
						if accepted.Add(1) == 500 {
							once.Do(func() { close(halfway) })
						}
					}
				}()
			}
			var closed atomic.Bool
			consumed := startConsumers(mb, consumers, &closed)
			<-halfway
			rest := mb.Close()
			closed.Store(true)
			producing.Wait()

			in := sorted(acceptedBy...)
			assert.Equal(t, in, sorted(append(consumed(), rest, evicted())...),
				"accepted messages must come out exactly once")
		})
	}
}

func TestUnboundedReleasesItsBufferWhenDrained(t *testing.T) {
	ctx := context.Background()
	u := crew.NewUnbounded[int]()
	assert.Equal(t, 0, u.Cap(), "no buffer before the first message")
	for i := range 1000 {
		require.NoError(t, u.Enqueue(ctx, i))
	}
	require.GreaterOrEqual(t, u.Cap(), 1000)
	for i := range 1000 {
		v, ok := u.Dequeue()
		require.True(t, ok)
		require.Equal(t, i, v)
	}
	assert.LessOrEqual(t, u.Cap(), 64, "a drained mailbox keeps at most 64 slots")

	for i := range 40 {
		require.NoError(t, u.Enqueue(ctx, i))
	}
	for range 40 {
		_, _ = u.Dequeue()
	}
	kept := u.Cap()
	assert.Positive(t, kept, "a buffer of 64 slots or fewer is kept")
	assert.LessOrEqual(t, kept, 64)
}

func TestUnboundedWrapsAroundWhileGrowing(t *testing.T) {
	ctx := context.Background()
	u := crew.NewUnbounded[int]()
	next, want := 0, 0
	// Keep the ring partly full so head moves around it before each growth.
	for round := range 12 {
		for range 3 + round*5 {
			require.NoError(t, u.Enqueue(ctx, next))
			next++
		}
		for range 2 + round*3 {
			v, ok := u.Dequeue()
			require.True(t, ok)
			require.Equal(t, want, v)
			want++
		}
		require.Equal(t, next-want, u.Len())
	}
	assert.Equal(t, slices.Collect(func(yield func(int) bool) {
		for v := want; v < next; v++ {
			if !yield(v) {
				return
			}
		}
	}), u.Close())
}

// allocsPerMessage measures the allocations of steady traffic through mb:
// bursts of depth messages in, then out.
func allocsPerMessage(mb crew.Mailbox[int], depth int) float64 {
	ctx := context.Background()
	burst := func() {
		for i := range depth {
			_ = mb.Enqueue(ctx, i)
		}
		for range depth {
			_, _ = mb.Dequeue()
		}
	}
	burst() // warm up: first buffer, pooled segments
	return testing.AllocsPerRun(100, burst) / float64(depth)
}

func TestSteadyTrafficDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop items at random")
	}
	cases := []struct {
		name  string
		mb    crew.Mailbox[int]
		depth int
	}{
		{"Unbounded at depth 64", crew.NewUnbounded[int](), 64},
		{"Unbounded bursts of 2000 regrow from pooled buffers", crew.NewUnbounded[int](), 2000},
		{"Segmented at depth 64", crew.NewSegmented[int](), 64},
		{"Segmented bursts of 2000 reuse pooled segments", crew.NewSegmented[int](), 2000},
		{"Bounded filled to capacity", crew.NewBounded[int](256, crew.Fail), 256},
		{"Priority at depth 64", crew.NewPriority(byValue), 64},
		{"Priority bursts of 2000 regrow from pooled arrays", crew.NewPriority(byValue), 2000},
		{"StablePriority at depth 64", crew.NewStablePriority(byValue), 64},
		{"Fair over 3 keys at depth 60", crew.NewFair(func(v int) int { return v % 3 }), 60},
		{"Chan filled to capacity", crew.NewChan[int](128), 128},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Zero(t, allocsPerMessage(c.mb, c.depth))
		})
	}
}

// Rounds of bursts that grow the buffer (or link segments), drain it so it
// is released, and grow it again, with several producers and consumers
// racing through each transition.
func TestMailboxGrowsAndReleasesUnderConcurrency(t *testing.T) {
	const rounds, producers, consumers, burst = 30, 3, 2, 300
	for _, k := range kinds[:2] { // Unbounded and Segmented
		t.Run(k.name, func(t *testing.T) {
			mb := k.new()
			got := make([][]int, consumers)
			for round := range rounds {
				base := round * producers * burst
				var wg sync.WaitGroup
				var taken atomic.Int64
				for p := range producers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for i := range burst {
							assert.NoError(t, mb.Enqueue(context.Background(), base+p*burst+i))
						}
					}()
				}
				for c := range consumers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for taken.Load() < producers*burst {
							if v, ok := mb.Dequeue(); ok {
								got[c] = append(got[c], v)
								taken.Add(1)
							} else {
								runtime.Gosched()
							}
						}
					}()
				}
				wg.Wait()
				require.Equal(t, 0, mb.Len())
			}
			assertExactlyOnce(t, rounds*producers*burst, got...)
		})
	}
}

// Len is read while one goroutine keeps the mailbox between 0 and 1
// message: reading two counters without a snapshot would report up to the
// number of messages that passed meanwhile.
func TestLenNeverOverstatesUnderTraffic(t *testing.T) {
	const ops, readers = 200_000, 2
	for _, k := range kinds[:7] { // the FIFO kinds
		t.Run(k.name, func(t *testing.T) {
			mb := k.new()
			var stop atomic.Bool
			var wg sync.WaitGroup
			var worst atomic.Int64
			for range readers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for !stop.Load() {
						if n := int64(mb.Len()); n > worst.Load() {
							worst.Store(n)
						}
					}
				}()
			}
			for i := range ops {
				_ = mb.Enqueue(context.Background(), i)
				_, _ = mb.Dequeue()
			}
			stop.Store(true)
			wg.Wait()
			assert.LessOrEqual(t, worst.Load(), int64(1))
		})
	}
}
