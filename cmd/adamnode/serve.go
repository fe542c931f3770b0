package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/adamnode/adamnode/infer"
	"github.com/adamnode/adamnode/serve"
)

// runServe serves a checkpoint of train over HTTP (package serve) until
// ctx is done (SIGTERM or Ctrl-C), then finishes the requests in flight.
func runServe(ctx context.Context, args []string, out io.Writer) error {
	fs := newFlags("serve")
	ckpt := fs.String("checkpoint", "", "the model to serve: a MODEL.safetensors written by adamnode train (its configuration is read from the file's metadata; --model, --dataset and --nhid give it for another file)")
	addr := fs.String("addr", "127.0.0.1:8080", "address to listen on, host:port (port 0: any free port)")
	var co serve.CheckpointOptions
	fs.StringVar(&co.Name, "name", "", "the model's name in requests (default: the checkpoint's model, e.g. adamnode)")
	fs.StringVar(&co.Model, "model", "", "for a file without train's metadata (a PyTorch state_dict under this module's names): the model, node, anode, sonode, hbnode, ghbnode or adamnode")
	fs.StringVar(&co.Dataset, "dataset", "", "for such a file: the dataset the model takes, fashion-mnist, mnist or cifar10")
	fs.IntVar(&co.NHid, "nhid", 0, "for such a file: the hidden width (0: the checkpoint's, else the paper's)")
	fs.StringVar(&co.Method, "method", "", "solver method instead of the checkpoint's")
	fs.Float64Var(&co.Tol, "tol", 0, "solver tolerance instead of the checkpoint's (rtol = atol)")
	fs.IntVar(&co.MaxSteps, "max-steps", 0, "at most this many solver steps per solve, else the request fails with a 422 (0: the solver's default)")
	fs.IntVar(&co.Replicas, "replicas", 0, "forward passes at once, each on a replica of the model computing on one core (0: one per core, GOMAXPROCS)")
	rows := fs.String("rows", "errors", "how a batched request's answer is kept independent of its neighbours: errors (each row's error controlled, infer.RowErrors), alone (each row solved alone, bit for bit) or as-built (one norm over the batch)")
	noBatch := fs.Bool("no-batching", false, "run every request as its own solve instead of batching concurrent requests")
	var bo serve.BatchOptions
	fs.IntVar(&bo.MaxBatch, "max-batch", serve.DefaultMaxBatch, "most instances in one batched solve")
	fs.DurationVar(&bo.MaxWait, "max-wait", serve.DefaultMaxWait, "how long a batch's first request waits for others, while another batch runs or after a batch of several (negative: no waiting)")
	fs.IntVar(&bo.MaxInFlight, "max-in-flight", serve.DefaultMaxInFlight, "batches solving at once")
	var o serve.Options
	fs.Int64Var(&o.MaxBodyBytes, "max-body", serve.DefaultMaxBodyBytes, "largest request body in bytes (larger: 413)")
	fs.IntVar(&o.MaxInstances, "max-instances", serve.DefaultMaxInstances, "most instances in one request (more: 413)")
	fs.DurationVar(&o.Timeout, "timeout", serve.DefaultTimeout, "time limit of each request, queueing and solving (past it: 503)")
	fs.DurationVar(&o.ShutdownTimeout, "shutdown-timeout", serve.DefaultShutdownTimeout, "on SIGTERM, how long to wait for the requests in flight")
	if err := parseFlags(fs, args, out); err != nil {
		return err
	}
	if err := checkServeFlags(*ckpt, *rows, &co, bo, o); err != nil {
		return err
	}
	if bo.MaxWait == 0 {
		bo.MaxWait = -1 // --max-wait 0: no waiting (BatchOptions' 0 is its default)
	}
	if !*noBatch {
		o.Batch = &bo
	}
	m, err := serve.LoadCheckpoint(*ckpt, co)
	if err != nil {
		return err
	}
	s, err := serve.New([]serve.Model[float32]{m}, o)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		s.Close()
		return usagef("serve: --addr %s: %v", *addr, err)
	}
	batching := "no batching"
	if o.Batch != nil {
		batching = fmt.Sprintf("batches of up to %d within %v, %d in flight", bo.MaxBatch, max(bo.MaxWait, 0), bo.MaxInFlight)
	}
	fmt.Fprintf(out, "serving %s (instances of shape %v) from %s on http://%s: %s\n", m.Name, m.Input, *ckpt, ln.Addr(), batching)
	start := time.Now()
	if err := s.Serve(ctx, ln); err != nil {
		return err
	}
	fmt.Fprintf(out, "shut down after %v, the requests in flight answered\n", time.Since(start).Round(time.Millisecond))
	return nil
}

// checkServeFlags checks serve's flags, naming the one that is wrong,
// and sets co.Rows from --rows.
func checkServeFlags(ckpt, rows string, co *serve.CheckpointOptions, bo serve.BatchOptions, o serve.Options) error {
	switch {
	case ckpt == "":
		return usagef("serve: --checkpoint is required: the MODEL.safetensors of a train run (e.g. out/train/adamnode.safetensors)")
	case co.Replicas < 0 || co.Replicas > 64:
		return usagef("serve: --replicas must be from 0 to 64, got %d", co.Replicas)
	case bo.MaxBatch < 1:
		return usagef("serve: --max-batch must be at least 1, got %d", bo.MaxBatch)
	case bo.MaxInFlight < 1:
		return usagef("serve: --max-in-flight must be at least 1, got %d", bo.MaxInFlight)
	case o.MaxBodyBytes < 1 || o.MaxInstances < 1:
		return usagef("serve: --max-body and --max-instances must be at least 1")
	case o.Timeout <= 0 || o.ShutdownTimeout <= 0:
		return usagef("serve: --timeout and --shutdown-timeout must be positive")
	case co.NHid < 0:
		return usagef("serve: --nhid must be ≥ 0 (0: the checkpoint's), got %d", co.NHid)
	case co.Tol < 0 || co.Tol >= 1 || co.MaxSteps < 0:
		return usagef("serve: --tol must be in (0, 1) (0: the checkpoint's) and --max-steps ≥ 0")
	}
	switch rows {
	case "errors":
		co.Rows = infer.RowErrors
	case "alone":
		co.Rows = infer.RowsAlone
	case "as-built":
		co.Rows = infer.RowsAsBuilt
	default:
		return usagef("serve: unknown --rows %q (use errors, alone or as-built)", rows)
	}
	return nil
}
