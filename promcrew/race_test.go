//go:build race

package promcrew_test

// raceEnabled reports whether the race detector is on: it allocates, so
// allocation counts are only checked without it.
const raceEnabled = true
