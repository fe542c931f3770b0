// Command loadtest measures a model server under load on loopback: the Go
// server of package serve, or bench/serve_torch.py (PyTorch), both
// answering the same JSON API, on the MNIST AdamNODE (bench/mnistnode)
// and the MLP AdamNODE (bench/mlpfamily's base configuration), the same
// weights on both sides.
//
//	loadtest weights -model mnist|mlp -out FILE
//	    writes the model's weights file (the one both servers load)
//	loadtest serve -model mnist|mlp -weights FILE [-addr 127.0.0.1:8090]
//	    [-no-batching] [-max-batch 64] [-max-wait 2ms] [-max-in-flight 2]
//	    [-replicas 0] [-rows errors|alone|as-built]
//	    the Go server (package serve over an infer.Pool of the model), until
//	    SIGTERM or Ctrl-C
//	loadtest run -url http://127.0.0.1:8090 -model mnist|mlp
//	    [-concurrency 1,8,64] [-duration 5s] [-requests 20000] [-warmup 1s]
//	    [-pid PID [-rss-every 1s]] [-label NAME]
//	    closed-loop clients: at each concurrency, that many goroutines each
//	    send one instance per request, the next as soon as the answer is in,
//	    for -duration or -requests in all, whichever ends first (after
//	    -warmup, not counted). One JSON line per concurrency: requests,
//	    errors, throughput, p50/p95/p99 latency, and with -pid the server
//	    process's resident memory at the start and the end of the round.
//
// Every connection is loopback (the URL's host must be 127.0.0.1,
// localhost or ::1); bench/serve_load.sh runs the whole comparison.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/bench/mlpfamily"
	"github.com/adamnode/adamnode/bench/mnistnode"
	"github.com/adamnode/adamnode/infer"
	"github.com/adamnode/adamnode/layers"
	"github.com/adamnode/adamnode/odeblock"
	"github.com/adamnode/adamnode/serve"
	"github.com/adamnode/adamnode/tensor"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: loadtest weights|serve|run [flags] (see the package documentation)")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "weights":
		err = runWeights(os.Args[2:])
	case "serve":
		err = runServe(os.Args[2:])
	case "run":
		err = runLoad(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q (want weights, serve or run)", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadtest:", err)
		os.Exit(1)
	}
}

// seed of the MNIST AdamNODE's weights (bench/mnistnode).
const mnistSeed = 1

func runWeights(args []string) error {
	fs := flag.NewFlagSet("loadtest weights", flag.ContinueOnError)
	model := fs.String("model", "mlp", "mnist or mlp")
	out := fs.String("out", "", "the weights file to write")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" {
		return errors.New("weights: -out is required")
	}
	switch *model {
	case "mnist":
		x, labels := mnistnode.Batch(1, 2)
		return mnistnode.New(mnistSeed, odeblock.Adjoint{}).Save(*out, x, labels)
	case "mlp":
		p, err := mlpfamily.New(mlpfamily.Base())
		if err != nil {
			return err
		}
		return p.Save(*out)
	}
	return fmt.Errorf("weights: unknown -model %q (want mnist or mlp)", *model)
}

// mnistModel returns the MNIST AdamNODE as an infer.Func: class scores
// of images [B, 1, 28, 28].
func mnistModel() *infer.Func[float32] {
	m := mnistnode.New(mnistSeed, odeblock.Adjoint{})
	fn := func(tp *autograd.Tape[float32], img autograd.Var[float32]) (autograd.Var[float32], error) {
		leaky := autograd.LeakyReLUAct(0.3)
		z := autograd.Conv2DAct(img, tp.Param(m.I1), tp.Param(m.IB1), tensor.ConvParams{}, leaky)
		z = autograd.Conv2DAct(z, tp.Param(m.I2), tp.Param(m.IB2), tensor.ConvParams{Pad: 1}, leaky)
		z = autograd.Conv2D(z, tp.Param(m.I3), tp.Param(m.IB3), tensor.ConvParams{})
		parts := autograd.Split(autograd.Concat(1, img, z), 1, 5, 5)
		zt, err := m.Block.Forward(tp, odeblock.AdamInitialState(parts[0], parts[1]))
		if err != nil {
			return autograd.Var[float32]{}, err
		}
		h := odeblock.Part(zt, 0, 3)
		return autograd.Linear(autograd.Flatten(h), tp.Param(m.HW), tp.Param(m.HB)), nil
	}
	return &infer.Func[float32]{Fn: fn, Parameters: m.Params(), Blocks: []*odeblock.Block[float32]{m.Block}}
}

// mlpModel returns the MLP AdamNODE of the weights file at path as an
// infer.Func: h(1) [B, 16] from h(0) = x [B, 16] and m(0) = v(0) = 0.
func mlpModel(path string) (*infer.Func[float32], error) {
	p, err := mlpfamily.Load(path)
	if err != nil {
		return nil, err
	}
	fam, err := odeblock.FamilyNamed(p.Config.Family)
	if err != nil {
		return nil, err
	}
	fn := func(tp *autograd.Tape[float32], h autograd.Var[float32]) (autograd.Var[float32], error) {
		zt, err := p.Block.Forward(tp, odeblock.InitialState(fam, h, tp.Const(tensor.New[float32](h.Shape()...))))
		if err != nil {
			return autograd.Var[float32]{}, err
		}
		return odeblock.Part(zt, 0, fam.Parts), nil
	}
	return &infer.Func[float32]{Fn: fn, Parameters: p.Params, Blocks: []*odeblock.Block[float32]{p.Block}}, nil
}

// newPool returns the infer.Pool of model with the weights file at path.
func newPool(model, path string, shape []int, o infer.Options) (*infer.Pool[float32], error) {
	o.Input = shape
	if model == "mnist" {
		trained := mnistModel()
		if _, err := layers.LoadCheckpointWith(path, trained.Parameters, nil, layers.LoadOptions{IgnoreUnknown: true}); err != nil {
			return nil, err
		}
		return infer.New[float32](trained, func() (*infer.Func[float32], error) { return mnistModel(), nil }, o)
	}
	trained, err := mlpModel(path)
	if err != nil {
		return nil, err
	}
	return infer.New[float32](trained, func() (*infer.Func[float32], error) { return mlpModel(path) }, o)
}

// modelShape returns the shape of one instance of model.
func modelShape(model string) ([]int, error) {
	switch model {
	case "mnist":
		return []int{1, 28, 28}, nil
	case "mlp":
		return []int{mlpfamily.Base().D}, nil
	}
	return nil, fmt.Errorf("unknown -model %q (want mnist or mlp)", model)
}

func runServe(args []string) error {
	fs := flag.NewFlagSet("loadtest serve", flag.ContinueOnError)
	model := fs.String("model", "mlp", "mnist or mlp")
	weights := fs.String("weights", "", "the weights file (loadtest weights)")
	addr := fs.String("addr", "127.0.0.1:8090", "address to listen on (loopback)")
	noBatch := fs.Bool("no-batching", false, "every request its own solve")
	replicas := fs.Int("replicas", 0, "forward passes at once, each on a replica computing on one core (0: GOMAXPROCS)")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile of the serving to this file")
	rows := fs.String("rows", "errors", "infer's Rows: errors (RowErrors), alone (RowsAlone) or as-built (RowsAsBuilt)")
	var bo serve.BatchOptions
	fs.IntVar(&bo.MaxBatch, "max-batch", serve.DefaultMaxBatch, "most instances in one batch")
	fs.DurationVar(&bo.MaxWait, "max-wait", serve.DefaultMaxWait, "how long a batch waits for more requests")
	fs.IntVar(&bo.MaxInFlight, "max-in-flight", serve.DefaultMaxInFlight, "batches solving at once")
	if err := fs.Parse(args); err != nil {
		return err
	}
	shape, err := modelShape(*model)
	if err != nil {
		return err
	}
	if *weights == "" || *replicas < 0 {
		return errors.New("serve: -weights is required and -replicas must be at least 0")
	}
	mode, ok := map[string]infer.Rows{"errors": infer.RowErrors, "alone": infer.RowsAlone, "as-built": infer.RowsAsBuilt}[*rows]
	if !ok {
		return fmt.Errorf("serve: unknown -rows %q (want errors, alone or as-built)", *rows)
	}
	if err := checkLoopback(*addr); err != nil {
		return err
	}
	pool, err := newPool(*model, *weights, shape, infer.Options{Replicas: *replicas, Rows: mode})
	if err != nil {
		return err
	}
	o := serve.Options{}
	if !*noBatch {
		o.Batch = &bo
	}
	s, err := serve.New([]serve.Model[float32]{{Name: *model, Input: shape, Predictor: pool}}, o)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	fmt.Printf("serving %s on http://%s (batching %v, %d replicas, rows %v)\n", *model, ln.Addr(), !*noBatch, pool.Replicas(), mode)
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return s.Serve(ctx, ln)
}

// checkLoopback refuses an address that is not loopback.
func checkLoopback(hostport string) error {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		return err
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("%s is not a loopback address: this load test stays on this machine", hostport)
	}
	return nil
}

// result is one round's line.
type result struct {
	Label       string  `json:"label"`
	Model       string  `json:"model"`
	Concurrency int     `json:"concurrency"`
	Requests    int     `json:"requests"`
	Errors      int     `json:"errors"`
	FirstError  string  `json:"first_error,omitempty"`
	Seconds     float64 `json:"seconds"`
	RPS         float64 `json:"rps"`
	P50ms       float64 `json:"p50_ms"`
	P95ms       float64 `json:"p95_ms"`
	P99ms       float64 `json:"p99_ms"`
	MaxMs       float64 `json:"max_ms"`
	// From the Go server's /metrics over the round (absent for a server
	// without them): its batches, their mean rows and mean solve time.
	Batches     float64 `json:"batches,omitempty"`
	MeanRows    float64 `json:"mean_batch_rows,omitempty"`
	MeanSolveMs float64 `json:"mean_batch_solve_ms,omitempty"`
	RSSStartMiB float64 `json:"rss_start_mib,omitempty"`
	RSSEndMiB   float64 `json:"rss_end_mib,omitempty"`
	// RSSSamples is the server's resident memory every -rss-every during
	// the round.
	RSSSamples []float64 `json:"rss_samples_mib,omitempty"`
	Load1      float64   `json:"load1"`
}

func runLoad(args []string) error {
	fs := flag.NewFlagSet("loadtest run", flag.ContinueOnError)
	target := fs.String("url", "http://127.0.0.1:8090", "the server's base URL (loopback)")
	model := fs.String("model", "mlp", "mnist or mlp: the instances sent and the model named")
	conc := fs.String("concurrency", "1,8,64", "comma-separated numbers of concurrent clients, one round each")
	duration := fs.Duration("duration", 5*time.Second, "length of each round (after the warm-up)")
	maxReq := fs.Int("requests", 20000, "most requests in a round")
	warmup := fs.Duration("warmup", time.Second, "warm-up before each round, not counted")
	pid := fs.Int("pid", 0, "the server's process id: report its resident memory")
	label := fs.String("label", "", "a name for the lines (e.g. go-batched)")
	every := fs.Duration("rss-every", 0, "with -pid: also sample the server's resident memory this often during each round")
	if err := fs.Parse(args); err != nil {
		return err
	}
	u, err := url.Parse(*target)
	if err != nil || u.Scheme != "http" {
		return fmt.Errorf("-url %q: want http://HOST:PORT", *target)
	}
	if err := checkLoopback(u.Host); err != nil {
		return err
	}
	if *duration <= 0 || *duration > 10*time.Minute || *maxReq < 1 {
		return errors.New("-duration must be in (0, 10m] and -requests at least 1")
	}
	shape, err := modelShape(*model)
	if err != nil {
		return err
	}
	levels, err := parseLevels(*conc)
	if err != nil {
		return err
	}
	bodies := makeBodies(*model, shape, 256)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1024, MaxConnsPerHost: 1024}, Timeout: time.Minute}
	enc := json.NewEncoder(os.Stdout)
	for _, c := range levels {
		if *warmup > 0 {
			round(client, *target+"/v1/predict", bodies, c, *warmup, 1<<30)
		}
		r := result{Label: *label, Model: *model, Concurrency: c, Load1: load1()}
		r.RSSStartMiB = rssMiB(*pid)
		m0 := scrape(client, *target+"/metrics")
		stopSampling := sampleRSS(*pid, *every)
		lat, errs, first, took := round(client, *target+"/v1/predict", bodies, c, *duration, *maxReq)
		r.RSSSamples = stopSampling()
		m1 := scrape(client, *target+"/metrics")
		r.RSSEndMiB = rssMiB(*pid)
		if n := m1["adamnode_batch_rows_count"] - m0["adamnode_batch_rows_count"]; n > 0 {
			r.Batches = n
			r.MeanRows = (m1["adamnode_batch_rows_sum"] - m0["adamnode_batch_rows_sum"]) / n
			r.MeanSolveMs = 1e3 * (m1["adamnode_batch_duration_seconds_sum"] - m0["adamnode_batch_duration_seconds_sum"]) / n
		}
		r.Requests, r.Errors, r.FirstError, r.Seconds = len(lat), errs, first, took.Seconds()
		r.RPS = float64(len(lat)) / took.Seconds()
		slices.Sort(lat)
		r.P50ms, r.P95ms, r.P99ms = quantile(lat, 0.50), quantile(lat, 0.95), quantile(lat, 0.99)
		if len(lat) > 0 {
			r.MaxMs = lat[len(lat)-1]
		}
		if err := enc.Encode(r); err != nil {
			return err
		}
	}
	return nil
}

// parseLevels reads -concurrency: comma-separated client counts.
func parseLevels(s string) ([]int, error) {
	var levels []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > 1024 {
			return nil, fmt.Errorf("-concurrency: %q is not a number from 1 to 1024", f)
		}
		levels = append(levels, n)
	}
	return levels, nil
}

// sampleRSS samples process pid's resident memory (MiB, one decimal)
// every interval until the returned function is called, which returns
// the samples; none when pid or every is not positive.
func sampleRSS(pid int, every time.Duration) (stop func() []float64) {
	done := make(chan struct{})
	sampled := make(chan []float64, 1)
	go func() {
		var samples []float64
		defer func() { sampled <- samples }()
		if pid <= 0 || every <= 0 {
			return
		}
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-tick.C:
				samples = append(samples, math.Round(rssMiB(pid)*10)/10)
			case <-done:
				return
			}
		}
	}()
	return func() []float64 {
		close(done)
		return <-sampled
	}
}

// makeBodies returns n request bodies, one instance each: blob images
// (bench/mnistnode.Batch) or N(0, 1) vectors.
func makeBodies(model string, shape []int, n int) [][]byte {
	numel := 1
	for _, d := range shape {
		numel *= d
	}
	var data []float32
	if model == "mnist" {
		x, _ := mnistnode.Batch(7, n)
		data = x.ReadData()
	} else {
		data = tensor.RandN[float32](rand.New(rand.NewPCG(7, 7)), 0, 1, n, numel).ReadData()
	}
	out := make([][]byte, n)
	for i := range out {
		b, _ := json.Marshal(map[string]any{"model": model, "input": data[i*numel : (i+1)*numel]})
		out[i] = b
	}
	return out
}

// round runs c closed-loop clients until d has passed or max requests
// were sent, and returns the successful requests' latencies in ms, the
// number of failed ones, the first failure and the round's length.
func round(client *http.Client, url string, bodies [][]byte, c int, d time.Duration, max int) ([]float64, int, string, time.Duration) {
	var mu sync.Mutex
	var lat []float64
	errs, first := 0, ""
	var sent int
	start := time.Now()
	deadline := start.Add(d)
	var wg sync.WaitGroup
	for w := range c {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; ; i += c {
				mu.Lock()
				if sent >= max || time.Now().After(deadline) {
					mu.Unlock()
					return
				}
				sent++
				mu.Unlock()
				t0 := time.Now()
				err := post(client, url, bodies[i%len(bodies)])
				ms := float64(time.Since(t0).Microseconds()) / 1e3
				mu.Lock()
				if err != nil {
					errs++
					if first == "" {
						first = err.Error()
					}
				} else {
					lat = append(lat, ms)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return lat, errs, first, time.Since(start)
}

func post(client *http.Client, url string, body []byte) error {
	resp, err := client.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%d: %s", resp.StatusCode, bytes.TrimSpace(b))
	}
	return nil
}

// scrape returns the batch metrics of a Go server's /metrics, summed
// over models (an empty map for a server without them).
func scrape(client *http.Client, url string) map[string]float64 {
	out := map[string]float64{}
	resp, err := client.Get(url)
	if err != nil {
		return out
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		return out
	}
	for _, line := range strings.Split(string(b), "\n") {
		name, rest, ok := strings.Cut(line, "{")
		if !ok || !strings.HasPrefix(name, "adamnode_batch_") || !(strings.HasSuffix(name, "_sum") || strings.HasSuffix(name, "_count")) {
			continue
		}
		f := strings.Fields(rest)
		if len(f) < 2 {
			continue
		}
		if v, err := strconv.ParseFloat(f[len(f)-1], 64); err == nil {
			out[name] += v
		}
	}
	return out
}

// quantile returns the q-quantile of sorted xs (nearest rank).
func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	i := int(q*float64(len(xs))+0.5) - 1
	return xs[min(max(i, 0), len(xs)-1)]
}

// rssMiB returns the resident memory of process pid in MiB (0 if pid is
// 0 or unreadable).
func rssMiB(pid int) float64 {
	if pid <= 0 {
		return 0
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
}

// load1 returns the one-minute load average (0 if unreadable).
func load1() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}
