//go:build !race

package crew_test

const raceEnabled = false
