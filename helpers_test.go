package crew_test

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crewlib/crew"
)

// Helpers shared by the tests. None of them calls t.Fatal from a
// goroutine other than the test's: until reports through t only on the
// test's goroutine, and the job helpers report through channels.

// until yields until cond holds: for states that no channel announces,
// such as a Submit being blocked.
func until(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached in 10s")
		}
		runtime.Gosched()
	}
}

// gated returns a job that reports its start on started and returns err
// once release is closed.
func gated(started chan<- struct{}, release <-chan struct{}, err error) crew.Job {
	return func(context.Context) error {
		started <- struct{}{}
		<-release
		return err
	}
}

// explode panics, for tests of recovered panics and their stacks.
func explode() { panic("kaboom") }

// holdFirst returns a handler that holds job 0 until release is closed,
// after closing started, and lets every other job through.
func holdFirst() (handle func(context.Context, int) error, started, release chan struct{}) {
	started, release = make(chan struct{}), make(chan struct{})
	return func(_ context.Context, v int) error {
		if v == 0 {
			close(started)
			<-release
		}
		return nil
	}, started, release
}

// letters records dead letters.
type letters struct {
	mu  sync.Mutex
	all []crew.DeadLetter
}

func (l *letters) sink(d crew.DeadLetter) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.all = append(l.all, d)
}

func (l *letters) get() []crew.DeadLetter {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]crew.DeadLetter(nil), l.all...)
}

func (l *letters) messages() []int {
	var out []int
	for _, d := range l.get() {
		out = append(out, d.Message.(int))
	}
	return out
}

// byValue orders ints, for priority mailboxes.
func byValue(a, b int) bool { return a < b }

// drainAll dequeues until mb is empty.
func drainAll[T any](mb crew.Mailbox[T]) []T {
	var out []T
	for v, ok := mb.Dequeue(); ok; v, ok = mb.Dequeue() {
		out = append(out, v)
	}
	return out
}

// drainN dequeues up to n messages.
func drainN[T any](mb crew.Mailbox[T], n int) []T {
	out := make([]T, 0, n)
	for range n {
		v, ok := mb.Dequeue()
		if !ok {
			break
		}
		out = append(out, v)
	}
	return out
}

// A keyedJob is a job of a keyed pool or router: key, and its rank in
// its key.
type keyedJob struct {
	key, seq int
	gate     chan struct{} // if set, the job waits for it
}

func jobKey(j keyedJob) int { return j.key }

// keyOrder checks that the jobs of each key run one at a time, in the
// order of their seq.
type keyOrder struct {
	inFlight []atomic.Int32
	last     []atomic.Int64
	breaches atomic.Int64 // jobs that ran beside or before an earlier job of their key
}

func newKeyOrder(keys int) *keyOrder {
	o := &keyOrder{inFlight: make([]atomic.Int32, keys), last: make([]atomic.Int64, keys)}
	for i := range o.last {
		o.last[i].Store(-1)
	}
	return o
}

// start records that j starts; end, that it ended.
func (o *keyOrder) start(j keyedJob) {
	if o.inFlight[j.key].Add(1) != 1 || o.last[j.key].Swap(int64(j.seq)) >= int64(j.seq) {
		o.breaches.Add(1)
	}
}

func (o *keyOrder) end(j keyedJob) { o.inFlight[j.key].Add(-1) }
