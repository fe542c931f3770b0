package data_test

import (
	"context"
	"fmt"
	"log"
	"math/rand/v2"

	"github.com/adamnode/adamnode/data"
)

// Two series sampled at different times, one with a missing channel, padded
// to the union of their times.
func ExampleNewSeriesBatch() {
	series := []data.Series{
		{Times: []float64{0, 1, 3}, Values: []float64{1, 10, 2, 20, 3, 30}, C: 2},
		{Times: []float64{1, 2}, Values: []float64{4, 0, 5, 50}, Mask: []bool{true, false, true, true}, C: 2},
	}
	b, err := data.NewSeriesBatch[float32](series)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("times", b.Times, "values", b.Values.Shape(), "positions", b.Pos)
	for i := range b.Len() {
		for j, t := range b.Times {
			fmt.Printf("series %d t=%g: values %v mask %v\n", i, t,
				[]float32{b.Values.At(i, j, 0), b.Values.At(i, j, 1)},
				[]float32{b.Mask.At(i, j, 0), b.Mask.At(i, j, 1)})
		}
	}

	// Unsorted times are an error that names the series and the positions.
	series[1].Times = []float64{2, 1}
	_, err = data.NewSeriesBatch[float32](series)
	fmt.Println(err)
	// Output:
	// times [0 1 2 3] values [2 4 2] positions [[0 1 3] [1 2]]
	// series 0 t=0: values [1 10] mask [1 1]
	// series 0 t=1: values [2 20] mask [1 1]
	// series 0 t=2: values [0 0] mask [0 0]
	// series 0 t=3: values [3 30] mask [1 1]
	// series 1 t=0: values [0 0] mask [0 0]
	// series 1 t=1: values [4 0] mask [1 0]
	// series 1 t=2: values [5 50] mask [1 1]
	// series 1 t=3: values [0 0] mask [0 0]
	// data: NewSeriesBatch: series 1: time 1 at position 1 is before time 2 at position 0; times must be strictly increasing
}

// The latent ODE toy data: noisy sine waves sampled on subsets of a shared
// grid, split for extrapolation and batched with a seeded shuffle.
func ExampleSineWaves() {
	rng := rand.New(rand.NewPCG(1, 2))
	series, waves, err := data.SineWaves(rng, 6, data.SineOptions{
		Points: 4, TMax: 5, Grid: 11, MinFreq: 0.2, MaxFreq: 0.5, Noise: 0.01,
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("series 0: times %v, frequency %.3f\n", series[0].Times, waves[0].Freq)

	// Observe before t = 2.5, predict after.
	observed, _ := data.SplitTimes(series, 2.5)
	loader, err := data.NewSeriesLoader[float32](observed, data.SeriesLoaderOptions{BatchSize: 4, Shuffle: true, Seed: 7})
	if err != nil {
		log.Fatal(err)
	}
	for b, err := range loader.Epoch(context.Background(), 0) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println("series", b.Indices, "times", b.Times, "values", b.Values.Shape())
	}
	// Output:
	// series 0: times [0.5 2.5 3 4.5], frequency 0.403
	// series [3 2 0 4] times [0 0.5 1.5] values [4 3 1]
	// series [5 1] times [0 1 2] values [2 3 1]
}
