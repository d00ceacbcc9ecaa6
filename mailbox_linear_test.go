package crew_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/stretchr/testify/require"

	"github.com/crewlib/crew"
)

// Linearizability: concurrent histories of Enqueue, Dequeue, Len, Full and
// Close on each mailbox, checked by porcupine against a sequential model.
// Every operation must appear to take effect at one instant between its
// call and its return: Len exact at one instant, Dequeue seeing what Len
// counted, Close returning what Dequeue would have.

// linearHistories is how many histories each mailbox is checked on, each
// of a few clients doing a few operations: enough to find the defects this
// test was written for in CI, within a second or two per mailbox.
const linearHistories = 300

// A linearKind is a mailbox under test and the sequential model of it.
type linearKind struct {
	name     string
	make     func() crew.Mailbox[int]
	capacity int           // 0: unbounded
	overflow crew.Overflow // when full (bounded): Fail, DropNewest, DropOldest or Backpressure
	order    string        // "fifo", "priority" (values are distinct) or "fair" (key v%3)
}

func linearKinds() []linearKind {
	byValue := func(a, b int) bool { return a < b }
	return []linearKind{
		{"Unbounded", func() crew.Mailbox[int] { return crew.NewUnbounded[int]() }, 0, 0, "fifo"},
		{"Segmented", func() crew.Mailbox[int] { return crew.NewSegmented[int]() }, 0, 0, "fifo"},
		{"Bounded Fail", func() crew.Mailbox[int] { return crew.NewBounded[int](2, crew.Fail) }, 2, crew.Fail, "fifo"},
		{"Bounded DropNewest", func() crew.Mailbox[int] { return crew.NewBounded[int](2, crew.DropNewest) }, 2, crew.DropNewest, "fifo"},
		{"Bounded DropOldest", func() crew.Mailbox[int] { return crew.NewBounded[int](1, crew.DropOldest) }, 1, crew.DropOldest, "fifo"},
		{"Bounded Backpressure", func() crew.Mailbox[int] { return crew.NewBounded[int](2, crew.Backpressure) }, 2, crew.Backpressure, "fifo"},
		{"Chan", func() crew.Mailbox[int] { return crew.NewChan[int](2) }, 2, crew.Backpressure, "fifo"},
		{"Fair", func() crew.Mailbox[int] { return crew.NewFair(func(v int) int { return v % 3 }) }, 0, 0, "fair"},
		{"Priority", func() crew.Mailbox[int] { return crew.NewPriority(byValue) }, 0, 0, "priority"},
		{"StablePriority", func() crew.Mailbox[int] { return crew.NewStablePriority(byValue) }, 0, 0, "priority"},
		{"BoundedPriority", func() crew.Mailbox[int] { return crew.NewBoundedPriority(2, byValue) }, 2, crew.Fail, "priority"},
	}
}

// The operations of a history, and their outputs.
type linearOp struct {
	kind string // enqueue, dequeue, len, full, close
	v    int    // enqueue's message
}

type linearOut struct {
	err  string // enqueue: ok, full, dropped, closed, canceled
	v    int    // dequeue's message
	ok   bool   // dequeue's ok, full's result
	n    int    // len's result
	rest string // close's messages, in order
}

// linearState is the model's state, encoded as a string so that porcupine
// can compare states with ==: "closed|k:v,v;k:v" lists each key's queue in
// serving order (one key, 0, for a FIFO or priority mailbox, whose queue is
// kept sorted).
type linearState struct {
	closed bool
	keys   []int
	queues [][]int
}

func (s linearState) encode() string {
	var b strings.Builder
	b.WriteString(strconv.FormatBool(s.closed))
	for i, k := range s.keys {
		fmt.Fprintf(&b, "|%d:%v", k, s.queues[i])
	}
	return b.String()
}

func decodeLinear(str string) linearState {
	parts := strings.Split(str, "|")
	s := linearState{closed: parts[0] == "true"}
	for _, p := range parts[1:] {
		k, rest, _ := strings.Cut(p, ":")
		key, _ := strconv.Atoi(k)
		var q []int
		for _, f := range strings.Fields(strings.Trim(rest, "[]")) {
			v, _ := strconv.Atoi(f)
			q = append(q, v)
		}
		s.keys = append(s.keys, key)
		s.queues = append(s.queues, q)
	}
	return s
}

func (s linearState) len() int {
	n := 0
	for _, q := range s.queues {
		n += len(q)
	}
	return n
}

// all lists the messages in the order Dequeue would return them.
func (s linearState) all() []int {
	var out []int
	for t := s; t.len() > 0; {
		var v int
		t, v = t.take()
		out = append(out, v)
	}
	return out
}

// take removes the message Dequeue would return next; s is not empty.
func (s linearState) take() (linearState, int) {
	t := linearState{closed: s.closed, keys: slices.Clone(s.keys), queues: slices.Clone(s.queues)}
	v := t.queues[0][0]
	rest := slices.Clone(t.queues[0][1:])
	k := t.keys[0]
	t.keys, t.queues = t.keys[1:], t.queues[1:]
	if len(rest) > 0 { // a Fair key goes to the back of the line; one key stays first
		if len(t.keys) == 0 {
			t.keys, t.queues = []int{k}, [][]int{rest}
		} else {
			t.keys, t.queues = append(t.keys, k), append(t.queues, rest)
		}
	}
	return t, v
}

// put adds v, as kind orders it.
func (s linearState) put(kind linearKind, v int) linearState {
	t := linearState{closed: s.closed, keys: slices.Clone(s.keys), queues: slices.Clone(s.queues)}
	key := 0
	if kind.order == "fair" {
		key = v % 3
	}
	i := slices.Index(t.keys, key)
	if i < 0 {
		t.keys, t.queues = append(t.keys, key), append(t.queues, []int{v})
		return t
	}
	q := append(slices.Clone(t.queues[i]), v)
	if kind.order == "priority" {
		slices.Sort(q)
	}
	t.queues[i] = q
	return t
}

func (kind linearKind) model() porcupine.Model {
	return porcupine.Model{
		Init: func() any { return linearState{}.encode() },
		Step: func(state, input, output any) (bool, any) {
			s, in, out := decodeLinear(state.(string)), input.(linearOp), output.(linearOut)
			full := kind.capacity > 0 && s.len() >= kind.capacity
			switch in.kind {
			case "enqueue":
				switch {
				case s.closed:
					return out.err == "closed", state
				case !full:
					return out.err == "ok", s.put(kind, in.v).encode()
				case kind.overflow == crew.Fail:
					return out.err == "full", state
				case kind.overflow == crew.DropNewest:
					return out.err == "dropped", state
				case kind.overflow == crew.DropOldest:
					t, _ := s.take()
					return out.err == "ok", t.put(kind, in.v).encode()
				default: // Backpressure: it waits, or gives up while full
					return out.err == "canceled", state
				}
			case "dequeue":
				if s.closed || s.len() == 0 {
					return !out.ok, state
				}
				t, v := s.take()
				return out.ok && out.v == v, t.encode()
			case "len":
				return out.n == s.len(), state
			case "full":
				return out.ok == full, state
			default: // close
				if s.closed {
					return out.rest == "[]", state
				}
				return out.rest == fmt.Sprint(nonNil(s.all())), linearState{closed: true}.encode()
			}
		},
		DescribeOperation: func(input, output any) string {
			return fmt.Sprintf("%v -> %+v", input, output)
		},
	}
}

func nonNil(xs []int) []int {
	if xs == nil {
		return []int{}
	}
	return xs
}

// run records one history of clients doing ops operations each on a fresh
// mailbox, the last client closing it halfway through.
func (kind linearKind) run(seed uint64, clients, ops int) []porcupine.Operation {
	mb := kind.make()
	var clock atomic.Int64
	var mu sync.Mutex
	var history []porcupine.Operation
	var next atomic.Int64 // distinct messages, for priority order
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(seed, uint64(c)))
			for i := range ops {
				var in linearOp
				switch x := r.IntN(10); {
				case c == clients-1 && i == ops/2:
					in.kind = "close"
				case x < 4:
					in = linearOp{kind: "enqueue", v: int(next.Add(1))}
				case x < 7:
					in.kind = "dequeue"
				case x < 9:
					in.kind = "len"
				default:
					in.kind = "full"
				}
				call := clock.Add(1)
				out := kind.do(mb, in)
				ret := clock.Add(1)
				mu.Lock()
				history = append(history, porcupine.Operation{ClientId: c, Input: in, Call: call, Output: out, Return: ret})
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return history
}

func (kind linearKind) do(mb crew.Mailbox[int], in linearOp) linearOut {
	switch in.kind {
	case "enqueue":
		// A Backpressure Enqueue gives up after a while: nobody may be left
		// to make room. That bounds the test; it orders nothing.
		ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
		defer cancel()
		switch err := mb.Enqueue(ctx, in.v); {
		case err == nil:
			return linearOut{err: "ok"}
		case errors.Is(err, crew.ErrDropped):
			return linearOut{err: "dropped"}
		case errors.Is(err, crew.ErrMailboxFull):
			return linearOut{err: "full"}
		case errors.Is(err, crew.ErrMailboxClosed):
			return linearOut{err: "closed"}
		default:
			return linearOut{err: "canceled"}
		}
	case "dequeue":
		v, ok := mb.Dequeue()
		return linearOut{v: v, ok: ok}
	case "len":
		return linearOut{n: mb.Len()}
	case "full":
		f, ok := mb.(interface{ Full() bool })
		return linearOut{ok: ok && f.Full()}
	default:
		return linearOut{rest: fmt.Sprint(nonNil(mb.Close()))}
	}
}

func TestEveryMailboxIsLinearizable(t *testing.T) {
	histories := linearHistories
	if testing.Short() {
		histories = 30
	}
	for _, kind := range linearKinds() {
		t.Run(kind.name, func(t *testing.T) {
			t.Parallel()
			model := kind.model()
			for h := range histories {
				clients := 2 + h%3
				history := kind.run(uint64(h), clients, 8)
				switch porcupine.CheckOperationsTimeout(model, history, 10*time.Second) {
				case porcupine.Ok:
				case porcupine.Unknown: // the check gave up: the history proves nothing
					t.Fatalf("history %d: porcupine could not decide whether it is linearizable", h)
				default:
					var lines []string
					for _, op := range history {
						lines = append(lines, fmt.Sprintf("client %d [%d,%d] %v -> %+v", op.ClientId, op.Call, op.Return, op.Input, op.Output))
					}
					t.Fatalf("history %d is not linearizable:\n%s", h, strings.Join(lines, "\n"))
				}
			}
		})
	}
}

// The two races the histories above find only now and then, as loops that
// find them at once.

func TestAFullDropOldestMailboxNeverLooksLessThanFull(t *testing.T) {
	b := crew.NewBounded[int](1, crew.DropOldest)
	require.NoError(t, b.Enqueue(context.Background(), 0))
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 1; !stop.Load(); i++ {
			_ = b.Enqueue(context.Background(), i) // evicts the one before
		}
	})
	for range 200_000 {
		if n, full := b.Len(), b.Full(); n != 1 || !full {
			stop.Store(true)
			wg.Wait()
			t.Fatalf("a full mailbox that is never drained read Len %d, Full %v", n, full)
		}
	}
	stop.Store(true)
	wg.Wait()
}

func TestSegmentedDequeueFindsWhatLenCounted(t *testing.T) {
	s := crew.NewSegmented[int]()
	const n = 200_000
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range n {
			_ = s.Enqueue(context.Background(), i)
		}
	})
	for got := 0; got < n; {
		if s.Len() == 0 {
			continue
		}
		// The only consumer: a message Len counted is there to take.
		v, ok := s.Dequeue()
		if !ok {
			wg.Wait()
			t.Fatalf("Len counted a message, and the next Dequeue found none (after %d)", got)
		}
		require.Equal(t, got, v)
		got++
	}
	wg.Wait()
}
