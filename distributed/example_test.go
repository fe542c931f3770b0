package distributed_test

import (
	"fmt"
	"sync"

	"github.com/adamnode/adamnode/distributed"
)

// Three in-process ranks sum their numbers with one all-reduce: each gets
// the total, as MPI ranks would.
func ExampleNewLocal() {
	ranks := distributed.NewLocal(3)
	sums := make([][]float64, 3)
	var wg sync.WaitGroup
	for _, c := range ranks {
		wg.Go(func() {
			buf := []float64{float64(c.Rank()), 1}
			if err := c.AllReduce(buf); err != nil {
				panic(err)
			}
			sums[c.Rank()] = buf
		})
	}
	wg.Wait()
	fmt.Println(sums)
	// Output:
	// [[3 3] [3 3] [3 3]]
}
