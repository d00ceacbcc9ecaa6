package crew_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/crewlib/crew"
)

// A pool whose jobs call a service of unknown capacity finds its own
// size. Here the service serves 4 requests at once, 2 ms each, and queues
// the rest: more than 4 workers only wait longer there. The pool starts
// at 1 worker; its size, and why it last changed, are in Stats (and in
// the metrics, with WithMetrics).
func ExampleWithAdaptiveSize() {
	slots := make(chan struct{}, 4)
	svc := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		slots <- struct{}{}
		time.Sleep(2 * time.Millisecond)
		<-slots
	}))
	defer svc.Close()

	pool := crew.NewGroup(1, crew.WithAdaptiveSize(1, 32))
	ctx := context.Background()
	call := func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, svc.URL, nil)
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		return resp.Body.Close()
	}
	for range 400 {
		if err := pool.Submit(ctx, call); err != nil {
			fmt.Println(err)
			return
		}
	}
	s := pool.Stats() // s.Workers is the size now, s.Adaptive.Reason why it last changed
	if err := pool.Wait(); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(s.Adaptive.Min <= s.Workers && s.Workers <= s.Adaptive.Max)
	fmt.Println(pool.Stats().Completed, "calls")
	// Output:
	// true
	// 400 calls
}
