package infer_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/adamnode/adamnode/infer"
	"github.com/adamnode/adamnode/layers"
	"github.com/adamnode/adamnode/models"
	"github.com/adamnode/adamnode/odeblock"
	"github.com/adamnode/adamnode/tensor"
)

// servedModel is one of the two models whose batched answers the
// measurement compares with their answers alone.
type servedModel struct {
	name  string
	input []int
	tol   odeblock.Options
	build func() (infer.Model[float32], error)
	batch func(n int, seed uint64) *tensor.Tensor[float32]
}

// mnistAdam is the MNIST AdamNODE classifier as cmd/adamnode trains it
// (models.Paper), with its random initial weights.
func mnistAdam() servedModel {
	cfg := models.Paper(models.AdamNODE, models.MNIST)
	return servedModel{
		name: "MNIST AdamNODE", input: []int{1, 28, 28}, tol: cfg.Solver,
		build: func() (infer.Model[float32], error) {
			return models.New[float32](rand.New(rand.NewPCG(1, 1)), cfg)
		},
		batch: func(n int, seed uint64) *tensor.Tensor[float32] {
			rng := rand.New(rand.NewPCG(seed, 1))
			x := tensor.New[float32](n, 1, 28, 28)
			for i := range x.Data() {
				x.Data()[i] = float32(rng.Float64()) // pixels in [0, 1)
			}
			return x
		},
	}
}

// mlpAdamBase is the MLP AdamNODE of bench/cmd/mlpbench's base
// configuration: f = two tanh layers of 64 on [h, t], D = 16, dopri5 at
// rtol = atol = 1e-6 on [0, 1]; a request is a row's whole initial state
// [h m v] (v = m²), h and m N(0, 1).
func mlpAdamBase() servedModel {
	const d = 16
	opt := odeblock.Options{Method: "dopri5", RTol: 1e-6, ATol: 1e-6}
	return servedModel{
		name: "MLP AdamNODE", input: []int{3 * d}, tol: opt,
		build: func() (infer.Model[float32], error) {
			rng := rand.New(rand.NewPCG(1, 1))
			f := layers.NewSequential[float32](layers.TimeConcat[float32]{},
				layers.NewLinear[float32](rng, d+1, 64), layers.Tanh[float32]{},
				layers.NewLinear[float32](rng, 64, 64), layers.Tanh[float32]{},
				layers.NewLinear[float32](rng, 64, d))
			layers.Prefix("f", f)
			fam, _ := odeblock.FamilyNamed("adamnode")
			dyn, _ := odeblock.NewFamily[float32](fam, f, odeblock.PaperScalars())
			return infer.ODE(&odeblock.Block[float32]{Dynamics: dyn, Solver: opt}), nil
		},
		batch: func(n int, seed uint64) *tensor.Tensor[float32] {
			rng := rand.New(rand.NewPCG(seed, 2))
			x := tensor.New[float32](n, 3*d)
			for r := range n {
				row := x.Data()[r*3*d : (r+1)*3*d]
				for j := range d {
					row[j] = float32(rng.NormFloat64())
					m := float32(rng.NormFloat64())
					row[d+j], row[2*d+j] = m, m*m
				}
			}
			return x
		},
	}
}

// gapAlone returns the largest |batched − alone| / (ATol + RTol·|alone|)
// over the outputs of requests requests, each batched with 63 random
// others (a batch of 64 of its own) or, when quiet, with 63 zero inputs
// (black images, states at rest), and its answer alone.
func gapAlone(t testing.TB, m servedModel, rows infer.Rows, requests int, quiet bool) float64 {
	first, err := m.build()
	if err != nil {
		t.Fatal(err)
	}
	p, err := infer.New[float32](first, m.build, infer.Options{Replicas: 1, Backend: tensor.Gonum(1), Input: m.input, Rows: rows})
	if err != nil {
		t.Fatal(err)
	}
	worst := 0.0
	for q := range requests {
		x := m.batch(64, uint64(100+q))
		r := (17 * q) % 64 // the request's place in its batch
		if quiet {
			w := x.Len() / 64
			clear(x.Data()[:r*w])
			clear(x.Data()[(r+1)*w:])
		}
		batched, err := p.Predict(context.Background(), x)
		if err != nil {
			t.Fatal(err)
		}
		alone, err := p.Predict(context.Background(), x.Slice(r, r+1))
		if err != nil {
			t.Fatal(err)
		}
		w := alone.Len()
		for j, a := range alone.ReadData() {
			gap := math.Abs(float64(batched.ReadData()[r*w+j]) - float64(a))
			worst = math.Max(worst, gap/(m.tol.ATol+m.tol.RTol*math.Abs(float64(a))))
		}
	}
	return worst
}

// TestMeasureBatchedVsAlone prints, for the MNIST AdamNODE and the MLP
// AdamNODE at their default tolerances, how far a request's answer moves
// when it is batched with 63 random others, or with 63 zero inputs, with
// each Rows mode. It runs only with ADAMNODE_MEASURE=1 (a minute of one
// core):
//
//	ADAMNODE_MEASURE=1 go test -run TestMeasureBatchedVsAlone -v ./infer
func TestMeasureBatchedVsAlone(t *testing.T) {
	if os.Getenv("ADAMNODE_MEASURE") != "1" {
		t.Skip("a measurement: set ADAMNODE_MEASURE=1")
	}
	for _, m := range []servedModel{mlpAdamBase(), mnistAdam()} {
		for _, quiet := range []bool{false, true} {
			others := "random"
			if quiet {
				others = "zero"
			}
			for _, rows := range []infer.Rows{infer.RowsAsBuilt, infer.RowErrors, infer.RowsAlone} {
				g := gapAlone(t, m, rows, 8, quiet)
				fmt.Printf("%s (rtol %g, atol %g), 63 %s neighbours, %v: largest |batched − alone| / tolerance over 8 requests: %.3g\n", m.name, m.tol.RTol, m.tol.ATol, others, rows, g)
			}
		}
	}
}

// BenchmarkPredictRows times a batch of 64 requests of the MLP AdamNODE
// (float32, one replica, one thread) with each Rows mode: run it with
// rounds alternated and compare the modes with benchstat -col /rows.
func BenchmarkPredictRows(b *testing.B) {
	m := mlpAdamBase()
	x := m.batch(64, 1)
	for _, rows := range []infer.Rows{infer.RowsAsBuilt, infer.RowErrors, infer.RowsAlone} {
		b.Run("rows="+rows.String(), func(b *testing.B) {
			first, err := m.build()
			if err != nil {
				b.Fatal(err)
			}
			p, err := infer.New[float32](first, m.build, infer.Options{Replicas: 1, Backend: tensor.Gonum(1), Input: m.input, Rows: rows})
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, err := p.Predict(context.Background(), x); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
