package main

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
)

// spinEnv, set in a child's environment, makes the program a CPU-bound
// process that runs until it is killed: the load beside a "with load"
// measurement.
const spinEnv = "CREW_BENCH_SPIN"

// spinIfChild spins forever if the program was started as a load process.
func spinIfChild() {
	if os.Getenv(spinEnv) == "" {
		return
	}
	x := uint64(1)
	for {
		x = x*6364136223846793005 + 1442695040888963407
		if x == 0 {
			fmt.Println(x) // never: keeps the loop from being optimized away
		}
	}
}

// startLoad starts one CPU-bound child process per CPU and returns a function
// that kills them and waits for them to exit.
func startLoad() (stop func()) {
	self, err := os.Executable()
	if err != nil {
		fail(err)
	}
	var procs []*exec.Cmd
	for range runtime.NumCPU() {
		cmd := exec.Command(self)
		cmd.Env = append(os.Environ(), spinEnv+"=1")
		if err := cmd.Start(); err != nil {
			fail(err)
		}
		procs = append(procs, cmd)
	}
	return func() {
		for _, cmd := range procs {
			_ = cmd.Process.Kill()
			_ = cmd.Wait() // killed: its error says so
		}
	}
}

// loadName says what ran beside a measurement.
func loadName(loaded bool) string {
	if loaded {
		return fmt.Sprintf("%d CPU-bound processes", runtime.NumCPU())
	}
	return "none"
}
