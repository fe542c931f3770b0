// Command mlpbench times training iterations of the MLP neural-ODE family of
// package mlpfamily and writes each configuration's weights file for the
// PyTorch peer (bench/torch_mlp.py).
//
//	mlpbench -list
//	mlpbench -config adamnode_w64_l2_tanh_b512_adjoint -iters 10 -out weights/
//	mlpbench -config all -iters 10 -out weights/
//	mlpbench -config all -save-only -out weights/
//	mlpbench -config adamnode_w64_l2_tanh_b512_adjoint -dtype float64 -out weights64/
//
// -dtype float64 builds and trains the configurations in float64 (their
// weights files then hold F64 tensors and say "dtype": "float64" in their
// configuration); the default is float32. -load runs a file in its own
// dtype (a -dtype that differs from it is an error).
// For each configuration it writes NAME.safetensors into -out (unless -out
// is empty; -save-only writes the file and stops there), runs -warmup
// iterations, times -iters more and prints one JSON line:
//
//	{"config": NAME, "side": "adamnode", "iter_seconds": median seconds per
//	 iteration, "fwd_nfe": mean forward NFE of the timed iterations,
//	 "bwd_nfe": mean backward NFE, "peak_rss_mb": the process's peak RSS,
//	 "fwd_nfe_first", "bwd_nfe_first", "loss_first": the first iteration's
//	 (at the file's weights), "loss_last", "iters", "warmup", "threads"
//	 (GOMAXPROCS), "backend", "grad_mode", "dtype", "replicas", "shard",
//	 "shard_solve"}
//
// The block solves the batch as GOMAXPROCS separate ODEs at once, one per
// worker, each on a shard of the rows (odeblock.Block.Shards), as a user
// would set it for an MLP field on a multi-core CPU; -shard-solve 0 times
// one solve of the whole batch. f is wrapped in odeblock.ShardedField(f, 0):
// within one solve of the whole batch, sharded over the workers where the
// batch is large enough to pay; -shard=false times the plain field.
//
// With -config all, each configuration runs in a process of its own (this
// command, re-executed), so that each peak RSS is its own. Threads: set
// GOMAXPROCS (and, for the OpenBLAS build, OPENBLAS_NUM_THREADS=1: the
// backend parallelises over GOMAXPROCS workers itself).
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"time"

	"github.com/adamnode/adamnode/bench/mlpfamily"
	"github.com/adamnode/adamnode/internal/peakrss"
	"github.com/adamnode/adamnode/tensor"
)

// Result is the JSON line printed for one configuration.
type Result struct {
	Config      string  `json:"config"`
	Side        string  `json:"side"`
	IterSeconds float64 `json:"iter_seconds"`
	FwdNFE      float64 `json:"fwd_nfe"`
	BwdNFE      float64 `json:"bwd_nfe"`
	PeakRSSMB   float64 `json:"peak_rss_mb"`

	FwdNFEFirst int     `json:"fwd_nfe_first"`
	BwdNFEFirst int     `json:"bwd_nfe_first"`
	LossFirst   float64 `json:"loss_first"`
	LossLast    float64 `json:"loss_last"`
	Iters       int     `json:"iters"`
	Warmup      int     `json:"warmup"`
	Threads     int     `json:"threads"`
	Backend     string  `json:"backend"`
	KernelPath  string  `json:"kernel_path"` // tensor.KernelPath: avx512, avx2, neon or generic
	GradMode    string  `json:"grad_mode"`
	DType       string  `json:"dtype"` // float32 or float64 (-dtype)
	Replicas    int     `json:"replicas"`
	Shard       bool    `json:"shard"`       // f sharded where that pays (-shard)
	ShardSolve  int     `json:"shard_solve"` // Block.Shards (-shard-solve)
}

func main() {
	o := parseOptions()
	mlpfamily.ShardField = o.shard
	mlpfamily.ShardSolve = o.solves
	if bad := o.check(); bad != "" {
		fmt.Fprintln(os.Stderr, "mlpbench:", bad)
		flag.Usage()
		os.Exit(2)
	}
	if o.prof != "" {
		f, err := os.Create(o.prof)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "mlpbench:", err)
			os.Exit(1)
		}
		defer f.Close()
		defer pprof.StopCPUProfile()
	}
	if o.list {
		for _, c := range mlpfamily.Configs() {
			fmt.Println(c.Name)
		}
		return
	}
	if o.name == "all" {
		if err := runAll(); err != nil {
			fmt.Fprintln(os.Stderr, "mlpbench:", err)
			os.Exit(1)
		}
		return
	}
	r, err := runConfig(o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "mlpbench:", err)
		os.Exit(1)
	}
	if r != nil {
		b, _ := json.Marshal(r)
		fmt.Println(string(b))
	}
}

// runConfig builds the problem of the command line in its dtype and, unless
// -save-only, times it; its result is nil under -save-only.
func runConfig(o options) (*Result, error) {
	c, err := o.config()
	if err != nil {
		return nil, err
	}
	if c.Float64() {
		return runIn[float64](o, c)
	}
	return runIn[float32](o, c)
}

// runIn is runConfig in T, c's dtype.
func runIn[T tensor.Float](o options, c mlpfamily.Config) (*Result, error) {
	p, err := problem[T](o, c)
	if err != nil || o.save {
		return nil, err
	}
	r, err := run(p, o.warmup, o.iters, o.reps)
	return &r, err
}

// options are mlpbench's flags.
type options struct {
	name, out, load, prof string
	dtype                 string
	list, save, shard     bool
	iters, warmup         int
	reps, solves          int
}

// parseOptions parses the command line into options.
func parseOptions() options {
	var o options
	flag.StringVar(&o.name, "config", "", "configuration name, or all (see -list)")
	flag.BoolVar(&o.list, "list", false, "print the configuration names, one a line, and exit")
	flag.IntVar(&o.iters, "iters", 10, "timed iterations")
	flag.IntVar(&o.warmup, "warmup", 2, "untimed iterations before them (at least 1)")
	flag.StringVar(&o.out, "out", "", "directory for the weights files NAME.safetensors (empty: write none)")
	flag.BoolVar(&o.save, "save-only", false, "write the weights file into -out, time nothing")
	flag.StringVar(&o.load, "load", "", "run the problem of this weights file instead of -config")
	flag.StringVar(&o.dtype, "dtype", "", "element type: float32 or float64 (empty: float32, or -load's file's)")
	flag.IntVar(&o.reps, "replicas", 1, "data-parallel replicas, each with one worker and a share of the batch (mlpfamily.Replicas)")
	flag.BoolVar(&o.shard, "shard", true, "evaluate f on shards of the batch where that pays (odeblock.ShardedField; mlpfamily.ShardField)")
	flag.IntVar(&o.solves, "shard-solve", runtime.GOMAXPROCS(0), "solve the batch as this many separate ODEs at once (odeblock.Block.Shards; mlpfamily.ShardSolve); 0 or 1: one solve")
	flag.StringVar(&o.prof, "cpuprofile", "", "write a CPU profile of the whole run here (empty: none)")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: mlpbench -config NAME|all [-dtype float32|float64] [-iters N] [-warmup N] [-out DIR] [-save-only] | -load FILE | -list\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	return o
}

// check returns what is wrong with the command line, or "".
func (o options) check() string {
	switch {
	case flag.NArg() > 0:
		return fmt.Sprintf("unexpected arguments %q", flag.Args())
	case o.iters < 1 || o.warmup < 1:
		return "-iters and -warmup must be at least 1"
	case o.reps < 1:
		return "-replicas must be at least 1"
	case o.solves < 0:
		return "-shard-solve must be at least 0"
	case o.dtype != "" && !slices.Contains(mlpfamily.DTypes, o.dtype):
		return fmt.Sprintf("-dtype %q: want float32 or float64", o.dtype)
	case o.list:
	case (o.name == "") == (o.load == ""):
		return "give one of -config and -load"
	case o.save && (o.out == "" || o.load != ""):
		return "-save-only needs -out and -config"
	}
	return ""
}

// config returns the configuration of -load's file, or of -config in
// -dtype (float32 if empty); a -dtype other than -load's file's is an
// error.
func (o options) config() (mlpfamily.Config, error) {
	if o.load == "" {
		c, err := mlpfamily.Lookup(o.name)
		if err == nil && o.dtype != "" {
			c = c.WithDType(o.dtype)
		}
		return c, err
	}
	c, err := mlpfamily.ReadConfig(o.load)
	if err == nil && o.dtype != "" && o.dtype != c.ElemType() {
		err = fmt.Errorf("%s holds a %s problem, not -dtype %s", o.load, c.ElemType(), o.dtype)
	}
	return c, err
}

// problem returns the problem of configuration c (o.config's) in T: -load's
// file's, or a new one whose weights file it writes into -out if given.
func problem[T tensor.Float](o options, c mlpfamily.Config) (*mlpfamily.ProblemOf[T], error) {
	if o.load != "" {
		return mlpfamily.LoadOf[T](o.load)
	}
	p, err := mlpfamily.NewOf[T](c)
	if err != nil || o.out == "" {
		return p, err
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return nil, err
	}
	return p, p.Save(filepath.Join(o.out, p.Config.Name+".safetensors"))
}

// runAll runs every configuration in a child process with this process's
// flags, -config replaced.
func runAll() error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	var args []string
	flag.Visit(func(f *flag.Flag) {
		if f.Name != "config" {
			args = append(args, "-"+f.Name+"="+f.Value.String())
		}
	})
	for _, c := range mlpfamily.Configs() {
		cmd := exec.Command(exe, append(slices.Clone(args), "-config="+c.Name)...)
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("%s: %w", c.Name, err)
		}
	}
	return nil
}

// run does warmup untimed and iters timed training iterations.
func run[T tensor.Float](p *mlpfamily.ProblemOf[T], warmup, iters, k int) (Result, error) {
	r := Result{Config: p.Config.Name, Side: "adamnode", Iters: iters, Warmup: warmup,
		Threads: runtime.GOMAXPROCS(0), Backend: tensor.Default().Name(), KernelPath: tensor.KernelPath(), GradMode: p.Config.Mode, DType: mlpfamily.DTypeOf[T](),
		Replicas: k, Shard: mlpfamily.ShardField, ShardSolve: mlpfamily.ShardSolve}
	var stepper interface {
		Step() (mlpfamily.IterStats, error)
	} = p
	if k > 1 {
		reps, err := mlpfamily.NewReplicas(p, k)
		if err != nil {
			return r, err
		}
		stepper = reps
	}
	for i := range warmup {
		st, err := stepper.Step()
		if err != nil {
			return r, err
		}
		if i == 0 {
			r.FwdNFEFirst, r.BwdNFEFirst, r.LossFirst = st.FwdNFE, st.BwdNFE, st.Loss
		}
	}
	secs := make([]float64, iters)
	for i := range secs {
		start := time.Now()
		st, err := stepper.Step()
		secs[i] = time.Since(start).Seconds()
		if err != nil {
			return r, err
		}
		r.FwdNFE += float64(st.FwdNFE) / float64(iters)
		r.BwdNFE += float64(st.BwdNFE) / float64(iters)
		r.LossLast = st.Loss
	}
	r.IterSeconds = median(secs)
	r.PeakRSSMB, _ = peakrss.MiB() // 0 where the system does not report it
	return r, nil
}

func median(x []float64) float64 {
	s := slices.Sorted(slices.Values(x))
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
