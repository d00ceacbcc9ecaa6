package main

import (
	"fmt"
	"strings"
	"time"
)

// How the report writes counts, lists and durations.

// plural writes n and noun, with an s unless n is 1: "1 run", "5 runs".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// upperFirst returns s with its first letter upper case.
func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// joinInts writes xs as a list in words: "2, 8 and 16".
func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}

// withLoad names a mailbox or actor measurement's setting.
func withLoad(loaded bool) string {
	if loaded {
		return ", with load"
	}
	return ""
}

// yesNo writes a boolean as the report's tables do.
func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// submitters says "1 submitter" or "8 submitters".
func submitters(n int) string {
	if n == 1 {
		return "1 submitter"
	}
	return fmt.Sprintf("%d submitters", n)
}

// producers says "1 producer" or "8 producers".
func producers(n int) string {
	if n == 1 {
		return "1 producer"
	}
	return fmt.Sprintf("%d producers", n)
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }

// ms2 is ms to the hundredth, for latencies of a millisecond or so.
func ms2(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }
