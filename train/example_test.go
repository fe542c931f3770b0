package train_test

import (
	"context"
	"fmt"
	"os"

	"github.com/adamnode/adamnode/data"
	"github.com/adamnode/adamnode/optim"
	"github.com/adamnode/adamnode/train"
)

// Train a classifier for three epochs with a checkpoint and a CSV in a
// directory; a second Run with Resume finds the work done.
func ExampleRun() {
	dir, _ := os.MkdirTemp("", "train-example")
	defer os.RemoveAll(dir)
	tr, _ := data.NewLoader(data.FakeImages(40, 2, 4, 4, 3, 1), data.LoaderOptions{BatchSize: 8, Shuffle: true, Seed: 3})
	te, _ := data.NewLoader(data.FakeImages(16, 2, 4, 4, 3, 2), data.LoaderOptions{BatchSize: 16})
	m := newLinear[float32](7) // any model with Forward and Params
	opt := optim.NewAdam(m.Params(), optim.AdamDefaults())
	cfg := train.Config{Name: "linear", Dir: dir, Epochs: 3, Clip: 10, Quiet: true}
	res, err := train.Run[float32](context.Background(), cfg, m, opt, tr, te)
	if err != nil {
		panic(err)
	}
	fmt.Println(len(res.Rows), "rows; the training loss fell:", res.Rows[4].Loss < res.Rows[0].Loss)

	cfg.Resume = true
	res, err = train.Run[float32](context.Background(), cfg, m, opt, tr, te)
	fmt.Println("resumed:", res.Ran, len(res.Rows), "rows", err)
	// Output:
	// 6 rows; the training loss fell: true
	// resumed: false 6 rows <nil>
}
