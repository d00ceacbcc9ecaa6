package main

import (
	"context"
	"runtime"
	"sync"
	"time"

	"github.com/crewlib/crew"
)

// A mailboxKind makes one mailbox type under comparison.
type mailboxKind struct {
	name string
	make func() crew.Mailbox[int]
}

func byValue(a, b int) bool { return a < b }

func mailboxKinds() []mailboxKind {
	return []mailboxKind{
		{"Unbounded", func() crew.Mailbox[int] { return crew.NewUnbounded[int]() }},
		{"Segmented", func() crew.Mailbox[int] { return crew.NewSegmented[int]() }},
		{"Bounded(1024, Backpressure)", func() crew.Mailbox[int] { return crew.NewBounded[int](1024, crew.Backpressure) }},
		{"Fair (16 keys)", func() crew.Mailbox[int] { return crew.NewFair(func(v int) int { return v % 16 }) }},
		{"Priority", func() crew.Mailbox[int] { return crew.NewPriority(byValue) }},
		{"StablePriority", func() crew.Mailbox[int] { return crew.NewStablePriority(byValue) }},
		{"Chan(1024)", func() crew.Mailbox[int] { return crew.NewChan[int](1024) }},
	}
}

// mailboxResult is the cost of one message through one mailbox type.
type mailboxResult struct {
	name                   string
	producers              int
	loaded                 bool // beside one CPU-bound process per CPU
	nsPerMsg, allocsPerMsg float64
}

// mailboxes moves msgs messages from producers goroutines to one consumer
// through each mailbox type, the consumer waiting on a signal channel of
// capacity 1 when it finds the mailbox empty, as an actor does, next to a
// buffered channel of 1024; median of runs. loaded says whether the
// caller started CPU-bound processes beside it.
func mailboxes(producers int, loaded bool, msgs, runs int, progress func(string)) []mailboxResult {
	kinds := mailboxKinds()
	names := append([]string{"buffered chan (1024)"}, make([]string, len(kinds))...)
	for i, k := range kinds {
		names[i+1] = k.name
	}
	ns, allocs := interleave(names, msgs, runs, progress, func(i int) time.Duration {
		if i == 0 {
			return throughChannel(producers, msgs)
		}
		return throughMailbox(kinds[i-1].make(), producers, msgs)
	})
	out := make([]mailboxResult, len(names))
	for i, name := range names {
		out[i] = mailboxResult{name, producers, loaded, ns[i], allocs[i]}
	}
	return out
}

// interleave measures each of names runs times, all of them once per run
// in turn, by calling through(i), which moves msgs messages through the
// i'th; it returns each one's median time and allocations per message.
func interleave(names []string, msgs, runs int, progress func(string), through func(i int) time.Duration) (ns, allocs []float64) {
	nss := make([][]float64, len(names))
	allocss := make([][]float64, len(names))
	for range runs {
		for i, name := range names {
			progress(name)
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			elapsed := through(i)
			runtime.ReadMemStats(&after)
			nss[i] = append(nss[i], float64(elapsed.Nanoseconds())/float64(msgs))
			allocss[i] = append(allocss[i], float64(after.Mallocs-before.Mallocs)/float64(msgs))
		}
	}
	ns, allocs = make([]float64, len(names)), make([]float64, len(names))
	for i := range names {
		ns[i], allocs[i] = median(nss[i]), median(allocss[i])
	}
	return ns, allocs
}

// split runs producers goroutines, each sending its share of msgs.
func split(producers, msgs int, send func(first, n int)) *sync.WaitGroup {
	var wg sync.WaitGroup
	for p := range producers {
		n := msgs / producers
		first := p * n
		if p == producers-1 {
			n = msgs - first
		}
		wg.Go(func() { send(first, n) })
	}
	return &wg
}

func throughChannel(producers, msgs int) time.Duration {
	ch := make(chan int, 1024)
	start := time.Now()
	wg := split(producers, msgs, func(first, n int) {
		for v := first; v < first+n; v++ {
			ch <- v
		}
	})
	for range msgs {
		<-ch
	}
	elapsed := time.Since(start)
	wg.Wait()
	return elapsed
}

func throughMailbox(mb crew.Mailbox[int], producers, msgs int) time.Duration {
	ctx := context.Background()
	signal := make(chan struct{}, 1)
	start := time.Now()
	wg := split(producers, msgs, func(first, n int) {
		for v := first; v < first+n; v++ {
			if err := mb.Enqueue(ctx, v); err != nil {
				panic(err)
			}
			select {
			case signal <- struct{}{}:
			default:
			}
		}
	})
	for got := 0; got < msgs; {
		if _, ok := mb.Dequeue(); ok {
			got++
			continue
		}
		<-signal
	}
	elapsed := time.Since(start)
	wg.Wait()
	mb.Close()
	return elapsed
}

// memoryResult reports what idle actors and deep mailboxes cost.
type memoryResult struct {
	actors           int
	heapPerActor     float64 // beside the goroutine's stack
	heapPerGoroutine float64 // of a bare goroutine blocked on a channel
	stackPerActor    float64
	messages         int
	perMessage       map[string]float64 // bytes per queued message
	retainedAfterAll map[string]float64 // bytes still held once drained
}

// heap returns the bytes the heap holds after a collection, and those the
// goroutine stacks hold.
func heap() (heap, stacks float64) {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return float64(m.HeapAlloc), float64(m.StackInuse)
}

// memory spawns actors idle actors, and fills an Unbounded and a Segmented
// mailbox with msgs messages, then drains them.
func memory(actors, msgs int, progress func(string)) memoryResult {
	res := memoryResult{actors: actors, messages: msgs,
		perMessage: map[string]float64{}, retainedAfterAll: map[string]float64{}}

	// Mailboxes first: the actors' goroutines, once stopped, are freed
	// lazily and would blur the small figures of a drained mailbox.
	for _, k := range mailboxKinds()[:2] { // Unbounded, Segmented
		progress(k.name + " holding messages")
		base, _ := heap()
		mb := k.make()
		for v := range msgs {
			_ = mb.Enqueue(context.Background(), v)
		}
		full, _ := heap()
		res.perMessage[k.name] = (full - base) / float64(msgs)
		for {
			if _, ok := mb.Dequeue(); !ok {
				break
			}
		}
		drained, _ := heap()
		res.retainedAfterAll[k.name] = drained - base
		runtime.KeepAlive(mb)
	}
	progress("idle goroutines")
	baseHeap, _ := heap()
	park := make(chan struct{})
	var parked sync.WaitGroup
	for range actors {
		parked.Go(func() { <-park })
	}
	h, _ := heap()
	res.heapPerGoroutine = (h - baseHeap) / float64(actors)
	close(park)
	parked.Wait()

	progress("idle actors")
	ctx, cancel := context.WithCancel(context.Background())
	baseHeap, baseStacks := heap()
	refs := make([]*crew.Ref[int], actors)
	for i := range refs {
		refs[i] = crew.Spawn(ctx, func(context.Context, int) error { return nil })
	}
	h, st := heap()
	res.heapPerActor = (h - baseHeap) / float64(actors)
	res.stackPerActor = (st - baseStacks) / float64(actors)
	cancel()
	for _, r := range refs {
		<-r.Done()
	}
	refs = nil

	return res
}
