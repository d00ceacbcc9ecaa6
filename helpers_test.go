package crew_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crewlib/crew"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Helpers shared by the tests. None of them calls t.Fatal from a
// goroutine other than the test's: until reports through t only on the
// test's goroutine, and the job helpers report through channels.

// until yields until cond holds: for states that no channel announces and
// that are reached while other goroutines still run, such as a count of
// jobs done while a submitter goes on. A state in which every goroutine is
// blocked, such as a Submit waiting for room, is reached with
// synctest.Wait inside a bubble instead.
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

// Helpers of the batch tests. The time limit below orders nothing: it only
// turns a hang, which a bug would cause, into a failure. Inside a
// testing/synctest bubble it is the bubble's clock, which moves only once
// every goroutine of the bubble is blocked: a timeout then means a deadlock.

const batchPatience = 5 * time.Second

// inBackground runs f on a goroutine and returns the channel of its result.
func inBackground(f func() error) <-chan error {
	ch := make(chan error, 1)
	go func() { ch <- f() }()
	return ch
}

// A meeting holds each job that arrives until n of them have: n jobs that
// all return have run at the same time. A job that waits too long gives up
// and counts in missed, so that a bug fails the test instead of hanging it.
type meeting struct {
	n       int32
	arrived atomic.Int32
	all     chan struct{}
	missed  atomic.Int32
}

func newMeeting(n int) *meeting { return &meeting{n: int32(n), all: make(chan struct{})} }

func (m *meeting) arrive() {
	if m.arrived.Add(1) == m.n {
		close(m.all)
	}
	select {
	case <-m.all:
	case <-time.After(batchPatience):
		m.missed.Add(1)
	}
}

// highWater tracks how many jobs run at once, and the most that ever did.
type highWater struct{ now, max atomic.Int32 }

func (h *highWater) enter() {
	n := h.now.Add(1)
	for {
		m := h.max.Load()
		if n <= m || h.max.CompareAndSwap(m, n) {
			return
		}
	}
}

func (h *highWater) exit() { h.now.Add(-1) }

// runLog records the order in which jobs run.
type runLog struct {
	mu    sync.Mutex
	names []string
}

func (l *runLog) job(name string) crew.Job {
	return func(context.Context) error {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.names = append(l.names, name)
		return nil
	}
}

func (l *runLog) get() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.names...)
}

// counted returns a job that adds one to n.
func counted(n *atomic.Int64) crew.Job {
	return func(context.Context) error {
		n.Add(1)
		return nil
	}
}

// failsWith returns a job that returns err.
func failsWith(err error) crew.Job { return func(context.Context) error { return err } }

// panicsWithCrewPrefix checks that f panics with a message that starts with
// "crew:".
func panicsWithCrewPrefix(t *testing.T, f func()) {
	t.Helper()
	var (
		v        any
		panicked = true
	)
	func() {
		defer func() { v = recover() }()
		f()
		panicked = false
	}()
	require.True(t, panicked, "it must panic")
	msg := fmt.Sprint(v)
	assert.True(t, strings.HasPrefix(msg, "crew:"), "the panic %q must start with \"crew:\"", msg)
}

// gateFor returns a gate for jobs to wait on, which the test opens by
// closing it. If the test ends without opening it (a check failed first),
// it is opened then, so that no job stays blocked into the next tests.
func gateFor(t *testing.T) chan struct{} {
	gate := make(chan struct{})
	t.Cleanup(func() {
		select {
		case <-gate: // opened already: a gate carries no values
		default:
			close(gate)
		}
	})
	return gate
}
