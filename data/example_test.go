package data_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"strings"

	"github.com/adamnode/adamnode/data"
)

// Batches from an in-memory set of six 1x2x2 images: shuffled by seed,
// batch size 4, the last partial batch kept.
func Example_loader() {
	images := &data.Images{
		Pixels:  make([]uint8, 6*4),
		Labels:  []int{0, 1, 2, 0, 1, 2},
		C:       1,
		H:       2,
		W:       2,
		Classes: 3,
	}
	for i := range images.Pixels {
		images.Pixels[i] = uint8(i * 10)
	}
	loader, err := data.NewLoader(images, data.LoaderOptions{BatchSize: 4, Shuffle: true, Seed: 7, Prefetch: 1})
	if err != nil {
		log.Fatal(err)
	}
	for epoch := range 2 {
		for b, err := range loader.Epoch(context.Background(), epoch) {
			if err != nil {
				log.Fatal(err)
			}
			// b is valid until this loop body returns.
			fmt.Printf("epoch %d: X %v images %v labels %v\n", epoch, b.X.Shape(), b.Indices, b.Labels)
		}
	}
	// Output:
	// epoch 0: X [4 1 2 2] images [3 2 0 4] labels [0 2 0 1]
	// epoch 0: X [2 1 2 2] images [5 1] labels [2 1]
	// epoch 1: X [4 1 2 2] images [2 1 0 5] labels [2 1 0 2]
	// epoch 1: X [2 1 2 2] images [4 3] labels [1 0]
}

// Training on Fashion-MNIST from Debian's dataset-fashion-mnist package, with
// a validation set held out and a subset for a quick run.
func ExampleLoadFashionMNIST() {
	train, err := data.LoadFashionMNIST(data.FashionMNISTDir, data.Train)
	if err != nil {
		log.Fatal(err)
	}
	train, val := train.Shuffled(1).SplitAt(55000)
	mean, std := train.ChannelStats()
	loader, err := data.NewLoader(train, data.LoaderOptions{
		BatchSize: 32, Shuffle: true, Seed: 1, DropLast: true,
		Subset: 3200, Mean: mean, Std: std, Prefetch: 2,
	})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	for epoch := range 10 {
		for b, err := range loader.Epoch(ctx, epoch) {
			if err != nil {
				log.Fatal(err)
			}
			_ = b // train on b.X ([32 1 28 28]) and b.Labels
		}
	}
	fmt.Println(val.Len(), "validation images")
}

// The Silverbox recording, with the reference code's preprocessing, and its
// input interpolated between samples.
func ExampleReadSilverbox() {
	csv := "\"V1\",\"V2\",\n0.01,0.02,\n0.03,0.04,\n0.05,0.06"
	sb, err := data.ReadSilverbox(strings.NewReader(csv), "sb.csv", data.SilverboxReference())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d samples, V1 mean %.2f removed, scaled by %g\n", sb.Len(), sb.Mean[0], sb.Scale)
	for _, t := range []float64{0, 0.5, 2, 5} {
		fmt.Printf("Input(%g) = %.1f\n", t, sb.Input(t))
	}
	// Output:
	// 3 samples, V1 mean 0.03 removed, scaled by 100
	// Input(0) = -2.0
	// Input(0.5) = -1.0
	// Input(2) = 2.0
	// Input(5) = 2.0
}

// A malformed file is an error that says which file, where and what.
func ExampleFormatError() {
	csv := "\"V1\",\"V2\",\n0.01,0.02,\n0.03,oops,\n"
	_, err := data.ReadSilverbox(strings.NewReader(csv), "sb.csv", data.SilverboxOptions{})
	fmt.Println(err)
	var fe *data.FormatError
	if errors.As(err, &fe) {
		fmt.Println("line", fe.Line)
	}

	idx := []byte{0, 0, 8, 1, 0, 0, 0, 3, 4, 12, 1} // three labels, one of them 12
	_, err = data.ReadIDXLabels(strings.NewReader(string(idx)), "labels.idx", data.MNISTClasses)
	fmt.Println(err)
	// Output:
	// data: sb.csv:3: V2 value "oops" is not a finite number
	// line 3
	// data: labels.idx: byte offset 9: label 12 of example 1 is out of range [0, 10)
}
