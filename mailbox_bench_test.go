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

// shares splits n messages over producers.
func shares(n, producers int) []int {
	s := make([]int, producers)
	for p := range s {
		s[p] = n / producers
	}
	s[0] += n % producers
	return s
}

func benchChannel(b *testing.B, producers int) {
	b.ReportAllocs()
	ch := make(chan int, benchCapacity)
	var wg sync.WaitGroup
	b.ResetTimer()
	for _, n := range shares(b.N, producers) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range n {
				ch <- i
			}
		}()
	}
	for range b.N {
		<-ch
	}
	wg.Wait()
}

func benchMailbox(b *testing.B, mb crew.Mailbox[int], producers int) {
	b.ReportAllocs()
	ctx := context.Background()
	signal := make(chan struct{}, 1)
	var wg sync.WaitGroup
	b.ResetTimer()
	for _, n := range shares(b.N, producers) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range n {
				if err := mb.Enqueue(ctx, i); err != nil {
					panic(err) // b.Error would leave the consumer waiting
				}
				select {
				case signal <- struct{}{}:
				default:
				}
			}
		}()
	}
	for got := 0; got < b.N; {
		if _, ok := mb.Dequeue(); ok {
			got++
			continue
		}
		<-signal
	}
	wg.Wait()
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
