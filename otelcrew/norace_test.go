//go:build !race

package otelcrew_test

const raceEnabled = false
