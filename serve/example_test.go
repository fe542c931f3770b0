package serve_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	"github.com/adamnode/adamnode/serve"
	"github.com/adamnode/adamnode/tensor"
)

// double is a model: each row times two.
func double(_ context.Context, x *tensor.Tensor[float32]) (*tensor.Tensor[float32], error) {
	y := x.Clone()
	for i, v := range y.Data() {
		y.Data()[i] = 2 * v
	}
	return y, nil
}

// While a batch runs, the requests that arrive form the next one: here
// the first request holds the model until eight more have queued, and
// those eight run as one call of the model, each given its own row back.
// (A request to an idle Batcher runs at once.)
func ExampleBatcher() {
	calls := 0
	started, hold := make(chan struct{}), make(chan struct{})
	model := serve.PredictorFunc[float32](func(ctx context.Context, x *tensor.Tensor[float32]) (*tensor.Tensor[float32], error) {
		calls++ // one batch at a time (MaxInFlight 1)
		if calls == 1 {
			close(started)
			<-hold
		}
		return double(ctx, x)
	})
	b, err := serve.NewBatcher(model, serve.BatchOptions{MaxBatch: 8, MaxWait: time.Second, MaxInFlight: 1})
	if err != nil {
		panic(err)
	}
	defer b.Close()
	ask := func(v float32) float32 {
		y, err := b.Predict(context.Background(), tensor.FromSlice([]float32{v, 1}, 1, 2))
		if err != nil {
			panic(err)
		}
		return y.ReadData()[0]
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); ask(-1) }()
	<-started
	out := make([]float32, 8)
	for i := range 8 {
		wg.Add(1)
		go func() { defer wg.Done(); out[i] = ask(float32(i)) }()
	}
	for b.Stats().Requests < 9 {
		time.Sleep(time.Millisecond)
	}
	close(hold)
	wg.Wait()
	fmt.Println(out, "in", calls-1, "call of the model after the first")
	// Output: [0 2 4 6 8 10 12 14] in 1 call of the model after the first
}

// A Server answers the JSON API; here through httptest, in a program
// through Serve on a listener.
func ExampleServer() {
	s, err := serve.New([]serve.Model[float32]{{Name: "double", Input: []int{2}, Predictor: serve.PredictorFunc[float32](double)}},
		serve.Options{Batch: &serve.BatchOptions{}})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	for _, body := range []string{
		`{"model": "double", "inputs": [[1, 2], [3, -4]]}`,
		`{"model": "double", "input": [0.5, 1]}`,
		`{"model": "double", "inputs": [[1, 2, 3]]}`,
	} {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest("POST", "/v1/predict", strings.NewReader(body)))
		fmt.Print(rec.Code, " ", rec.Body.String())
	}
	// Output:
	// 200 {"model":"double","outputs":[[2,4],[6,-8]],"argmax":[1,0]}
	// 200 {"model":"double","output":[1,2],"class":1}
	// 400 {"error":{"code":400,"field":"inputs[0]","message":"inputs[0] has 3 elements, want 2 (an instance has shape [2], or is a flat array of 2 numbers)"}}
}
