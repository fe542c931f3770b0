package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/adamnode/adamnode/tensor"
	"github.com/google/go-cmp/cmp"
)

// model32 is a float32 Predictor for the server's tests: row i of the
// answer is [sum of row i, 3 × its first element]. A first element of -1
// fails the call (a solver error), 999 sleeps 300 ms, 666 panics.
func model32(ctx context.Context, x *tensor.Tensor[float32]) (*tensor.Tensor[float32], error) {
	n := x.Dim(0)
	inner := x.Len() / n
	d := x.ReadData()
	out := make([]float32, 2*n)
	for i := range n {
		switch d[i*inner] {
		case -1:
			return nil, errors.New("dopri5: step size underflow at t = 0.25")
		case 999:
			select {
			case <-time.After(300 * time.Millisecond):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		case 666:
			panic("runtime error: index out of range [7] with length 7")
		case 777:
			time.Sleep(400 * time.Millisecond) // a solve that does not look at ctx
		}
		var s float32
		for _, v := range d[i*inner : (i+1)*inner] {
			s += v
		}
		out[2*i], out[2*i+1] = s, 3*d[i*inner]
	}
	return tensor.FromSlice(out, n, 2), nil
}

func newTestServer(t *testing.T, opts Options) *Server[float32] {
	t.Helper()
	s, err := New([]Model[float32]{
		{Name: "vec", Input: []int{3}, Predictor: PredictorFunc[float32](model32)},
		{Name: "grid", Input: []int{2, 3}, Predictor: PredictorFunc[float32](model32)},
		{Name: "img", Input: []int{1, 2, 3}, Predictor: PredictorFunc[float32](model32)},
	}, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

type answer struct {
	Code int
	Body map[string]any
}

func do(t *testing.T, h http.Handler, method, path, body string) answer {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	a := answer{Code: rec.Code}
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("%s %s: Content-Type %q, want application/json", method, path, ct)
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &a.Body); err != nil {
		t.Fatalf("%s %s: the answer is not JSON: %v\n%s", method, path, err, rec.Body.String())
	}
	return a
}

// errorOf returns the code, field and message of an error answer.
func errorOf(a answer) (code int, field, msg string) {
	e, _ := a.Body["error"].(map[string]any)
	c, _ := e["code"].(float64)
	f, _ := e["field"].(string)
	m, _ := e["message"].(string)
	return int(c), f, m
}

// TestPredictBadInput: every kind of bad request is a 4xx with a JSON
// error naming the field, for both the batched and the unbatched server.
func TestPredictBadInput(t *testing.T) {
	big := `{"model": "vec", "inputs": [[` + strings.Repeat("1,", 600) + `1]]}`
	for _, batched := range []bool{false, true} {
		opts := Options{MaxBodyBytes: 1000, MaxInstances: 4}
		if batched {
			opts.Batch = &BatchOptions{MaxWait: time.Millisecond}
		}
		h := newTestServer(t, opts)
		for _, tc := range []struct {
			name, method, path, body string
			code                     int
			field, msg               string
		}{
			{"malformed JSON", "POST", "/v1/predict", `{"model": "vec", "inputs": [[1, 2, 3]`, 400, "body", "malformed JSON"},
			{"not JSON", "POST", "/v1/predict", `inputs=1,2,3`, 400, "body", "malformed JSON at byte 1"},
			{"empty body", "POST", "/v1/predict", ``, 400, "body", "empty"},
			{"two values", "POST", "/v1/predict", `{"model": "vec", "inputs": [[1, 2, 3]]} {}`, 400, "body", "more than one JSON value"},
			{"model not a string", "POST", "/v1/predict", `{"model": 5, "inputs": [[1, 2, 3]]}`, 400, "model", "must be a JSON string"},
			{"unknown field", "POST", "/v1/predict", `{"model": "vec", "instances": [[1, 2, 3]]}`, 400, "instances", "unknown field"},
			{"unknown model", "POST", "/v1/predict", `{"model": "resnet", "inputs": [[1, 2, 3]]}`, 404, "model", `unknown model "resnet" (this server has grid, img, vec)`},
			{"no model of two", "POST", "/v1/predict", `{"inputs": [[1, 2, 3]]}`, 400, "model", "missing"},
			{"no inputs", "POST", "/v1/predict", `{"model": "vec"}`, 400, "inputs", "missing"},
			{"inputs and input", "POST", "/v1/predict", `{"model": "vec", "inputs": [[1, 2, 3]], "input": [1, 2, 3]}`, 400, "inputs", "not both"},
			{"inputs not a list", "POST", "/v1/predict", `{"model": "vec", "inputs": "1 2 3"}`, 400, "inputs", "must be a list of instances, got the string"},
			{"inputs null", "POST", "/v1/predict", `{"model": "vec", "inputs": null}`, 400, "inputs", "got null"},
			{"inputs empty", "POST", "/v1/predict", `{"model": "vec", "inputs": []}`, 400, "inputs", "empty"},
			{"short row", "POST", "/v1/predict", `{"model": "vec", "inputs": [[1, 2, 3], [1, 2]]}`, 400, "inputs[1]", "has 2 elements, want 3"},
			{"instance a number", "POST", "/v1/predict", `{"model": "vec", "inputs": [1, 2, 3]}`, 400, "inputs[0]", "must be an array of 3"},
			{"nested wrong", "POST", "/v1/predict", `{"model": "grid", "inputs": [[[1, 2, 3], [4, 5]]]}`, 400, "inputs[0][1]", "has 2 elements, want 3"},
			{"squeezed wrong", "POST", "/v1/predict", `{"model": "img", "input": [[1, 2, 3], [4, 5]]}`, 400, "input[1]", "has 2 elements, want 3 (an instance has shape [1 2 3] or [2 3]"},
			{"flat wrong length", "POST", "/v1/predict", `{"model": "grid", "input": [1, 2, 3, 4, 5]}`, 400, "input", "has 5 elements, want 2"},
			{"NaN as a string", "POST", "/v1/predict", `{"model": "vec", "inputs": [[1, "NaN", 3]]}`, 400, "inputs[0][1]", `must be a number, got the string "NaN"`},
			{"NaN bare", "POST", "/v1/predict", `{"model": "vec", "inputs": [[1, NaN, 3]]}`, 400, "body", "malformed JSON"},
			{"null element", "POST", "/v1/predict", `{"model": "vec", "input": [1, 2, null]}`, 400, "input[2]", "must be a number, got null"},
			{"overflow", "POST", "/v1/predict", `{"model": "vec", "inputs": [[1, 2, 3], [1, 1e999, 3]]}`, 400, "inputs[1][1]", "not a finite number"},
			{"overflows float32", "POST", "/v1/predict", `{"model": "grid", "input": [[1, 2, 3], [4, 5, 1e39]]}`, 400, "input[1][2]", "1e39 is not a finite number"},
			{"oversized body", "POST", "/v1/predict", big, 413, "body", "larger than the limit of 1000 bytes"},
			{"too many instances", "POST", "/v1/predict", `{"model": "vec", "inputs": [[1,2,3],[1,2,3],[1,2,3],[1,2,3],[1,2,3]]}`, 413, "inputs", "5 instances, more than the limit of 4"},
			{"wrong method", "GET", "/v1/predict", ``, 405, "method", "use POST"},
			{"unknown path", "POST", "/v2/predict", `{}`, 404, "path", "no endpoint /v2/predict"},
		} {
			t.Run(fmt.Sprintf("batched=%v/%s", batched, tc.name), func(t *testing.T) {
				a := do(t, h, tc.method, tc.path, tc.body)
				code, field, msg := errorOf(a)
				if a.Code != tc.code || code != tc.code || field != tc.field || !strings.Contains(msg, tc.msg) {
					t.Errorf("got %d %v, want %d with field %q and a message containing %q", a.Code, a.Body, tc.code, tc.field, tc.msg)
				}
			})
		}
	}
}

// TestPredict: good requests, one instance or several, nested or flat,
// get the model's rows and their argmax; a request's failure (a solver
// error, a panic, a timeout) is its own.
func TestPredict(t *testing.T) {
	for _, batched := range []bool{false, true} {
		opts := Options{Timeout: 100 * time.Millisecond}
		if batched {
			opts.Batch = &BatchOptions{MaxWait: time.Millisecond}
		}
		h := newTestServer(t, opts)
		for _, tc := range []struct {
			name, body string
			code       int
			want       map[string]any
			field, msg string
		}{
			{"list", `{"model": "vec", "inputs": [[1, 2, 3], [-2, 0.5, 0]]}`, 200,
				map[string]any{"model": "vec", "outputs": []any{[]any{6.0, 3.0}, []any{-1.5, -6.0}}, "argmax": []any{0.0, 0.0}}, "", ""},
			{"one instance", `{"model": "vec", "input": [2, 2, 3]}`, 200,
				map[string]any{"model": "vec", "output": []any{7.0, 6.0}, "class": 0.0}, "", ""},
			{"nested", `{"model": "grid", "inputs": [[[1, 0, 0], [0, 0, 1]]]}`, 200,
				map[string]any{"model": "grid", "outputs": []any{[]any{2.0, 3.0}}, "argmax": []any{1.0}}, "", ""},
			{"leading 1 given", `{"model": "img", "inputs": [[[[1, 0, 0], [0, 0, 1]]]]}`, 200,
				map[string]any{"model": "img", "outputs": []any{[]any{2.0, 3.0}}, "argmax": []any{1.0}}, "", ""},
			{"leading 1 left out", `{"model": "img", "inputs": [[[1, 0, 0], [0, 0, 1]]]}`, 200,
				map[string]any{"model": "img", "outputs": []any{[]any{2.0, 3.0}}, "argmax": []any{1.0}}, "", ""},
			{"flat", `{"model": "grid", "inputs": [[1, 0, 0, 0, 0, 1]]}`, 200,
				map[string]any{"model": "grid", "outputs": []any{[]any{2.0, 3.0}}, "argmax": []any{1.0}}, "", ""},
			{"solver error", `{"model": "vec", "inputs": [[-1, 2, 3]]}`, 422, nil, "inputs", "the model failed on this request: dopri5: step size underflow"},
			{"panic", `{"model": "vec", "inputs": [[666, 2, 3]]}`, 500, nil, "", "the model panicked: runtime error"},
			{"timeout", `{"model": "vec", "inputs": [[999, 2, 3]]}`, 503, nil, "", "timed out after 100ms"},
			{"timeout of a solve deaf to ctx", `{"model": "vec", "inputs": [[777, 2, 3]]}`, 503, nil, "", "timed out after 100ms"},
		} {
			t.Run(fmt.Sprintf("batched=%v/%s", batched, tc.name), func(t *testing.T) {
				a := do(t, h, "POST", "/v1/predict", tc.body)
				if tc.want != nil {
					if diff := cmp.Diff(answer{tc.code, tc.want}, a); diff != "" {
						t.Errorf("(-want +got):\n%s", diff)
					}
					return
				}
				code, field, msg := errorOf(a)
				if a.Code != tc.code || code != tc.code || field != tc.field || !strings.Contains(msg, tc.msg) {
					t.Errorf("got %d %v, want %d with field %q and a message containing %q", a.Code, a.Body, tc.code, tc.field, tc.msg)
				}
			})
		}
	}
}

// TestPredictFailureIsolated: in a batched server, concurrent requests
// that share a batch with one whose solve fails get their answers.
func TestPredictFailureIsolated(t *testing.T) {
	var calls int
	var mu sync.Mutex
	counted := PredictorFunc[float32](func(ctx context.Context, x *tensor.Tensor[float32]) (*tensor.Tensor[float32], error) {
		mu.Lock()
		calls++
		mu.Unlock()
		return model32(ctx, x)
	})
	s, err := New([]Model[float32]{{Name: "vec", Input: []int{3}, Predictor: counted}},
		Options{Batch: &BatchOptions{MaxWait: 100 * time.Millisecond, MaxBatch: 16}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	codes := make([]int, 16)
	var wg sync.WaitGroup
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			first := float32(i)
			if i == 9 {
				first = -1
			}
			a := do(t, s, "POST", "/v1/predict", fmt.Sprintf(`{"input": [%v, 1, 1]}`, first))
			codes[i] = a.Code
			if i != 9 {
				if diff := cmp.Diff(map[string]any{"model": "vec", "output": []any{float64(first + 2), float64(3 * first)}, "class": float64(argmax([]float32{first + 2, 3 * first}))}, a.Body); diff != "" {
					t.Errorf("request %d (-want +got):\n%s", i, diff)
				}
			}
		}()
	}
	wg.Wait()
	want := make([]int, 16)
	for i := range want {
		want[i] = 200
	}
	want[9] = 422
	if diff := cmp.Diff(want, codes); diff != "" {
		t.Errorf("status codes (-want +got):\n%s", diff)
	}
	if calls >= 16+16 {
		t.Errorf("%d calls of the model for 16 requests: no batching", calls)
	}
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	st := s.models["vec"].batcher.Stats()
	for _, want := range []string{
		fmt.Sprintf(`adamnode_batch_retried_total{model="vec"} %d`, st.Retried),
		fmt.Sprintf(`adamnode_batch_rows_sum{model="vec"} %d`, st.Rows+st.Retried),
	} {
		if !strings.Contains(rec.Body.String(), want+"\n") {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

// TestHealthReadyMetrics: /healthz, /readyz (503 after Close) and the
// Prometheus text of /metrics.
func TestHealthReadyMetrics(t *testing.T) {
	s := newTestServer(t, Options{Batch: &BatchOptions{MaxWait: -1}})
	if a := do(t, s, "GET", "/healthz", ""); a.Code != 200 || a.Body["status"] != "ok" {
		t.Errorf("/healthz: %+v", a)
	}
	if a := do(t, s, "GET", "/readyz", ""); a.Code != 200 || a.Body["status"] != "ready" {
		t.Errorf("/readyz: %+v", a)
	}
	do(t, s, "POST", "/v1/predict", `{"model": "vec", "inputs": [[1, 2, 3]]}`)
	do(t, s, "POST", "/v1/predict", `{"model": "vec", "inputs": [[1, 2]]}`)
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	text := rec.Body.String()
	for _, want := range []string{
		`adamnode_requests_total{code="200",model="vec"} 1`,
		`adamnode_requests_total{code="400",model="vec"} 1`,
		`adamnode_batch_rows_count{model="vec"} 1`,
		`adamnode_request_duration_seconds_count{model="vec"} 1`,
		`adamnode_requests_in_flight 0`,
		`adamnode_batch_dropped_total{model="vec"} 0`,
		`adamnode_batch_retried_total{model="grid"} 0`,
		`go_goroutines`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	s.Close()
	if a := do(t, s, "GET", "/readyz", ""); a.Code != 503 {
		t.Errorf("/readyz after Close: %+v, want 503", a)
	}
	if a := do(t, s, "POST", "/v1/predict", `{"model": "vec", "inputs": [[1, 2, 3]]}`); a.Code != 503 {
		t.Errorf("predict after Close: %+v, want 503", a)
	}
}

// TestServeGracefulShutdown: cancelling Serve's context lets a request in
// flight finish with its answer, then Serve returns nil.
func TestServeGracefulShutdown(t *testing.T) {
	s := newTestServer(t, Options{Batch: &BatchOptions{MaxWait: -1}})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, ln) }()
	url := "http://" + ln.Addr().String()
	got := make(chan string, 1)
	go func() {
		resp, err := http.Post(url+"/v1/predict", "application/json", strings.NewReader(`{"model": "vec", "input": [999, 1, 1]}`))
		if err != nil {
			got <- err.Error()
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		got <- fmt.Sprintf("%d %s", resp.StatusCode, strings.TrimSpace(string(b)))
	}()
	waitFor(t, "the request in flight", func() bool {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
		return strings.Contains(rec.Body.String(), "adamnode_requests_in_flight 1")
	})
	cancel()
	if diff := cmp.Diff(`200 {"model":"vec","output":[1001,2997],"class":1}`, <-got); diff != "" {
		t.Errorf("the request in flight during shutdown (-want +got):\n%s", diff)
	}
	if err := <-served; err != nil {
		t.Errorf("Serve returned %v", err)
	}
	if s.Ready() {
		t.Error("ready after shutdown")
	}
}

// TestNewErrors: models New refuses, each named.
func TestNewErrors(t *testing.T) {
	p := PredictorFunc[float32](model32)
	for _, tc := range []struct {
		name   string
		models []Model[float32]
		opts   Options
		want   string
	}{
		{"none", nil, Options{}, "no models"},
		{"no name", []Model[float32]{{Input: []int{3}, Predictor: p}}, Options{}, "model 0 has no name"},
		{"twice", []Model[float32]{{Name: "a", Input: []int{3}, Predictor: p}, {Name: "a", Input: []int{3}, Predictor: p}}, Options{}, `two models are called "a"`},
		{"no predictor", []Model[float32]{{Name: "a", Input: []int{3}}}, Options{}, `model "a" has no Predictor`},
		{"bad shape", []Model[float32]{{Name: "a", Input: []int{3, 0}, Predictor: p}}, Options{}, "Input must be a shape"},
		{"bad body limit", []Model[float32]{{Name: "a", Input: []int{3}, Predictor: p}}, Options{MaxBodyBytes: -1}, "MaxBodyBytes"},
		{"bad batch", []Model[float32]{{Name: "a", Input: []int{3}, Predictor: p}}, Options{Batch: &BatchOptions{MaxBatch: -1}}, "MaxBatch"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := New(tc.models, tc.opts); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("New: %v, want an error containing %q", err, tc.want)
			}
		})
	}
}
