package main

import (
	"fmt"
	"io"
	"os"
	"time"
)

// progress writes what the run is at: on a terminal, one line rewritten
// in place; elsewhere (a CI log, a file), a line each time a scenario
// starts, so that a log stays short.
type progress struct {
	w        io.Writer
	began    time.Time
	terminal bool
	last     string // the scenario of the last line written elsewhere
}

func newProgress(f *os.File, began time.Time) *progress {
	st, err := f.Stat()
	return &progress{w: f, began: began, terminal: err == nil && st.Mode()&os.ModeCharDevice != 0}
}

// progressWidth is the most a progress line takes on a terminal, so that
// it does not wrap on one of 80 columns.
const progressWidth = 79

// show says that the run is at scenario, doing what.
func (p *progress) show(scenario, what string) {
	line := fmt.Sprintf("[%4.0fs] %s", time.Since(p.began).Seconds(), scenario)
	if !p.terminal {
		if scenario != p.last {
			p.last = scenario
			fmt.Fprintln(p.w, line)
		}
		return
	}
	if what != "" {
		line += ": " + what
	}
	if r := []rune(line); len(r) > progressWidth {
		line = string(r[:progressWidth-1]) + "…"
	}
	fmt.Fprintf(p.w, "\r%-*s", progressWidth, line)
}

// done ends the progress line.
func (p *progress) done() {
	if p.terminal {
		fmt.Fprintf(p.w, "\r%-*s\r", progressWidth, "")
	}
	fmt.Fprintf(p.w, "[%4.0fs] done\n", time.Since(p.began).Seconds())
}
