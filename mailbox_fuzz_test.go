package crew_test

import (
	"context"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/crewlib/crew"
)

// The fuzz targets drive a mailbox and a reference model (plain slices) with
// the same operations and require the same outcome at every step: the value
// and ok of each Dequeue, the error of each Enqueue, Len, and what Close
// returns. Each input byte is one operation:
//
//	op&3 == 0 or 1   enqueue (op>>2)+1 new messages, numbered in arrival order
//	op&3 == 2        dequeue (op>>2)+1 times
//	op == 0xff       close
//	op&3 == 3        dequeue once
//
// so a short input can fill several 256-message segments, drain them, close
// and keep going against the closed mailbox. Every Enqueue uses a canceled
// context: a Backpressure mailbox that would block returns ctx.Err() at once.

var canceledCtx = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()

// A model is the reference behaviour of one mailbox kind.
type model interface {
	enqueue(v int) error
	dequeue(got int) (want int, ok bool) // got is the mailbox's answer, for models that allow several
	len() int
	close() []int
}

// fuzzOps runs ops against mb and m. check runs after each operation.
func fuzzOps(t *testing.T, mb crew.Mailbox[int], m model, ops []byte, check func()) {
	next := 0
	enqueue := func() {
		v := next
		next++
		require.Equal(t, m.enqueue(v), mb.Enqueue(canceledCtx, v), "Enqueue(%d)", v)
	}
	dequeue := func() {
		got, ok := mb.Dequeue()
		want, wantOK := m.dequeue(got)
		require.Equal(t, wantOK, ok, "Dequeue ok")
		require.Equal(t, want, got, "Dequeue value")
	}
	for _, op := range ops {
		n := int(op>>2) + 1
		switch {
		case op == 0xff:
			require.Equal(t, m.close(), orNil(mb.Close()), "Close")
		case op&3 <= 1:
			for range n {
				enqueue()
			}
		case op&3 == 2:
			for range n {
				dequeue()
			}
		default:
			dequeue()
		}
		require.Equal(t, m.len(), mb.Len(), "Len")
		if check != nil {
			check()
		}
	}
	require.Equal(t, m.close(), orNil(mb.Close()), "final Close")
	require.Equal(t, 0, mb.Len())
}

func orNil(s []int) []int {
	if len(s) == 0 {
		return nil
	}
	return s
}

// fifoModel is a FIFO queue, bounded when capacity > 0.
type fifoModel struct {
	q        []int
	capacity int
	overflow crew.Overflow
	evicted  []int
	closed   bool
}

func (m *fifoModel) enqueue(v int) error {
	switch {
	case m.closed:
		return crew.ErrMailboxClosed
	case m.capacity == 0 || len(m.q) < m.capacity:
		m.q = append(m.q, v)
		return nil
	case m.overflow == crew.Fail:
		return crew.ErrMailboxFull
	case m.overflow == crew.DropNewest:
		return crew.ErrDropped
	case m.overflow == crew.DropOldest:
		m.evicted = append(m.evicted, m.q[0])
		m.q = append(m.q[1:], v)
		return nil
	}
	return context.Canceled // Backpressure with a canceled context
}

func (m *fifoModel) dequeue(int) (int, bool) {
	if len(m.q) == 0 {
		return 0, false
	}
	v := m.q[0]
	m.q = m.q[1:]
	return v, true
}

func (m *fifoModel) len() int { return len(m.q) }

func (m *fifoModel) close() []int {
	rest := orNil(m.q)
	m.q, m.closed = nil, true
	return rest
}

func FuzzUnbounded(f *testing.F) {
	f.Add([]byte{0x00, 0x02, 0xfc, 0xfe, 0x01})
	f.Fuzz(func(t *testing.T, ops []byte) {
		fuzzOps(t, crew.NewUnbounded[int](), &fifoModel{}, ops, nil)
	})
}

func FuzzSegmented(f *testing.F) {
	f.Add([]byte{0xfc, 0xfc, 0xfc, 0xfc, 0xfc, 0xfe, 0xfe, 0xfe, 0x03, 0xff, 0x00})
	f.Fuzz(func(t *testing.T, ops []byte) {
		fuzzOps(t, crew.NewSegmented[int](), &fifoModel{}, ops, nil)
	})
}

func FuzzChan(f *testing.F) {
	f.Add(uint8(3), []byte{0x10, 0x03, 0x00, 0xff, 0x00})
	f.Fuzz(func(t *testing.T, capacity uint8, ops []byte) {
		c := int(capacity%32) + 1
		fuzzOps(t, crew.NewChan[int](c), &fifoModel{capacity: c, overflow: crew.Backpressure}, ops, nil)
	})
}

func FuzzBounded(f *testing.F) {
	for policy := range uint8(4) {
		f.Add(uint8(4), policy, []byte{0x20, 0x03, 0x04, 0x0a, 0xff, 0x00})
	}
	f.Fuzz(func(t *testing.T, capacity, policy uint8, ops []byte) {
		c, o := int(capacity%32)+1, crew.Overflow(policy%4)
		b := crew.NewBounded[int](c, o)
		var evicted []int
		b.OnDrop(func(v int, reason error) {
			require.Equal(t, crew.ErrEvicted, reason)
			evicted = append(evicted, v)
		})
		m := &fifoModel{capacity: c, overflow: o}
		fuzzOps(t, b, m, ops, func() {
			require.Equal(t, m.evicted, evicted, "evicted")
			require.Equal(t, m.len() == c && !m.closed, b.Full(), "Full")
		})
	})
}

// fairModel serves keys round robin; a message's key is its value mod
// fairKeys, and values come in arrival order.
type fairModel struct {
	queues map[int][]int
	order  []int // keys with queued messages, in serving order
	closed bool
}

const fairKeys = 5

func fairKey(v int) int { return v % fairKeys }

func (m *fairModel) enqueue(v int) error {
	if m.closed {
		return crew.ErrMailboxClosed
	}
	k := fairKey(v)
	if len(m.queues[k]) == 0 {
		m.order = append(m.order, k)
	}
	m.queues[k] = append(m.queues[k], v)
	return nil
}

func (m *fairModel) dequeue(int) (int, bool) {
	if len(m.order) == 0 {
		return 0, false
	}
	k := m.order[0]
	m.order = m.order[1:]
	v := m.queues[k][0]
	if m.queues[k] = m.queues[k][1:]; len(m.queues[k]) > 0 {
		m.order = append(m.order, k)
	}
	return v, true
}

func (m *fairModel) len() int {
	n := 0
	for _, q := range m.queues {
		n += len(q)
	}
	return n
}

func (m *fairModel) close() []int {
	var rest []int
	for v, ok := m.dequeue(0); ok; v, ok = m.dequeue(0) {
		rest = append(rest, v)
	}
	m.closed = true
	return rest
}

func FuzzFair(f *testing.F) {
	f.Add([]byte{0x28, 0x03, 0x0a, 0x00, 0x07, 0xff, 0x01})
	f.Fuzz(func(t *testing.T, ops []byte) {
		mb := crew.NewFair(fairKey)
		m := &fairModel{queues: map[int][]int{}}
		fuzzOps(t, mb, m, ops, func() {
			require.Equal(t, len(m.order), mb.Keys(), "Keys")
		})
	})
}

// prioModel orders by value mod prioLevels; values grow with arrival, so
// among equal priorities the smaller value arrived first.
type prioModel struct {
	q        []int
	capacity int
	stable   bool
	closed   bool
}

const prioLevels = 3

func prioLess(a, b int) bool { return a%prioLevels < b%prioLevels }

func (m *prioModel) enqueue(v int) error {
	switch {
	case m.closed:
		return crew.ErrMailboxClosed
	case m.capacity > 0 && len(m.q) >= m.capacity:
		return crew.ErrMailboxFull
	}
	m.q = append(m.q, v)
	return nil
}

// dequeue accepts got if it is queued with the most urgent priority (and,
// for a stable mailbox, arrived first among those).
func (m *prioModel) dequeue(got int) (int, bool) {
	if len(m.q) == 0 {
		return 0, false
	}
	first := slices.MinFunc(m.q, func(a, b int) int {
		if c := a%prioLevels - b%prioLevels; c != 0 {
			return c
		}
		return a - b
	})
	want := first
	if !m.stable && got%prioLevels == first%prioLevels && slices.Contains(m.q, got) {
		want = got
	}
	m.q = slices.DeleteFunc(m.q, func(v int) bool { return v == want })
	return want, true
}

func (m *prioModel) len() int { return len(m.q) }

func (m *prioModel) close() []int {
	m.closed = true
	if !m.stable {
		// Any order within a priority is allowed: close is compared as a
		// set per level by the caller.
		return nil
	}
	rest := slices.Clone(m.q)
	slices.SortStableFunc(rest, func(a, b int) int { return a%prioLevels - b%prioLevels })
	m.q = nil
	return orNil(rest)
}

func FuzzPriority(f *testing.F) {
	f.Add(true, uint8(0), []byte{0x30, 0x03, 0x06, 0x00, 0xff, 0x00})
	f.Add(false, uint8(5), []byte{0x30, 0x03, 0x06, 0x00, 0xff, 0x00})
	f.Fuzz(func(t *testing.T, stable bool, capacity uint8, ops []byte) {
		c := int(capacity % 32) // 0: unbounded
		var p *crew.Priority[int]
		switch {
		case c == 0 && stable:
			p = crew.NewStablePriority(prioLess)
		case c == 0:
			p = crew.NewPriority(prioLess)
		case stable:
			p = crew.NewBoundedStablePriority(c, prioLess)
		default:
			p = crew.NewBoundedPriority(c, prioLess)
		}
		m := &prioModel{capacity: c, stable: stable}
		if stable {
			fuzzOps(t, p, m, ops, nil)
			return
		}
		// Unstable: Close's order within a level is free, so replay Close by
		// hand and compare it level by level.
		fuzzOps(t, unstableClose{p, m, t}, m, ops, nil)
	})
}

// unstableClose checks an unstable Priority's Close against the model itself
// (priorities non-decreasing, same messages) and reports the model's answer.
type unstableClose struct {
	*crew.Priority[int]
	m *prioModel
	t *testing.T
}

func (u unstableClose) Close() []int {
	got := u.Priority.Close()
	require.True(u.t, slices.IsSortedFunc(got, func(a, b int) int { return a%prioLevels - b%prioLevels }),
		"Close must return priority order: %v", got)
	require.Equal(u.t, sorted(u.m.q), sorted(got)) // ElementsMatch is quadratic
	u.m.q = nil
	return nil
}
