package crew_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"

	"github.com/crewlib/crew"
)

// A job that calls runtime.Goexit, as t.FailNow does inside a job of a
// test, fails as any job does, and a new goroutine takes its worker on:
// the pool keeps its size, and runs the jobs after it.
func ExampleErrGoexit() {
	p := crew.NewGroup(1)
	_ = p.Submit(context.Background(), func(context.Context) error {
		runtime.Goexit()
		return nil
	})
	_ = p.Submit(context.Background(), func(context.Context) error {
		fmt.Println("the next job ran")
		return nil
	})
	err := p.Wait()
	fmt.Println(err, errors.Is(err, crew.ErrGoexit))
	s := p.Stats()
	fmt.Println("workers:", s.Workers, "replaced:", s.Replaced)
	// Output:
	// the next job ran
	// crew: job called runtime.Goexit true
	// workers: 1 replaced: 1
}
