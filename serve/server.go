package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/adamnode/adamnode/tensor"
)

// Model is one model a Server serves.
type Model[T tensor.Float] struct {
	// Name is what requests call it by ("model" in the JSON).
	Name string
	// Input is the shape of one instance (one row of a batch), e.g.
	// [1, 28, 28] for an MNIST image or [16] for a vector.
	Input []int
	// Predictor runs it. The Server puts a Batcher in front of it unless
	// Options.Batch is nil.
	Predictor Predictor[T]
}

// Defaults of Options.
const (
	DefaultMaxBodyBytes    = 8 << 20
	DefaultMaxInstances    = 1024
	DefaultTimeout         = 30 * time.Second
	DefaultShutdownTimeout = 30 * time.Second
)

// Options configure a Server. Zero values mean the defaults.
type Options struct {
	// MaxBodyBytes is the largest request body accepted (default 8 MiB);
	// a larger one is a 413.
	MaxBodyBytes int64
	// MaxInstances is the most instances one request may hold (default
	// 1024); more is a 413.
	MaxInstances int
	// Timeout bounds each request's time in the server, queueing and
	// solving (default 30 s); past it the answer is a 503.
	Timeout time.Duration
	// ShutdownTimeout bounds how long Serve waits for the requests in
	// flight after its context is done (default 30 s).
	ShutdownTimeout time.Duration
	// Batch, if not nil, puts a Batcher with these options in front of
	// every model; nil runs each request as its own call of the model.
	Batch *BatchOptions
}

// Server answers the HTTP API (see the package documentation and
// docs/serving.md) for a set of models. It is an http.Handler; Serve runs
// it on a listener with a graceful shutdown.
type Server[T tensor.Float] struct {
	opts   Options
	models map[string]*served[T]
	names  []string
	mux    *http.ServeMux
	ready  atomic.Bool

	reg      *prometheus.Registry
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	batch    *prometheus.HistogramVec
	solve    *prometheus.HistogramVec
	inFlight prometheus.Gauge
}

type served[T tensor.Float] struct {
	Model[T]
	numel   int
	run     Predictor[T]
	batcher *Batcher[T] // nil without batching
}

// New returns a Server of models under opts: ready at once (/readyz
// answers 200 until Serve begins its shutdown or Close is called). It
// returns an error naming the model or the option that is wrong.
func New[T tensor.Float](models []Model[T], opts Options) (*Server[T], error) {
	switch {
	case len(models) == 0:
		return nil, errors.New("serve: New: no models")
	case opts.MaxBodyBytes < 0:
		return nil, fmt.Errorf("serve: Options.MaxBodyBytes must be ≥ 0, got %d", opts.MaxBodyBytes)
	case opts.MaxInstances < 0:
		return nil, fmt.Errorf("serve: Options.MaxInstances must be ≥ 0, got %d", opts.MaxInstances)
	case opts.Timeout < 0 || opts.ShutdownTimeout < 0:
		return nil, fmt.Errorf("serve: Options.Timeout and ShutdownTimeout must be ≥ 0, got %v and %v", opts.Timeout, opts.ShutdownTimeout)
	}
	if opts.MaxBodyBytes == 0 {
		opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if opts.MaxInstances == 0 {
		opts.MaxInstances = DefaultMaxInstances
	}
	if opts.Timeout == 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.ShutdownTimeout == 0 {
		opts.ShutdownTimeout = DefaultShutdownTimeout
	}
	s := &Server[T]{opts: opts, models: map[string]*served[T]{}, mux: http.NewServeMux()}
	s.initMetrics()
	for i, m := range models {
		switch {
		case m.Name == "":
			return nil, s.fail(fmt.Errorf("serve: New: model %d has no name", i))
		case s.models[m.Name] != nil:
			return nil, s.fail(fmt.Errorf("serve: New: two models are called %q", m.Name))
		case m.Predictor == nil:
			return nil, s.fail(fmt.Errorf("serve: New: model %q has no Predictor", m.Name))
		case len(m.Input) == 0 || slices.ContainsFunc(m.Input, func(d int) bool { return d < 1 }):
			return nil, s.fail(fmt.Errorf("serve: New: model %q: Input must be a shape of positive sizes, got %v", m.Name, m.Input))
		}
		sv := &served[T]{Model: m, numel: 1, run: m.Predictor}
		sv.Input = slices.Clone(m.Input)
		for _, d := range m.Input {
			sv.numel *= d
		}
		if opts.Batch != nil {
			bo := *opts.Batch
			name, observe := m.Name, bo.Observe
			bo.Observe = func(rows int, took time.Duration, err error) {
				s.batch.WithLabelValues(name).Observe(float64(rows))
				s.solve.WithLabelValues(name).Observe(took.Seconds())
				if observe != nil {
					observe(rows, took, err)
				}
			}
			b, err := NewBatcher(m.Predictor, bo)
			if err != nil {
				return nil, s.fail(err)
			}
			sv.run, sv.batcher = b, b
			labels := prometheus.Labels{"model": m.Name}
			s.reg.MustRegister(
				prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "adamnode_batch_dropped_total", ConstLabels: labels,
					Help: "Requests dropped from their batch because their client went away or timed out before it ran."},
					func() float64 { return float64(b.Stats().Dropped) }),
				prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "adamnode_batch_retried_total", ConstLabels: labels,
					Help: "Requests run again alone because their batch failed."},
					func() float64 { return float64(b.Stats().Retried) }))
		}
		s.models[m.Name] = sv
		s.names = append(s.names, m.Name)
	}
	sort.Strings(s.names)
	s.mux.HandleFunc("/v1/predict", s.predict)
	s.mux.HandleFunc("/healthz", s.healthz)
	s.mux.HandleFunc("/readyz", s.readyz)
	s.mux.Handle("/metrics", promhttp.HandlerFor(s.reg, promhttp.HandlerOpts{}))
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "path", fmt.Sprintf("no endpoint %s (use POST /v1/predict, GET /healthz, /readyz or /metrics)", r.URL.Path))
	})
	s.ready.Store(true)
	return s, nil
}

// fail closes the batchers made so far and returns err.
func (s *Server[T]) fail(err error) error {
	s.Close()
	return err
}

func (s *Server[T]) initMetrics() {
	s.reg = prometheus.NewRegistry()
	s.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	s.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "adamnode_requests_total", Help: "Prediction requests answered, by model and HTTP status code.",
	}, []string{"model", "code"})
	s.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "adamnode_request_duration_seconds", Help: "Time from a prediction request's arrival to its answer, by model.",
		Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16),
	}, []string{"model"})
	s.batch = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "adamnode_batch_rows", Help: "Rows in each call of the model by the batcher, by model.",
		Buckets: prometheus.ExponentialBuckets(1, 2, 10),
	}, []string{"model"})
	s.solve = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "adamnode_batch_duration_seconds", Help: "Time of each call of the model by the batcher, by model.",
		Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16),
	}, []string{"model"})
	s.inFlight = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "adamnode_requests_in_flight", Help: "Prediction requests being answered now.",
	})
	s.reg.MustRegister(s.requests, s.latency, s.batch, s.solve, s.inFlight)
}

// ServeHTTP answers one request.
func (s *Server[T]) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// Ready reports whether /readyz answers 200.
func (s *Server[T]) Ready() bool { return s.ready.Load() }

// Close marks the server not ready and closes its batchers, waiting for
// the batches in flight; requests after it get a 503.
func (s *Server[T]) Close() error {
	s.ready.Store(false)
	for _, m := range s.models {
		if m.batcher != nil {
			m.batcher.Close()
		}
	}
	return nil
}

// Serve answers HTTP on ln until ctx is done, then shuts down gracefully:
// /readyz turns 503, the listener closes, the requests in flight are
// finished (for up to ShutdownTimeout), and the batchers are closed. It
// returns nil after a clean shutdown.
func (s *Server[T]) Serve(ctx context.Context, ln net.Listener) error {
	hs := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		s.Close()
		return err
	case <-ctx.Done():
	}
	s.ready.Store(false)
	sctx, cancel := context.WithTimeout(context.Background(), s.opts.ShutdownTimeout)
	defer cancel()
	err := hs.Shutdown(sctx)
	if serr := <-errc; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	s.Close()
	if err != nil {
		return fmt.Errorf("serve: shutdown: %w", err)
	}
	return nil
}

// predictRequest is the body of POST /v1/predict.
type predictRequest struct {
	Model  string          `json:"model"`
	Inputs json.RawMessage `json:"inputs"`
	Input  json.RawMessage `json:"input"`
}

// response is the answer of POST /v1/predict: Outputs for "inputs",
// Output for "input"; Argmax holds each output row's index of its largest
// element (the class of a classifier).
type response[T tensor.Float] struct {
	Model   string `json:"model"`
	Outputs [][]T  `json:"outputs,omitempty"`
	Output  []T    `json:"output,omitempty"`
	Argmax  []int  `json:"argmax,omitempty"`
	Class   *int   `json:"class,omitempty"`
}

// apiError is the body of every error answer.
type apiError struct {
	Error struct {
		Code    int    `json:"code"`
		Field   string `json:"field,omitempty"`
		Message string `json:"message"`
	} `json:"error"`
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, code int, field, msg string) {
	var e apiError
	e.Error.Code, e.Error.Field, e.Error.Message = code, field, msg
	writeJSON(w, code, e)
}

// httpError is a 4xx or 5xx answer on its way out.
type httpError struct {
	code         int
	field, msg   string
	allowMethods string
}

func (e *httpError) Error() string { return e.msg }

func bad(code int, field, format string, args ...any) *httpError {
	return &httpError{code: code, field: field, msg: fmt.Sprintf(format, args...)}
}

func (s *Server[T]) healthz(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

func (s *Server[T]) readyz(w http.ResponseWriter, r *http.Request) {
	if !s.ready.Load() {
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "shutting down"})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": "ready", "models": s.names})
}

func (s *Server[T]) predict(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	s.inFlight.Inc()
	defer s.inFlight.Dec()
	model, resp, herr := s.answer(w, r)
	code := http.StatusOK
	if herr != nil {
		code = herr.code
		if herr.allowMethods != "" {
			w.Header().Set("Allow", herr.allowMethods)
		}
		writeError(w, code, herr.field, herr.msg)
	} else {
		writeJSON(w, code, resp)
	}
	if model == "" {
		model = "(none)"
	}
	s.requests.WithLabelValues(model, strconv.Itoa(code)).Inc()
	if herr == nil {
		s.latency.WithLabelValues(model).Observe(time.Since(start).Seconds())
	}
}

// answer decodes, checks and runs one prediction request; it returns the
// name of the model (once known) and the response or the error answer.
func (s *Server[T]) answer(w http.ResponseWriter, r *http.Request) (string, *response[T], *httpError) {
	if r.Method != http.MethodPost {
		e := bad(http.StatusMethodNotAllowed, "method", "%s /v1/predict is not allowed: use POST with a JSON body", r.Method)
		e.allowMethods = http.MethodPost
		return "", nil, e
	}
	if !s.ready.Load() {
		return "", nil, bad(http.StatusServiceUnavailable, "", "the server is shutting down")
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.opts.MaxBodyBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return "", nil, bad(http.StatusRequestEntityTooLarge, "body", "the request body is larger than the limit of %d bytes", s.opts.MaxBodyBytes)
		}
		return "", nil, bad(http.StatusBadRequest, "body", "reading the request body: %v", err)
	}
	var req predictRequest
	if herr := decodeStrict(body, &req); herr != nil {
		return "", nil, herr
	}
	m, herr := s.lookup(req.Model)
	if herr != nil {
		return "", nil, herr
	}
	single := len(req.Input) > 0
	raw, field := req.Inputs, "inputs"
	switch {
	case single && len(req.Inputs) > 0:
		return m.Name, nil, bad(http.StatusBadRequest, "inputs", `give either "input" (one instance) or "inputs" (a list of instances), not both`)
	case single:
		raw, field = req.Input, "input"
	case len(req.Inputs) == 0:
		return m.Name, nil, bad(http.StatusBadRequest, "inputs", `missing: give "inputs", a list of instances of shape %v each, or "input", one instance`, m.Input)
	}
	x, herr := s.parseInstances(m, raw, field, single)
	if herr != nil {
		return m.Name, nil, herr
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.opts.Timeout)
	defer cancel()
	y, err := predictWithin(ctx, m.run, x)
	if err != nil {
		return m.Name, nil, s.predictError(ctx, r.Context(), err)
	}
	if herr := checkOutput(y, x.Dim(0)); herr != nil {
		return m.Name, nil, herr
	}
	return m.Name, makeResponse(m.Name, y, single), nil
}

// predictWithin calls p on x and returns when it answers or when ctx is
// done, whichever is first: a solve cannot be interrupted, so a request
// past its timeout is answered at once and its solve's result, when it
// comes, is dropped.
func predictWithin[T tensor.Float](ctx context.Context, p Predictor[T], x *tensor.Tensor[T]) (*tensor.Tensor[T], error) {
	if _, ok := p.(*Batcher[T]); ok {
		return safePredict(ctx, p, x) // returns on ctx by itself
	}
	res := make(chan result[T], 1)
	go func() {
		y, err := safePredict(ctx, p, x)
		res <- result[T]{y: y, err: err}
	}()
	select {
	case r := <-res:
		return r.y, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// predictError maps a model's error to an answer.
func (s *Server[T]) predictError(ctx, reqCtx context.Context, err error) *httpError {
	var pe *PanicError
	switch {
	case errors.Is(err, ErrClosed):
		return bad(http.StatusServiceUnavailable, "", "the server is shutting down")
	case reqCtx.Err() != nil:
		return bad(http.StatusServiceUnavailable, "", "the client went away: %v", reqCtx.Err())
	case errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil:
		return bad(http.StatusServiceUnavailable, "", "the request timed out after %v", s.opts.Timeout)
	case errors.As(err, &pe):
		return bad(http.StatusInternalServerError, "", "%v", err)
	}
	return bad(http.StatusUnprocessableEntity, "inputs", "the model failed on this request: %v", err)
}

// decodeStrict decodes body into req, refusing unknown fields and
// trailing data; errors name the field or the byte offset.
func decodeStrict(body []byte, req *predictRequest) *httpError {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	err := dec.Decode(req)
	if err == nil && dec.More() {
		return bad(http.StatusBadRequest, "body", "the body holds more than one JSON value")
	}
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, io.EOF):
		return bad(http.StatusBadRequest, "body", "the body is empty: send a JSON object such as {\"inputs\": [[...]]}")
	case errors.As(err, &se):
		return bad(http.StatusBadRequest, "body", "malformed JSON at byte %d: %v", se.Offset, err)
	case errors.As(err, &te):
		field := te.Field
		if field == "" {
			field = "body"
		}
		return bad(http.StatusBadRequest, field, "%s must be a JSON %s, got %s", field, jsonKind(te.Type.Kind().String()), te.Value)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return bad(http.StatusBadRequest, name, "unknown field %q (the fields are model, inputs and input)", name)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return bad(http.StatusBadRequest, "body", "malformed JSON: the body ends early")
	}
	return bad(http.StatusBadRequest, "body", "malformed JSON: %v", err)
}

func jsonKind(k string) string {
	switch k {
	case "struct", "map":
		return "object"
	case "slice", "array":
		return "array"
	}
	return k
}

// lookup returns the model called name; "" names the only model.
func (s *Server[T]) lookup(name string) (*served[T], *httpError) {
	if name == "" {
		if len(s.names) == 1 {
			return s.models[s.names[0]], nil
		}
		return nil, bad(http.StatusBadRequest, "model", "missing: this server has several models (%s)", strings.Join(s.names, ", "))
	}
	m := s.models[name]
	if m == nil {
		return nil, bad(http.StatusNotFound, "model", "unknown model %q (this server has %s)", name, strings.Join(s.names, ", "))
	}
	return m, nil
}

// parseInstances reads raw, one instance (single) or a list of them, into
// a tensor [n, Input...]. An instance is m.Input's shape as nested JSON
// arrays, or a flat array of all its numbers; every number must be finite
// in T. Errors name the first element that is wrong, as inputs[2][0][5].
func (s *Server[T]) parseInstances(m *served[T], raw json.RawMessage, field string, single bool) (*tensor.Tensor[T], *httpError) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, bad(http.StatusBadRequest, field, "%s: %v", field, err)
	}
	var instances []any
	if single {
		instances = []any{v}
	} else {
		list, ok := v.([]any)
		switch {
		case !ok:
			return nil, bad(http.StatusBadRequest, field, "%s must be a list of instances, got %s", field, describe(v))
		case len(list) == 0:
			return nil, bad(http.StatusBadRequest, field, "%s is empty: give at least one instance", field)
		case len(list) > s.opts.MaxInstances:
			return nil, bad(http.StatusRequestEntityTooLarge, field, "%s holds %d instances, more than the limit of %d", field, len(list), s.opts.MaxInstances)
		}
		instances = list
	}
	data := make([]T, 0, len(instances)*m.numel)
	for i, inst := range instances {
		name := field
		if !single {
			name = fmt.Sprintf("%s[%d]", field, i)
		}
		var herr *httpError
		if data, herr = flatten(data, inst, name, m.Input); herr != nil {
			return nil, herr
		}
	}
	return tensor.FromSlice(data, append([]int{len(instances)}, m.Input...)...), nil
}

// flatten appends the numbers of instance v, called name, to data: v is
// nested arrays of shape, or of shape without its leading axes of size 1
// ([28, 28] for [1, 28, 28]), or a flat array of all its numbers.
func flatten[T tensor.Float](data []T, v any, name string, shape []int) ([]T, *httpError) {
	numel := product(shape)
	if list, ok := v.([]any); ok && len(shape) > 1 && len(list) == numel && (len(list) == 0 || !isList(list[0])) {
		return appendNumbers(data, list, name) // a flat instance
	}
	// The shape whose first axis the instance's length fits: the whole
	// shape, or one with its leading axes of size 1 dropped.
	if list, ok := v.([]any); ok {
		for s := shape; ; s = s[1:] {
			if len(list) == s[0] {
				return appendNested(data, v, name, s, shape)
			}
			if len(s) == 1 || s[0] != 1 {
				break
			}
		}
	}
	return appendNested(data, v, name, shape, shape)
}

func isList(v any) bool { _, ok := v.([]any); return ok }

func appendNested[T tensor.Float](data []T, v any, name string, shape, whole []int) ([]T, *httpError) {
	list, ok := v.([]any)
	if !ok {
		return nil, bad(http.StatusBadRequest, name, "%s must be an array of %d (an instance has shape %v%s), got %s", name, shape[0], whole, squeezed(whole), describe(v))
	}
	if len(list) != shape[0] {
		return nil, bad(http.StatusBadRequest, name, "%s has %d elements, want %d (an instance has shape %v%s, or is a flat array of %d numbers)", name, len(list), shape[0], whole, squeezed(whole), product(whole))
	}
	if len(shape) == 1 {
		return appendNumbers(data, list, name)
	}
	var herr *httpError
	for i, e := range list {
		if data, herr = appendNested(data, e, fmt.Sprintf("%s[%d]", name, i), shape[1:], whole); herr != nil {
			return nil, herr
		}
	}
	return data, nil
}

func appendNumbers[T tensor.Float](data []T, list []any, name string) ([]T, *httpError) {
	for i, e := range list {
		num, ok := e.(json.Number)
		if !ok {
			return nil, bad(http.StatusBadRequest, fmt.Sprintf("%s[%d]", name, i), "%s[%d] must be a number, got %s", name, i, describe(e))
		}
		f, err := strconv.ParseFloat(string(num), 64)
		x := T(f)
		if err != nil || math.IsInf(float64(x), 0) || math.IsNaN(float64(x)) {
			return nil, bad(http.StatusBadRequest, fmt.Sprintf("%s[%d]", name, i), "%s[%d] = %s is not a finite number of the model's precision", name, i, num)
		}
		data = append(data, x)
	}
	return data, nil
}

// squeezed names the shape without its leading axes of size 1, if any.
func squeezed(shape []int) string {
	s := shape
	for len(s) > 1 && s[0] == 1 {
		s = s[1:]
	}
	if len(s) == len(shape) {
		return ""
	}
	return fmt.Sprintf(" or %v", s)
}

func product(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// describe names the JSON kind of v for an error message.
func describe(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		if len(v) > 20 {
			v = v[:20] + "…"
		}
		return fmt.Sprintf("the string %q", v)
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	case []any:
		return fmt.Sprintf("an array of %d", len(v))
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// checkOutput answers a 500 unless y has rows rows, and a 422 naming the
// row if it holds a NaN or an infinity (which JSON cannot carry).
func checkOutput[T tensor.Float](y *tensor.Tensor[T], rows int) *httpError {
	if y == nil || y.Rank() == 0 || y.Dim(0) != rows || y.Len() == 0 {
		return bad(http.StatusInternalServerError, "", "the model answered %d instances with a tensor of shape %v", rows, shapeOf(y))
	}
	d := y.ReadData()
	inner := len(d) / rows
	for i, v := range d {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return bad(http.StatusUnprocessableEntity, "inputs", "the model's output for instance %d is not finite (%v)", i/inner, v)
		}
	}
	return nil
}

// makeResponse splits y into rows.
func makeResponse[T tensor.Float](name string, y *tensor.Tensor[T], single bool) *response[T] {
	n := y.Dim(0)
	d := y.ReadData()
	inner := len(d) / n
	resp := &response[T]{Model: name}
	for i := range n {
		row := slices.Clone(d[i*inner : (i+1)*inner])
		resp.Argmax = append(resp.Argmax, argmax(row))
		if single {
			resp.Output = row
		} else {
			resp.Outputs = append(resp.Outputs, row)
		}
	}
	if single {
		resp.Class, resp.Argmax = &resp.Argmax[0], nil
	}
	return resp
}

func argmax[T tensor.Float](row []T) int {
	best := 0
	for i, v := range row {
		if v > row[best] {
			best = i
		}
	}
	return best
}
