// Command bench compares crew's worker pool with errgroup, conc, ants, pond
// and hand-written pools, crew's batches on one shared pool with an
// errgroup per request and with pond's groups on one pool, crew's
// mailboxes with a buffered channel, and crew's actor with a goroutine fed
// by a buffered channel and with protoactor-go's actor. Its scaling
// scenario repeats the overhead scenario's no-op jobs at GOMAXPROCS 2, 8
// and 16 (which it sets with runtime.GOMAXPROCS and restores after), with
// 8, 64 and 1,024 workers and with 1 and 8 submitters, crew's pool against
// the floor (a minimal single-lock pool with crew's guarantees), the
// hand-written pool over a channel as large as the pool, errgroup and
// conc. Its tenants scenario runs 8 small clients with think time on one
// pool, spread out and starting together, alone and beside a noisy
// client's 2,000-job requests, first come, first served against
// WithFairShare, on the default bound and on a backlog that holds a noisy
// request, with jobs that sleep and jobs that spin, on a quiet machine
// and beside CPU-bound processes, and checks WithWeight's shares and what
// fair sharing costs per job. Its ordered scenario consumes results in input order through
// crew's MapSeq and Stream, conc's stream and a hand-written ordered
// pipeline, against crew's unordered pool. It prints a markdown report on
// standard output and writes it, with PNG charts, to a directory:
// bench/out/ by default, which git ignores, so that a run leaves the
// checkout clean. It says on standard error where it wrote them.
//
// Run it from the repository root with
//
//	go -C bench run .
//
// (about twenty-five minutes on two cores, three of them the scaling
// scenario's, about nine the tenants scenario's and four and a half the
// ordered scenario's; -scenarios picks some), or with -quick for a smoke
// run of one to three minutes.
// A progress line per scenario and contender goes to standard error.
//
// A relative -out is taken from the directory the command was run in, not
// from bench/: that is $PWD when it is set and absolute (go -C changes the
// working directory but leaves PWD as it was), else the working directory.
// So, from the repository root,
//
//	go -C bench run . -out bench/results
//
// refreshes the committed reference run in bench/results/.
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
	streamRuns                 int
	loads                      []float64
	mailboxMsgs, actors, depth int
	batchRequests              int
	scalingJobs                int
	tenantRuns, tenantRequests int
	tenantTime, weightsTime    time.Duration
	fairCostRuns               int
	out                        string
}

var allScenarios = []string{"overhead", "burst", "stream", "keyed", "mailboxes", "actors", "memory", "batches", "scaling", "tenants", "ordered"}

func parseFlags() config {
	var c config
	scen := flag.String("scenarios", strings.Join(allScenarios, ","), "comma-separated scenarios to run: "+strings.Join(allScenarios, ", "))
	flag.BoolVar(&c.quick, "quick", false, "a smoke run of one to three minutes on two cores: fewer jobs and runs")
	flag.IntVar(&c.workers, "workers", 8, "workers per pool (overhead, streaming, keyed, batches, tenants and ordered scenarios)")
	flag.IntVar(&c.burstWorkers, "burst-workers", 16, "workers per pool in the burst scenario")
	flag.IntVar(&c.runs, "runs", 5, "runs per measurement in the overhead, burst, mailbox, scaling and ordered scenarios (at most 3 with -quick, 1 for the ordered one) and of the tenants scenario's cost per job (1 with -quick); the median is reported")
	flag.IntVar(&c.streamJobs, "stream-jobs", 4000, "jobs per contender, load and run in the streaming scenario, and per placement in the keyed one (their duration)")
	flag.IntVar(&c.scalingJobs, "scaling-jobs", 1_000_000, "no-op jobs per contender, setting and run in the scaling scenario (at most 50000 with -quick)")
	flag.IntVar(&c.streamRuns, "stream-runs", 3, "seeded runs per load in the streaming scenario, and of the keyed and batches scenarios; the median of each figure is reported")
	flag.IntVar(&c.tenantRuns, "tenant-runs", 5, "seeded runs of the tenants scenario's tables, each running every contender in every setting (at most 1 with -quick); the median of each figure is reported")
	flag.DurationVar(&c.tenantTime, "tenant-time", time.Second, "how long the small clients run per contender, table, setting and run in the tenants scenario's main tables (a table per kind of job, shape and load) (at most 300ms with -quick)")
	flag.IntVar(&c.tenantRequests, "tenant-requests", 4000, "small requests per contender, setting and run in the tenants scenario's table of 63 clients without think time (at most 1000 with -quick)")
	flag.DurationVar(&c.weightsTime, "weights-time", 2*time.Second, "how long the tenants scenario's weights check measures (at most 500ms with -quick)")
	flag.StringVar(&c.out, "out", "", "directory for report.md and the charts (default bench/out/, which git ignores); "+
		"a relative path is taken from the directory the command was run in ($PWD), so from the repository root "+
		"-out bench/results refreshes the committed reference run")
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
	if c.workers < 1 || c.burstWorkers < 1 || c.runs < 1 || c.streamJobs < 1 || c.streamRuns < 1 || c.scalingJobs < 1 || c.tenantRuns < 1 || c.tenantRequests < 1 {
		fmt.Fprintln(os.Stderr, "bench: -workers, -burst-workers, -runs, -stream-jobs, -stream-runs, -scaling-jobs, -tenant-runs and -tenant-requests must be at least 1")
		os.Exit(2)
	}
	if c.tenantTime <= 0 || c.weightsTime <= 0 {
		fmt.Fprintln(os.Stderr, "bench: -tenant-time and -weights-time must be more than 0")
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
	c.batchRequests = 10_000
	c.fairCostRuns = c.runs
	if c.quick {
		c.overheadJobs, c.burstJobs, c.mailboxMsgs, c.depth = 100_000, 400, 100_000, 100_000
		c.batchRequests = 1000
		c.runs = min(c.runs, 3)
		c.streamJobs = min(c.streamJobs, 300)
		c.scalingJobs = min(c.scalingJobs, 50_000)
		c.tenantRuns = 1
		c.tenantTime = min(c.tenantTime, 300*time.Millisecond)
		c.tenantRequests = min(c.tenantRequests, 1000)
		c.fairCostRuns = 1
		c.weightsTime = min(c.weightsTime, 500*time.Millisecond)
	}
	cwd, err := os.Getwd()
	if err != nil {
		fail(err)
	}
	c.out = outDir(c.out, os.Getenv("PWD"), cwd)
	return c
}

// outDir returns where report.md and the charts go, given the -out flag, the
// PWD environment variable and the working directory (bench/ under go -C
// bench): out/ in the working directory when the flag is empty; the flag
// when it is absolute; else the flag taken from the directory the user ran
// the command in, which is PWD when it is absolute (go -C changes the
// working directory, not PWD), the working directory otherwise.
func outDir(flagged, pwd, cwd string) string {
	switch {
	case flagged == "":
		return filepath.Join(cwd, "out")
	case filepath.IsAbs(flagged):
		return filepath.Clean(flagged)
	case filepath.IsAbs(pwd):
		return filepath.Join(pwd, flagged)
	default:
		return filepath.Join(cwd, flagged)
	}
}

// fanIn is the producers of the mailbox and actor scenarios.
var fanIn = []int{1, 4, 8}

func main() {
	spinIfChild()
	c := parseFlags()
	cs := contenders()
	// The burst and streaming scenarios leave out the contenders that would
	// only repeat another's queue there.
	queueing := slices.DeleteFunc(slices.Clone(cs), func(c contender) bool { return c.overheadOnly })
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
		r.burst, r.burstBound = burst(queueing, c.burstWorkers, c.burstJobs, c.runs, step("burst:"))
		r.burstJobs, r.burstWorkers = c.burstJobs, c.burstWorkers
	}
	if c.scenarios["stream"] {
		for _, load := range c.loads {
			r.stream = append(r.stream, stream(queueing, c.workers, c.streamJobs, c.streamRuns, load,
				step(fmt.Sprintf("stream, %.0f%% load,", load*100)))...)
		}
		r.streamJobs, r.streamWorkers, r.streamRuns = c.streamJobs, c.workers, c.streamRuns
	}
	if c.scenarios["keyed"] {
		r.keyed = keyed(c.workers, c.streamJobs, c.streamRuns, 0.8, step("keyed, 80% load:"))
		r.keyedJobs, r.keyedWorkers, r.keyedRuns = c.streamJobs, c.workers, c.streamRuns
	}
	// The mailbox and actor scenarios run twice: alone, then beside one
	// CPU-bound process per CPU.
	for _, loaded := range []bool{false, true} {
		if !c.scenarios["mailboxes"] && !c.scenarios["actors"] {
			break
		}
		stop := func() {}
		if loaded {
			stop = startLoad()
		}
		suffix := ""
		if loaded {
			suffix = ", with load"
		}
		if c.scenarios["mailboxes"] {
			for _, p := range fanIn {
				r.mailboxes = append(r.mailboxes, mailboxes(p, loaded, c.mailboxMsgs, c.runs,
					step(fmt.Sprintf("mailboxes, %dP1C%s:", p, suffix)))...)
			}
			r.mailboxMsgs = c.mailboxMsgs
		}
		if c.scenarios["actors"] {
			for _, p := range fanIn {
				r.actors = append(r.actors, actors(p, loaded, c.mailboxMsgs, c.runs,
					step(fmt.Sprintf("actors, %d producer(s)%s:", p, suffix)))...)
			}
			r.actorMsgs = c.mailboxMsgs
		}
		stop()
	}
	if c.scenarios["memory"] {
		m := memory(c.actors, c.depth, step("memory:"))
		r.memory = &m
	}
	if c.scenarios["batches"] {
		r.batches, r.batchSpinRate = batches(c.workers, c.batchRequests, c.streamRuns, step("batches:"))
		r.emptyBatch = measureEmptyBatch(c.workers, c.runs)
		r.serverPath = measureServerPath(c.workers, min(c.runs, 3), step("batches, the server path:"))
		r.batchRequests, r.batchWorkers, r.batchRuns = c.batchRequests, c.workers, c.streamRuns
	}
	if c.scenarios["scaling"] {
		r.scaling = scaling(scalingSettings(), c.scalingJobs, c.runs, step("scaling,"))
		r.scalingJobs, r.scalingRuns = c.scalingJobs, c.runs
	}
	if c.scenarios["tenants"] {
		progress := step("tenants:")
		r.tenants, r.tenantsSpinRate, r.tenantsSlept = tenants(c.workers, c.tenantRuns, c.tenantTime, progress)
		r.tenantsWorkers, r.tenantsRuns, r.tenantsTime = c.workers, c.tenantRuns, c.tenantTime
		r.tenantsCrowd = crowd(c.workers, c.tenantRequests, c.tenantRuns, r.tenantsSpinRate, progress)
		r.crowdRequests = c.tenantRequests
		progress(fmt.Sprintf("weights %d and %d for %v", weightsLight, weightsHeavy, c.weightsTime))
		jobSpin := int(r.tenantsSpinRate * float64(weightsJob) / float64(time.Microsecond))
		w := weightsCheck(c.workers, []int{weightsLight, weightsHeavy}, c.weightsTime, jobSpin)
		r.weights = &w
		progress("cost per job, first come first served and WithFairShare")
		r.fairCost, r.fairCostRuns = measureFairCost(c.workers, c.fairCostRuns), c.fairCostRuns
	}
	if c.scenarios["ordered"] {
		o := ordered(orderedConfigOf(c), step("ordered:"))
		r.ordered = &o
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
	fmt.Fprintf(os.Stderr, "bench: wrote %s and %d charts beside it (the run took %.0fs)\n",
		filepath.Join(c.out, "report.md"), len(charts), r.took.Seconds())
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
