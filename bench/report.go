package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"
)

// report is a run's report: the scenarios that ran, each with its figures.
type report struct {
	machine   string
	mode      mode
	took      time.Duration
	scenarios []scenario // those that ran, in the order they ran
}

// markdown writes the report: the summary, then each scenario's section,
// the advice and the targets.
func (r *report) markdown() string {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p("# crew benchmark report\n\n")
	p("%s", r.summary())
	for i, s := range r.scenarios {
		p("## %d. %s\n\n", i+1, s.title())
		s.markdown(p)
	}
	r.adviceMarkdown(p)
	if t := r.targets(); len(t) > 0 {
		p("## Targets\n\n")
		p("These are crew's performance targets, each checked against this run; crew means %s unless a row says otherwise, and measured gives the ratio, then crew's figure against the other's.", crewName)
		if r.mode == quick {
			p(" A -quick run is too short to judge them: the last column says \"not judged\", and the figures are for a smoke test only.")
		}
		p("\n\n| target | measured | met |\n|---|---|---|\n")
		for _, x := range t {
			p("| %s | %s | %s |\n", x.what, x.measured, r.met(x))
		}
		p("\n")
	}
	return b.String()
}

// met says whether a target was met, as the Targets table writes it.
func (r *report) met(t target) string {
	if r.mode == quick {
		return "not judged"
	}
	return yesNo(t.met)
}

// targets checks the figures against crew's performance targets, scenario
// by scenario, leaving out those this run has no figures for.
func (r *report) targets() []target {
	var ts []target
	for _, s := range r.scenarios {
		ts = append(ts, s.targets()...)
	}
	return ts
}

// charts draws every chart the scenarios have figures for into dir.
func (r *report) charts(dir string) ([]chart, error) {
	var out []chart
	for _, s := range r.scenarios {
		for _, ch := range s.charts() {
			if err := ch.draw(filepath.Join(dir, ch.file)); err != nil {
				return nil, fmt.Errorf("chart %s: %w", ch.file, err)
			}
			out = append(out, ch)
		}
	}
	return out, nil
}

// summary writes the report's opening section: the machine, the mode,
// the targets met and the advice's verdicts, each with the spread that
// makes it uncertain.
func (r *report) summary() string {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p("## Summary\n\n")
	p("- **Machine:** %s.\n", r.machine)
	var ran []string
	for _, s := range r.scenarios {
		ran = append(ran, s.name())
	}
	p("- **Mode:** %s (%s); the run took %.0f s. Scenarios: %s.\n", r.mode, r.mode.about(), r.took.Seconds(), strings.Join(ran, ", "))
	p("- **How to read it:** every timed figure is the median of interleaved runs (each contender once per run, in turn, so that the machine's drift hits all alike); each section says how many. The advice pairs the runs: a verdict holds only if every run agrees.\n")
	judged, met := 0, 0
	var missed []string // "scenario n", for each scenario that missed n
	for _, sc := range r.scenarios {
		n := 0
		for _, t := range sc.targets() {
			judged++
			if t.met {
				met++
			} else {
				n++
			}
		}
		if n > 0 {
			missed = append(missed, fmt.Sprintf("%s %d", sc.name(), n))
		}
	}
	switch {
	case judged == 0:
	case r.mode == quick:
		p("- **Targets:** not judged in a -quick run (%d checked for the smoke test, see Targets).\n", judged)
	default:
		p("- **Targets:** %d met of %d judged", met, judged)
		if len(missed) > 0 {
			p("; missed, by scenario: %s (see Targets)", strings.Join(missed, ", "))
		}
		p(".\n")
	}
	as := r.advices()
	if len(as) > 0 {
		p("- **The README's advice on this machine** (see its section for every figure):\n")
		for _, a := range as {
			v := a.verdict(r.mode)
			p("  - %s: %s", a.id, v.word)
			if v.why != "" {
				p(": %s", v.why)
			}
			p(".\n")
		}
	}
	p("\n")
	return b.String()
}
