package main

import (
	"fmt"
	"math"
	"time"

	"gonum.org/v1/plot/vg"

	"github.com/crewlib/crew"
)

// The ordered scenario's targets: with no-op jobs at crew's default window,
// each crew form within orderedHandLimit of the hand-written pipeline's
// time per item and orderedConcSpeedup times as fast as conc's stream;
// with uneven jobs at 16 times the workers, its total time within
// orderedUnorderedLimit of the unordered pool's; with a slow first input,
// a peak heap at 16 times the workers under orderedHeapShare of what every
// result would hold, growing with the window; at most orderedAllocLimit
// allocations of crew's own per item.
const (
	orderedHandLimit      = 1.2
	orderedConcSpeedup    = 2
	orderedUnorderedLimit = 1.05
	orderedHeapShare      = 0.1
	orderedAllocLimit     = 1
)

// orderedOf returns the figures of form at window with job, or a zero
// result.
func (o *orderedReport) orderedOf(form string, window int, job string) orderedResult {
	return find(o.results, func(x orderedResult) bool { return x.form == form && x.window == window && x.job == job })
}

// heapOf returns the heap of form at window, or a zero one.
func (o *orderedReport) heapOf(form string, window int) orderedHeap {
	return find(o.heap, func(x orderedHeap) bool { return x.form == form && x.window == window })
}

// handFor returns the hand-written pipeline's figures that x is compared
// with: at x's window; for conc's stream, at one input per worker, the
// window nearest its own; for the unordered pool, at the largest window.
func (o *orderedReport) handFor(x orderedResult) orderedResult {
	w := x.window
	switch x.form {
	case orderedConcName:
		w = orderedWindowsPerWorker[0] * o.workers
	case orderedUnorderedName:
		w = orderedWindowsPerWorker[len(orderedWindowsPerWorker)-1] * o.workers
	}
	return o.orderedOf(orderedHandName, w, x.job)
}

// markdown writes the ordered scenario's section with p: the time
// per item, to the first result and the allocations, then the heap with a
// slow first input.
func (r *orderedScenario) markdown(p printer) {
	o := r.ordered
	if o == nil {
		return
	}
	w := o.workers
	p("Read records, process them in parallel, and consume the results in input order, each as soon as it and every result before it are done. %d inputs per contender and run with no-op jobs, which return their input, and %d with uneven jobs, %.0f%% sleeping %v and %.0f%% %v (time.Sleep took %v and %v here, the medians of 50 measured at the start), drawn with the run's seed, the same for every contender within the run; %d workers. "+
		"Each contender's consumer checks every result against its input, in order. %s ranges over MapSeq's results; %s submits a task per input, a closure made per input as users write it, whose callback (a closure per result) consumes the result; %s is conc's stream.New().WithMaxGoroutines(%d), whose window is fixed at workers+1 = %d; "+
		"the %s is a producer goroutine sending indexes to the workers over a channel of %d, bounded by a semaphore of window tokens, the workers sending each index and result to the consumer, which keeps them in a ring of window slots and consumes it in order (no allocation per input); the %s runs a NewGroup job per input that writes its result into a slice, consumed once Wait returns, so its first result is not timed. "+
		"The windows are %s times the workers; %dx is crew's default. Time per item from the start, pool included, to the last result consumed; first result from the start to the first result consumed; allocations per item with no-op jobs, from runtime.MemStats, set-up and tear-down included. %s, contenders interleaved run by run, a collection before each; each figure is the median over the runs.\n\n",
		o.noopItems, o.unevenItems, (1-orderedLongRate)*100, orderedShortJob, orderedLongRate*100, orderedLongJob,
		o.sleptShort.Round(10*time.Microsecond), o.sleptLong.Round(10*time.Microsecond), w,
		orderedMapSeqName, orderedStreamName, orderedConcName, w, w+1,
		orderedHandName, w, orderedUnorderedName,
		joinInts(orderedWindowsPerWorker), crew.DefaultWindowPerWorker, plural(o.runs, "run"))
	p("| contender | no-op ns/item | no-op vs hand-written | uneven ns/item | uneven vs unordered pool | first result, no-op | first result, uneven | allocs/item, no-op |\n|---|---|---|---|---|---|---|---|\n")
	unordered := o.orderedOf(orderedUnorderedName, 0, orderedUneven)
	for _, x := range o.results {
		if x.job != orderedNoop {
			continue
		}
		u := o.orderedOf(x.form, x.window, orderedUneven)
		first, firstUneven := "—", "—"
		if x.window > 0 {
			first, firstUneven = shortDuration(x.first), shortDuration(u.first)
		}
		p("| %s | %.0f | %s | %.0f | %.2fx | %s | %s | %.3f |\n", orderedName(x.form, x.window, w), x.nsPerItem, orderedVsHand(x, o.handFor(x)),
			u.nsPerItem, u.nsPerItem/unordered.nsPerItem, first, firstUneven, x.allocsPerItem)
	}
	p("\n")
	p("\"vs hand-written\" is against the %s at the same window (%s: at %d, the nearest; %s: at %d). With its tasks and callbacks made before the count, %s allocates %.3f times per item of its own at its default window (%d).\n\n",
		orderedHandName, orderedConcName, orderedWindowsPerWorker[0]*w, orderedUnorderedName, orderedWindowsPerWorker[len(orderedWindowsPerWorker)-1]*w,
		orderedStreamName, o.streamOwnAllocs, crew.DefaultWindowPerWorker*w)
	if len(o.heap) == 0 {
		return
	}
	p("### Heap with a slow first input\n\n")
	p("%d inputs: the first sleeps %v, the others are no-op; each result is a %d-byte slice that the job allocates, holding its index, which the consumer checks. The heap's objects, live and not yet swept (runtime/metrics %s), are read every %v by a sampler goroutine, and by the consumer as the first result comes; figures are over their level after a collection just before the run. "+
		"While the first input runs, a stream holds the results done behind it, at most a window's. Over the whole run, the heap also holds results consumed and not yet collected, up to the collector's goal whatever the window. Every result would hold %s. %s; each figure is the median over the runs.\n\n",
		o.heapItems, o.stall, orderedPayload, "/memory/classes/heap/objects:bytes", orderedHeapEvery, kib(float64(o.heapItems*orderedPayload)), plural(o.heapRuns, "run"))
	p("| contender | peak while the first input runs | per window slot | peak over the whole run |\n|---|---|---|---|\n")
	for _, x := range o.heap {
		p("| %s | %s | %.0f bytes | %s |\n", orderedName(x.form, x.window, w), kib(x.held), x.held/float64(x.window), kib(x.peaked))
	}
	p("\n")
}

// orderedVsHand is x's time per item over the hand-written pipeline's h.
func orderedVsHand(x, h orderedResult) string {
	if h.nsPerItem == 0 {
		return "—"
	}
	return fmt.Sprintf("%.2fx", x.nsPerItem/h.nsPerItem)
}

// shortDuration writes d in µs under a millisecond, else in ms.
func shortDuration(d time.Duration) string {
	if d < time.Millisecond {
		return fmt.Sprintf("%.1f µs", float64(d)/float64(time.Microsecond))
	}
	return ms2(d)
}

// kib writes bytes in KiB.
func kib(bytes float64) string { return fmt.Sprintf("%.0f KiB", bytes/1024) }

// targets checks the ordered scenario's figures against crew's
// targets, if r has them.
func (r *orderedScenario) targets() []target {
	o := r.ordered
	if o == nil {
		return nil
	}
	var ts []target
	add := func(what, measured string, met bool) { ts = append(ts, target{what, measured, met}) }
	def := crew.DefaultWindowPerWorker * o.workers
	wide := orderedWindowsPerWorker[len(orderedWindowsPerWorker)-1] * o.workers
	forms := []string{orderedMapSeqName, orderedStreamName}
	for _, form := range forms {
		c, h := o.orderedOf(form, def, orderedNoop), o.orderedOf(orderedHandName, def, orderedNoop)
		if c.nsPerItem > 0 && h.nsPerItem > 0 {
			x := c.nsPerItem / h.nsPerItem
			add(fmt.Sprintf("ordered, no-op, window %dx: %s <= %gx the hand-written ordered pipeline per item", crew.DefaultWindowPerWorker, form, orderedHandLimit),
				fmt.Sprintf("%.2fx (crew %.0f vs hand-written %.0f ns/item)", x, c.nsPerItem, h.nsPerItem), x <= orderedHandLimit)
		}
	}
	for _, form := range forms {
		c, cc := o.orderedOf(form, def, orderedNoop), o.orderedOf(orderedConcName, o.workers+1, orderedNoop)
		if c.nsPerItem > 0 && cc.nsPerItem > 0 {
			x := cc.nsPerItem / c.nsPerItem
			add(fmt.Sprintf("ordered, no-op: %s (window %dx) >= %dx faster than conc's stream", form, crew.DefaultWindowPerWorker, orderedConcSpeedup),
				fmt.Sprintf("%.2fx faster (crew %.0f vs conc %.0f ns/item)", x, c.nsPerItem, cc.nsPerItem), x >= orderedConcSpeedup)
		}
	}
	for _, form := range forms {
		c, u := o.orderedOf(form, wide, orderedUneven), o.orderedOf(orderedUnorderedName, 0, orderedUneven)
		if c.nsPerItem > 0 && u.nsPerItem > 0 {
			x := c.nsPerItem / u.nsPerItem
			total := func(ns float64) string { return ms(time.Duration(ns * float64(o.unevenItems))) }
			add(fmt.Sprintf("ordered, uneven, window %dx: %s total time <= %gx the unordered pool's", wide/o.workers, form, orderedUnorderedLimit),
				fmt.Sprintf("%.2fx (crew %s vs unordered %s)", x, total(c.nsPerItem), total(u.nsPerItem)), x <= orderedUnorderedLimit)
		}
	}
	for _, form := range forms {
		var held []float64
		grows := true
		for i, k := range orderedWindowsPerWorker {
			held = append(held, o.heapOf(form, k*o.workers).held)
			grows = grows && held[i] > 0 && (i == 0 || held[i] > held[i-1])
		}
		if held[len(held)-1] == 0 {
			continue
		}
		all := float64(o.heapItems * orderedPayload)
		most := held[len(held)-1]
		add(fmt.Sprintf("ordered, %s: peak heap with a slow first input bounded by the window (window %dx < %g of every result's, growing with the window)", form, wide/o.workers, orderedHeapShare),
			fmt.Sprintf("%.4f of %s at window %d; %s at windows %s", most/all, kib(all), wide, kibs(held), joinInts(orderedWindows(o.workers))),
			most < orderedHeapShare*all && grows)
	}
	if c := o.orderedOf(orderedMapSeqName, def, orderedNoop); c.nsPerItem > 0 {
		add(fmt.Sprintf("ordered, no-op: %s <= %d alloc per item", orderedMapSeqName, orderedAllocLimit),
			fmt.Sprintf("%.3f allocs/item at window %d (no user allocation per item)", c.allocsPerItem, def), c.allocsPerItem <= orderedAllocLimit)
	}
	if c := o.orderedOf(orderedStreamName, def, orderedNoop); c.nsPerItem > 0 {
		add(fmt.Sprintf("ordered, no-op: %s <= %d alloc per item of its own (tasks and callbacks made before the count)", orderedStreamName, orderedAllocLimit),
			fmt.Sprintf("%.3f allocs/item at window %d; %.3f with a task and a callback closure made per item", o.streamOwnAllocs, def, c.allocsPerItem),
			o.streamOwnAllocs <= orderedAllocLimit)
	}
	return ts
}

// orderedWindows returns the windows of crew's forms with workers workers.
func orderedWindows(workers int) []int {
	ws := make([]int, len(orderedWindowsPerWorker))
	for i, k := range orderedWindowsPerWorker {
		ws[i] = k * workers
	}
	return ws
}

// kibs writes a list of byte counts in KiB, as "8, 32 and 128 KiB".
func kibs(bytes []float64) string {
	ks := make([]int, len(bytes))
	for i, b := range bytes {
		ks[i] = int(math.Round(b / 1024))
	}
	return joinInts(ks) + " KiB"
}

// chartTitle is the ordered chart's title and its caption in the report;
// it does not read r's figures, which a report without the scenario lacks.
func (r *orderedScenario) chartTitle() string {
	return "Ordered streams: time per item over the hand-written ordered pipeline's at the same window"
}

// chart draws each contender's time per item over the hand-written
// pipeline's at the same window (conc's stream at one input per worker, the
// unordered pool at the largest window), a panel per kind of job.
func (r *orderedScenario) chart(file string) error {
	o := r.ordered
	d := dotChart{title: r.chartTitle(), ref: 1, log: true, label: ratioLabel, width: 10 * vg.Inch,
		xLabel: fmt.Sprintf("x hand-written ordered pipeline at the same window (conc: at %d; unordered: at %d), log scale",
			orderedWindowsPerWorker[0]*o.workers, orderedWindowsPerWorker[len(orderedWindowsPerWorker)-1]*o.workers)}
	var rows []orderedResult
	for _, x := range o.results {
		if x.job == orderedNoop && x.form != orderedHandName {
			rows = append(rows, x)
			d.names = append(d.names, orderedName(x.form, x.window, o.workers))
		}
	}
	for _, job := range []string{orderedNoop, orderedUneven} {
		panel := dotPanel{title: job + " jobs"}
		for _, x := range rows {
			x = o.orderedOf(x.form, x.window, job)
			panel.values = append(panel.values, x.nsPerItem/o.handFor(x).nsPerItem)
		}
		d.panels = append(d.panels, panel)
	}
	return d.save(file)
}
