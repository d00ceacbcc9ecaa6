package crew_test

import (
	"context"
	"fmt"

	"github.com/crewlib/crew"
)

// WithQueueSize(0) bounds a group as errgroup's SetLimit does: it holds a
// job per worker and nothing beside them, so a Submit returns once a
// worker has its job.
func ExampleWithQueueSize() {
	g := crew.NewGroup(2, crew.WithQueueSize(0)) // errgroup's SetLimit(2)
	release := make(chan struct{})
	hold := func(context.Context) error { <-release; return nil }
	for i := 1; i <= 3; i++ {
		fmt.Printf("job %d taken at once: %v\n", i, g.TrySubmit(hold))
	}

	close(release) // the two jobs end: their workers are free
	fmt.Println("job 3 submitted:", g.Submit(context.Background(), hold))
	fmt.Println("wait:", g.Wait())
	// Output:
	// job 1 taken at once: true
	// job 2 taken at once: true
	// job 3 taken at once: false
	// job 3 submitted: <nil>
	// wait: <nil>
}
