// Command bench compares crew's worker pool with errgroup, conc, ants, pond
// and a hand-written pool, and crew's mailboxes with a buffered channel. It
// prints a markdown report and writes it, with charts, to -out
// (results/ by default).
//
// Run it from the repository root with
//
//	go -C bench run .
//
// or with -quick for a smoke run of under a minute. A progress line per
// scenario and contender goes to standard error.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// config is what the flags set.
type config struct {
	quick                      bool
	scenarios                  map[string]bool
	workers, burstWorkers      int
	overheadJobs, runs         int
	burstJobs, streamJobs      int
	loads                      []float64
	mailboxMsgs, actors, depth int
	out                        string
}

var allScenarios = []string{"overhead", "burst", "stream", "keyed", "mailboxes", "memory"}

func parseFlags() config {
	var c config
	scen := flag.String("scenarios", strings.Join(allScenarios, ","), "comma-separated scenarios to run: "+strings.Join(allScenarios, ", "))
	flag.BoolVar(&c.quick, "quick", false, "a smoke run of under a minute: fewer jobs and runs")
	flag.IntVar(&c.workers, "workers", 8, "workers per pool (overhead and streaming scenarios)")
	flag.IntVar(&c.burstWorkers, "burst-workers", 16, "workers per pool in the burst scenario")
	flag.IntVar(&c.runs, "runs", 5, "runs per measurement in the overhead, burst and mailbox scenarios; the median is reported")
	flag.IntVar(&c.streamJobs, "stream-jobs", 4000, "jobs per contender and load in the streaming and keyed scenarios (their duration)")
	flag.StringVar(&c.out, "out", "results", "directory for report.md and the charts")
	loads := flag.String("loads", "0.5,0.8,0.9", "comma-separated loads of the streaming scenario, as fractions of the pool's capacity")
	flag.Parse()
	c.scenarios = map[string]bool{}
	for _, s := range strings.Split(*scen, ",") {
		s = strings.TrimSpace(s)
		if !slices.Contains(allScenarios, s) {
			fmt.Fprintf(os.Stderr, "bench: unknown scenario %q (have %s)\n", s, strings.Join(allScenarios, ", "))
			os.Exit(2)
		}
		c.scenarios[s] = true
	}
	if c.workers < 1 || c.burstWorkers < 1 || c.runs < 1 || c.streamJobs < 1 {
		fmt.Fprintln(os.Stderr, "bench: -workers, -burst-workers, -runs and -stream-jobs must be at least 1")
		os.Exit(2)
	}
	for _, l := range strings.Split(*loads, ",") {
		x, err := strconv.ParseFloat(strings.TrimSpace(l), 64)
		if err != nil || x <= 0 || x >= 1 {
			fmt.Fprintf(os.Stderr, "bench: -loads: %q is not a fraction between 0 and 1\n", l)
			os.Exit(2)
		}
		c.loads = append(c.loads, x)
	}
	c.overheadJobs, c.burstJobs = 1_000_000, 2000
	c.mailboxMsgs, c.actors, c.depth = 1_000_000, 10_000, 1_000_000
	if c.quick {
		c.overheadJobs, c.burstJobs, c.mailboxMsgs, c.depth = 100_000, 400, 100_000, 100_000
		c.runs = min(c.runs, 3)
		c.streamJobs = min(c.streamJobs, 300)
	}
	return c
}

func main() {
	c := parseFlags()
	cs := contenders()
	var r report
	r.machine = fmt.Sprintf("%s/%s, %d CPUs (GOMAXPROCS %d), %s, %s", runtime.GOOS, runtime.GOARCH,
		runtime.NumCPU(), runtime.GOMAXPROCS(0), cpuModel(), runtime.Version())
	r.quick = c.quick
	began := time.Now()
	step := func(scenario string) func(string) {
		return func(what string) {
			fmt.Fprintf(os.Stderr, "[%6.1fs] %-9s %s\n", time.Since(began).Seconds(), scenario, what)
		}
	}
	if c.scenarios["overhead"] {
		for _, subs := range []int{1, 8} {
			r.overhead = append(r.overhead, overhead(cs, c.workers, subs, c.overheadJobs, c.runs,
				step(fmt.Sprintf("overhead, %d submitter(s):", subs)))...)
		}
		r.overheadJobs, r.overheadWorkers = c.overheadJobs, c.workers
	}
	if c.scenarios["burst"] {
		r.burst, r.burstBound = burst(cs, c.burstWorkers, c.burstJobs, max(1, c.runs/2), step("burst:"))
		r.burstJobs, r.burstWorkers = c.burstJobs, c.burstWorkers
	}
	if c.scenarios["stream"] {
		for _, load := range c.loads {
			r.stream = append(r.stream, stream(cs, c.workers, c.streamJobs, load,
				step(fmt.Sprintf("stream, %.0f%% load:", load*100)))...)
		}
		r.streamJobs, r.streamWorkers = c.streamJobs, c.workers
	}
	if c.scenarios["keyed"] {
		r.keyed = keyed(c.workers, c.streamJobs, 0.8, step("keyed, 80% load:"))
		r.keyedJobs, r.keyedWorkers = c.streamJobs, c.workers
	}
	if c.scenarios["mailboxes"] {
		for _, p := range []int{1, 4} {
			r.mailboxes = append(r.mailboxes, mailboxes(p, c.mailboxMsgs, c.runs,
				step(fmt.Sprintf("mailboxes, %dP1C:", p)))...)
		}
		r.mailboxMsgs = c.mailboxMsgs
	}
	if c.scenarios["memory"] {
		m := memory(c.actors, c.depth, step("memory:"))
		r.memory = &m
	}
	r.took = time.Since(began)

	md := r.markdown()
	fmt.Print(md)
	if err := os.MkdirAll(c.out, 0o755); err != nil {
		fail(err)
	}
	charts, err := r.charts(c.out)
	if err != nil {
		fail(err)
	}
	if len(charts) > 0 {
		md += "\n## Charts\n\n"
		for _, ch := range charts {
			md += fmt.Sprintf("![%s](%s)\n\n", ch.title, ch.file)
		}
	}
	if err := os.WriteFile(filepath.Join(c.out, "report.md"), []byte(md), 0o644); err != nil {
		fail(err)
	}
	fmt.Fprintf(os.Stderr, "wrote %s and %d charts in %.0fs\n", filepath.Join(c.out, "report.md"), len(charts), r.took.Seconds())
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "bench:", err)
	os.Exit(1)
}

// cpuModel reads the processor's name on Linux, or says it is unknown.
func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if name, ok := strings.CutPrefix(line, "model name"); ok {
			return strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(name), ":"))
		}
	}
	return "unknown CPU"
}
