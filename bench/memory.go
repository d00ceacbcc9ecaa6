package main

import (
	"context"
	"fmt"
	"runtime"
	"sync"

	"github.com/crewlib/crew"
)

// memoryScenario measures what idle actors and deep mailboxes hold.
type memoryScenario struct {
	none
	actors, depth int
	memory        *memoryResult
}

func (*memoryScenario) name() string  { return "memory" }
func (*memoryScenario) title() string { return "Memory" }

func (m *memoryScenario) configure(s settings) error {
	m.actors, m.depth = 10_000, pick(s.mode, 100_000, 1_000_000, 1_000_000)
	return nil
}

func (m *memoryScenario) run(progress func(string)) {
	x := memory(m.actors, m.depth, progress)
	m.memory = &x
}

func (r *memoryScenario) markdown(p printer) {
	m := r.memory
	if m == nil {
		return
	}
	p("Heap (and goroutine stacks) after a collection.\n\n")
	p("| what | bytes |\n|---|---|\n")
	p("| one of %d idle actors: heap beside its goroutine | %.0f |\n", m.actors, m.heapPerActor)
	p("| one of %d idle actors: its goroutine's stack | %.0f |\n", m.actors, m.stackPerActor)
	p("| one of %d bare goroutines blocked on a channel: heap (the runtime's g) | %.0f |\n", m.actors, m.heapPerGoroutine)
	p("| what an idle actor adds to its goroutine | %.0f |\n", m.heapPerActor-m.heapPerGoroutine)
	for _, k := range []string{"Unbounded", "Segmented"} {
		p("| %s: per message, %d queued ints | %.1f |\n", k, m.messages, m.perMessage[k])
		p("| %s: retained once drained | %.0f |\n", k, m.retainedAfterAll[k])
	}
	p("\n")
}

func (r *memoryScenario) targets() []target {
	m := r.memory
	if m == nil {
		return nil
	}
	extra := m.heapPerActor - m.heapPerGoroutine
	ts := []target{{"memory: an idle actor costs one goroutine plus < 1 KiB", fmt.Sprintf("%.0f bytes beside the goroutine", extra), extra < 1024}}
	for _, k := range []string{"Unbounded", "Segmented"} {
		kept := m.retainedAfterAll[k]
		ts = append(ts, target{"memory: " + k + " drained holds <= 64 slots (512 bytes of ints)", fmt.Sprintf("%.0f bytes", kept), kept <= 512})
	}
	return ts
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
