package main

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/crewlib/crew"
	"gonum.org/v1/plot/vg"
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
	runs                   []float64 // each run's ns/msg, for the advice
}

// mailboxesScenario moves messages from producers to one consumer through
// each mailbox type, alone, then beside one CPU-bound process per CPU.
type mailboxesScenario struct {
	none
	mailboxMsgs, runs int
	mailboxes         []mailboxResult
}

func (*mailboxesScenario) name() string  { return "mailboxes" }
func (*mailboxesScenario) title() string { return "Mailboxes" }

func (m *mailboxesScenario) configure(s settings) error {
	m.mailboxMsgs, m.runs = pick(s.mode, 100_000, 600_000, 1_000_000), s.runsFor(3, 5, 5)
	return nil
}

func (m *mailboxesScenario) run(progress func(string)) {
	alongside(func(loaded bool) {
		for _, p := range fanIn {
			m.mailboxes = append(m.mailboxes, mailboxes(p, loaded, m.mailboxMsgs, m.runs,
				func(what string) { progress(fmt.Sprintf("%dP1C%s, %s", p, withLoad(loaded), what)) })...)
		}
	})
}

// fanIn is the producers of the mailbox and actor scenarios.
var fanIn = []int{1, 4, 8}

// alongside calls measure alone, then beside one CPU-bound process per
// CPU, started for it.
func alongside(measure func(loaded bool)) {
	measure(false)
	stop := startLoad()
	defer stop()
	measure(true)
}

// mailboxes moves msgs messages from producers goroutines to one consumer
// through each mailbox type, the consumer waiting on a signal channel of
// capacity 1 when it finds the mailbox empty, as an actor does, next to a
// buffered channel of 1024; median of runs. loaded says whether the
// caller started CPU-bound processes beside it.
func mailboxes(producers int, loaded bool, msgs, runs int, progress func(string)) []mailboxResult {
	kinds := mailboxKinds()
	names := append([]string{chanMailboxName}, make([]string, len(kinds))...)
	for i, k := range kinds {
		names[i+1] = k.name
	}
	costs := perMessage(names, msgs, runs, progress, func(i int) time.Duration {
		if i == 0 {
			return throughChannel(producers, msgs)
		}
		return throughMailbox(kinds[i-1].make(), producers, msgs)
	})
	out := make([]mailboxResult, len(names))
	for i, name := range names {
		out[i] = mailboxResult{name, producers, loaded, costs[i].ns, costs[i].allocs, costs[i].runs}
	}
	return out
}

// msgCost is one contender's median time and allocations per message, and
// each run's time.
type msgCost struct {
	ns, allocs float64
	runs       []float64
}

// perMessage interleaves names runs times, calling through(i), which moves
// msgs messages through the i'th, and returns each one's cost per message.
func perMessage(names []string, msgs, runs int, progress func(string), through func(i int) time.Duration) []msgCost {
	type run struct{ ns, allocs float64 }
	got := interleave(runs, names, progress, each(func(i int) run {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		elapsed := through(i)
		runtime.ReadMemStats(&after)
		return run{float64(elapsed.Nanoseconds()) / float64(msgs), float64(after.Mallocs-before.Mallocs) / float64(msgs)}
	}))
	out := make([]msgCost, len(names))
	for i := range names {
		ns := column(got[i], func(x run) float64 { return x.ns })
		out[i] = msgCost{medianKept(ns), medianOf(got[i], func(x run) float64 { return x.allocs }), ns}
	}
	return out
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

func (r *mailboxesScenario) mailboxOf(name string, producers int, loaded bool) mailboxResult {
	return find(r.mailboxes, func(m mailboxResult) bool {
		return m.name == name && m.producers == producers && m.loaded == loaded
	})
}

func (r *mailboxesScenario) markdown(p printer) {
	p("%d messages from P producers to one consumer, which waits on a signal channel of capacity 1 when it finds the mailbox empty (as an actor does); a buffered channel of 1024 as the baseline; median of %s, contenders interleaved run by run. With load, one CPU-bound process per CPU runs beside the measurement.\n\n", r.mailboxMsgs, plural(r.runs, "run"))
	p("| mailbox | producers | load | ns/msg | allocs/msg | vs buffered chan |\n|---|---|---|---|---|---|\n")
	for _, m := range r.mailboxes {
		base := r.mailboxOf(chanMailboxName, m.producers, m.loaded)
		p("| %s | %d | %s | %.1f | %.3f | %.2fx |\n", m.name, m.producers, loadName(m.loaded), m.nsPerMsg, m.allocsPerMsg, m.nsPerMsg/base.nsPerMsg)
	}
	p("\n")
}

func (r *mailboxesScenario) charts() []chart {
	return chartIf(len(r.mailboxes) > 0, r.chartTitle(), "mailboxes.png", r.chart)
}

func (r *mailboxesScenario) chartTitle() string {
	return "Mailboxes: time per message over a buffered channel's (1024), one consumer"
}

// chart draws each mailbox's time per message over the buffered
// channel's, a panel per count of producers, alone and with load.
func (r *mailboxesScenario) chart(file string) error {
	d := dotChart{title: r.chartTitle(), xLabel: "x buffered chan (1024), log scale", ref: 1, log: true,
		label: ratioLabel, width: 10 * vg.Inch}
	type setting struct {
		producers int
		loaded    bool
	}
	var settings []setting
	for _, m := range r.mailboxes {
		if !slices.Contains(d.names, m.name) {
			d.names = append(d.names, m.name)
		}
		if x := (setting{m.producers, m.loaded}); !slices.Contains(settings, x) {
			settings = append(settings, x)
		}
	}
	for _, x := range settings {
		title := "1 producer"
		if x.producers > 1 {
			title = fmt.Sprintf("%d producers", x.producers)
		}
		if x.loaded {
			title += ", with load"
		}
		d.panels = append(d.panels, ratioPanel(title, d.names, chanMailboxName,
			func(name string) float64 { return r.mailboxOf(name, x.producers, x.loaded).nsPerMsg }))
	}
	return d.save(file)
}
