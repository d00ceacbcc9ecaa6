package crew_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/crewlib/crew"
)

// benchCapacity bounds the channel baseline and the bounded mailboxes.
const benchCapacity = 1024

var benchMailboxes = []struct {
	name string
	new  func() crew.Mailbox[int]
}{
	{"Unbounded", func() crew.Mailbox[int] { return crew.NewUnbounded[int]() }},
	{"Segmented", func() crew.Mailbox[int] { return crew.NewSegmented[int]() }},
	{"Bounded", func() crew.Mailbox[int] { return crew.NewBounded[int](benchCapacity, crew.Backpressure) }},
	// The same with room to spare: the cost of the ring without the
	// Backpressure waits that a full mailbox adds.
	{"BoundedRoomy", func() crew.Mailbox[int] { return crew.NewBounded[int](1<<22, crew.Backpressure) }},
	{"Chan", func() crew.Mailbox[int] { return crew.NewChan[int](benchCapacity) }},
	{"Fair", func() crew.Mailbox[int] { return crew.NewFair(func(v int) int { return v & 7 }) }},
	{"Priority", func() crew.Mailbox[int] { return crew.NewPriority(byValue) }},
	{"StablePriority", func() crew.Mailbox[int] { return crew.NewStablePriority(byValue) }},
}

// BenchmarkMailbox moves b.N messages from 1 or 4 producers to one consumer,
// so ns/op is the cost of one message. The consumer drains the mailbox and,
// when it finds it empty, waits on a cap-1 signal channel that each producer
// pokes (without blocking) after each Enqueue: the way an actor is woken.
// The "chan" baseline is a plain buffered channel of the same capacity as
// the bounded mailboxes, with a blocking send and receive.
func BenchmarkMailbox(b *testing.B) {
	for _, producers := range []int{1, 4} {
		b.Run(fmt.Sprintf("%dP1C/chan", producers), func(b *testing.B) {
			benchChannel(b, producers)
		})
		for _, mb := range benchMailboxes {
			b.Run(fmt.Sprintf("%dP1C/%s", producers, mb.name), func(b *testing.B) {
				benchMailbox(b, mb.new(), producers)
			})
		}
	}
}

// produce starts producers goroutines that call send for b.N messages in
// all, and returns a function that waits for them.
func produce(b *testing.B, producers int, send func(i int)) (wait func()) {
	var wg sync.WaitGroup
	for p := range producers {
		n := b.N / producers
		if p == 0 {
			n += b.N % producers
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range n {
				send(i)
			}
		}()
	}
	return wg.Wait
}

func benchChannel(b *testing.B, producers int) {
	b.ReportAllocs()
	ch := make(chan int, benchCapacity)
	b.ResetTimer()
	wait := produce(b, producers, func(i int) { ch <- i })
	for range b.N {
		<-ch
	}
	wait()
}

func benchMailbox(b *testing.B, mb crew.Mailbox[int], producers int) {
	consume(b, mb, producers)
}

// consume moves b.N messages from producers goroutines through mb to the
// calling goroutine, as BenchmarkMailbox says, and returns how many times
// the consumer found the mailbox empty with no signal pending, and so
// parked.
func consume(b *testing.B, mb crew.Mailbox[int], producers int) (parks int) {
	b.ReportAllocs()
	ctx := context.Background()
	signal := make(chan struct{}, 1)
	b.ResetTimer()
	wait := produce(b, producers, func(i int) {
		if err := mb.Enqueue(ctx, i); err != nil {
			panic(err) // b.Error would leave the consumer waiting
		}
		select {
		case signal <- struct{}{}:
		default:
		}
	})
	for got := 0; got < b.N; {
		if _, ok := mb.Dequeue(); ok {
			got++
			continue
		}
		select {
		case <-signal:
			continue
		default:
		}
		parks++
		<-signal
	}
	wait()
	return parks
}

// BenchmarkMailboxRoundTrip enqueues and dequeues one message on a single
// goroutine: the bare cost of the two operations, without contention or
// goroutine wake-ups, next to a send and receive on a buffered channel.
func BenchmarkMailboxRoundTrip(b *testing.B) {
	ctx := context.Background()
	b.Run("chan", func(b *testing.B) {
		b.ReportAllocs()
		ch := make(chan int, benchCapacity)
		for i := range b.N {
			ch <- i
			<-ch
		}
	})
	for _, c := range benchMailboxes {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			mb := c.new()
			for i := range b.N {
				_ = mb.Enqueue(ctx, i)
				_, _ = mb.Dequeue()
			}
		})
	}
}

// BenchmarkMailboxDrainRefill is the cycle of a mailbox drained after every
// message, as an idle actor's is: an Enqueue, the Dequeue that takes the
// message, and the Dequeue that finds the mailbox empty, on one goroutine.
// A mailbox that gives its memory back when drained pays for it here.
func BenchmarkMailboxDrainRefill(b *testing.B) {
	ctx := context.Background()
	for _, c := range benchMailboxes {
		if c.name == "BoundedRoomy" {
			continue // the same ring as Bounded, whose 1<<22 slots would be the cost here
		}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			mb := c.new()
			for i := range b.N {
				_ = mb.Enqueue(ctx, i)
				_, _ = mb.Dequeue()
				if _, ok := mb.Dequeue(); ok {
					b.Fatal("a drained mailbox gave a message")
				}
			}
		})
	}
}

// BenchmarkBoundedTurns isolates what a full Bounded costs one producer:
// not cache lines but turns. The producer fills the ring and blocks. The
// goroutine a Dequeue or a signal wakes is readied on the waker's own CPU,
// and an idle CPU takes tens of microseconds to wake and take it from
// there (on these 2-CPU virtual machines; a 1024-slot ring lasts about
// 10). So the producer and the consumer take turns, the consumer draining
// the ring and parking, the producer refilling it, rather than running
// side by side as on an Unbounded, whose producer never waits. parks/kmsg
// counts the consumer's parks per 1000 messages: one per ring of 256 or
// 1024 slots, which makes ns/op the sum of both sides' costs, near
// "turns" (a ring's Enqueues, then its Dequeues, on one goroutine), not
// the larger of the two. A ring that holds what the producer writes while
// a woken goroutine waits for a CPU (16384 slots here) keeps them side by
// side.
func BenchmarkBoundedTurns(b *testing.B) {
	ctx := context.Background()
	for _, c := range []int{256, 1024, 16384, 0} {
		name := fmt.Sprintf("Bounded%d", c)
		if c == 0 {
			name = "Unbounded"
		}
		b.Run(name, func(b *testing.B) {
			var mb crew.Mailbox[int] = crew.NewUnbounded[int]()
			if c > 0 {
				mb = crew.NewBounded[int](c, crew.Backpressure)
			}
			b.ReportMetric(float64(consume(b, mb, 1))/float64(b.N)*1000, "parks/kmsg")
		})
	}
	b.Run("turns", func(b *testing.B) {
		mb := crew.NewBounded[int](1024, crew.Backpressure)
		for n := 0; n < b.N; n += 1024 {
			for i := range min(1024, b.N-n) {
				_ = mb.Enqueue(ctx, i)
			}
			for range min(1024, b.N-n) {
				_, _ = mb.Dequeue()
			}
		}
	})
}
