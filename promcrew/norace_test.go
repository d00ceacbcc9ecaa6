//go:build !race

package promcrew_test

const raceEnabled = false
