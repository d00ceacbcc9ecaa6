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
// fair sharing costs per job. Its ordered scenario consumes results in
// input order through crew's MapSeq and Stream, conc's stream and a
// hand-written ordered pipeline, against crew's unordered pool. Its
// adaptive scenario runs pools against a simulated downstream of hidden
// capacity (sleeping calls that slow down above it): fixed sizes, crew's
// WithAdaptiveSize, and Netflix's Gradient2, AIMD and Vegas, ported in
// limiters.go, each resizing a crew pool.
//
// It writes a markdown report, which opens with a summary (the machine,
// the mode, the targets met, whether the README's advice held), with PNG
// charts, to a directory: bench/out/ by default, which git ignores, so
// that a run leaves the checkout clean. On standard output it prints the
// summary and where the report is; on standard error, one progress line,
// rewritten in place on a terminal.
//
// Run it from the repository root with
//
//	go -C bench run .
//
// (about five minutes on two cores: enough runs to judge the advice), with
// -full for the reference run (about twenty-eight minutes: nine of them
// the tenants scenario's, four the streaming scenario's, four the ordered
// scenario's, three the adaptive scenario's and two and a half the
// scaling scenario's), or with -quick for a smoke run of one to two
// minutes that judges nothing; -scenarios picks some.
//
// A relative -out is taken from the directory the command was run in, not
// from bench/: that is $PWD when it is set and absolute (go -C changes the
// working directory but leaves PWD as it was), else the working directory.
// So, from the repository root,
//
//	go -C bench run . -full -out bench/results
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
	"strings"
	"testing"
	"time"
)

// config is what the flags set, beside each scenario's own flags.
type config struct {
	settings
	scenarios []scenario // those selected, in the order they run
	out       string
}

func parseFlags(args []string) config {
	all := scenarios()
	var allNames []string
	for _, s := range all {
		allNames = append(allNames, s.name())
	}
	fs := flag.NewFlagSet("bench", flag.ExitOnError)
	var c config
	scen := fs.String("scenarios", strings.Join(allNames, ","), "comma-separated scenarios to run: "+strings.Join(allNames, ", "))
	isQuick := fs.Bool("quick", false, "a smoke run of one to two minutes on two cores: few jobs and runs, no target or advice judged")
	isFull := fs.Bool("full", false, "the reference run, about twenty-five minutes on two cores: the figures the README quotes")
	fs.IntVar(&c.workers, "workers", 8, "workers per pool (overhead, streaming, keyed, batches, tenants and ordered scenarios)")
	fs.IntVar(&c.runs, "runs", 0, "runs per measurement of the scenarios that time one figure per contender (overhead, burst, mailboxes, actors, scaling, ordered, the batch and fair costs); the median is reported (default: the mode's, 1 to 5)")
	fs.IntVar(&c.streamJobs, "stream-jobs", 0, "jobs per contender, load and run in the streaming scenario, and per placement in the keyed one (default 300 with -quick, 500, 4000 with -full)")
	fs.IntVar(&c.seededRuns, "stream-runs", 0, "seeded runs per load in the streaming scenario, and of the keyed and batches scenarios; the median of each figure is reported (default 1 with -quick, else 3)")
	fs.StringVar(&c.out, "out", "", "directory for report.md and the charts (default bench/out/, which git ignores); "+
		"a relative path is taken from the directory the command was run in ($PWD), so from the repository root "+
		"-out bench/results refreshes the committed reference run")
	for _, s := range all {
		s.flags(fs)
	}
	_ = fs.Parse(args) // ExitOnError
	if fs.NArg() > 0 {
		usage(fmt.Sprintf("unexpected arguments %q", fs.Args()))
	}
	switch {
	case *isQuick && *isFull:
		usage("-quick and -full: pick one")
	case *isQuick:
		c.mode = quick
	case *isFull:
		c.mode = full
	default:
		c.mode = standard
	}
	if c.workers < 1 || c.runs < 0 || c.streamJobs < 0 || c.seededRuns < 0 {
		usage("-workers must be at least 1, and -runs, -stream-jobs and -stream-runs at least 1 when given")
	}
	c.benchtime = pick(c.mode, 200*time.Millisecond, 300*time.Millisecond, time.Second)
	for _, name := range strings.Split(*scen, ",") {
		name = strings.TrimSpace(name)
		i := slices.IndexFunc(all, func(s scenario) bool { return s.name() == name })
		if i < 0 {
			usage(fmt.Sprintf("unknown scenario %q (have %s)", name, strings.Join(allNames, ", ")))
		}
		if !slices.Contains(c.scenarios, all[i]) {
			c.scenarios = append(c.scenarios, all[i])
		}
	}
	// Run them in the registry's order, whatever the flag's.
	slices.SortFunc(c.scenarios, func(a, b scenario) int {
		return slices.Index(all, a) - slices.Index(all, b)
	})
	// Every scenario checks its flags, selected or not, so that a bad
	// flag is refused whatever -scenarios says.
	for _, s := range all {
		if err := s.configure(c.settings); err != nil {
			usage(err.Error())
		}
	}
	cwd, err := os.Getwd()
	if err != nil {
		fail(err)
	}
	c.out = outDir(c.out, os.Getenv("PWD"), cwd)
	return c
}

// usage reports a bad flag and exits.
func usage(msg string) {
	fmt.Fprintln(os.Stderr, "bench:", msg)
	os.Exit(2)
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

func main() {
	spinIfChild()
	c := parseFlags(os.Args[1:])
	// testing.Benchmark, which times the batch's fixed cost, the server
	// path and the fair pool's cost per job, runs each measurement for
	// -test.benchtime: shorter than its second outside -full.
	testing.Init()
	if err := flag.Set("test.benchtime", c.benchtime.String()); err != nil {
		fail(err)
	}
	r := report{mode: c.mode, machine: fmt.Sprintf("%s/%s, %d CPUs (GOMAXPROCS %d), %s, %s", runtime.GOOS, runtime.GOARCH,
		runtime.NumCPU(), runtime.GOMAXPROCS(0), cpuModel(), runtime.Version())}
	began := time.Now()
	line := newProgress(os.Stderr, began)
	for i, s := range c.scenarios {
		at := fmt.Sprintf("%d/%d %s", i+1, len(c.scenarios), s.name())
		line.show(at, "")
		s.run(func(what string) { line.show(at, what) })
		r.scenarios = append(r.scenarios, s)
	}
	r.took = time.Since(began)
	line.done()

	md := r.markdown()
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
	file := filepath.Join(c.out, "report.md")
	if err := os.WriteFile(file, []byte(md), 0o644); err != nil {
		fail(err)
	}
	fmt.Print(r.summary())
	fmt.Printf("The whole report: %s, with %s beside it.\n", file, plural(len(charts), "chart"))
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
