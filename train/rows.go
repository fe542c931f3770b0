package train

import (
	"encoding/csv"
	"io"
	"strconv"
	"strings"

	"github.com/adamnode/adamnode/layers"
)

// CSVHeader is the first line of every CSV the loop writes.
func CSVHeader() []string {
	return []string{"model", "split", "epoch", "loss", "accuracy", "forward_nfe", "backward_nfe", "seconds", "elapsed"}
}

// Row is one line of the CSV: one model, one epoch, one split ("train" or
// "test"). NFEs are means per batch: the forward and backward evaluations
// of the model's ODE block in one training iteration (train), or in one
// evaluation batch (test, where the backward NFE is 0); 0 for a model that
// does not report them (Counted). Seconds is the wall time of that split
// of the epoch; Elapsed the sum of Seconds of the run so far.
type Row struct {
	Model    string  `json:"model"`
	Split    string  `json:"split"`
	Epoch    int     `json:"epoch"`
	Loss     float64 `json:"loss"`
	Accuracy float64 `json:"accuracy"`
	FwdNFE   float64 `json:"forward_nfe"`
	BwdNFE   float64 `json:"backward_nfe"`
	Seconds  float64 `json:"seconds"`
	Elapsed  float64 `json:"elapsed"`
}

// Record returns the row as CSV fields, in CSVHeader's order.
func (r Row) Record() []string {
	g := func(v float64, prec int) string { return strconv.FormatFloat(v, 'g', prec, 64) }
	return []string{r.Model, r.Split, strconv.Itoa(r.Epoch), g(r.Loss, 8), g(r.Accuracy, 8),
		g(r.FwdNFE, 8), g(r.BwdNFE, 8), strconv.FormatFloat(r.Seconds, 'f', 3, 64), strconv.FormatFloat(r.Elapsed, 'f', 3, 64)}
}

// WriteCSV writes the rows under the header to path, atomically.
func WriteCSV(path string, rows []Row) error {
	var b strings.Builder
	w := csv.NewWriter(&b)
	w.Write(CSVHeader())
	for _, r := range rows {
		w.Write(r.Record())
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return err
	}
	return layers.WriteFileAtomic(path, func(f io.Writer) error {
		_, err := io.WriteString(f, b.String())
		return err
	})
}

// progressSums is the state of a partly trained epoch, saved with an
// interrupted run's checkpoint so that a resumed epoch ends with the same
// numbers as an uninterrupted one.
type progressSums struct {
	Batches int     `json:"batches"`  // training batches done
	LossSum float64 `json:"loss_sum"` // Σ batch-mean loss × batch size
	Correct int     `json:"correct"`  // correct predictions
	Seen    int     `json:"seen"`     // images trained on
	FwdNFE  int     `json:"fwd_nfe"`  // Σ forward NFE over the batches
	BwdNFE  int     `json:"bwd_nfe"`  // Σ backward NFE over the batches
	Seconds float64 `json:"seconds"`  // wall time spent on them
}

// add adds a training step's numbers, taking seconds, to p.
func (p *progressSums) add(st stepStats, seconds float64) {
	p.Batches++
	p.LossSum += st.loss
	p.Correct += st.correct
	p.Seen += st.seen
	p.FwdNFE += st.fwd
	p.BwdNFE += st.bwd
	p.Seconds += seconds
}

// row returns the training row of an epoch whose sums are p.
func (p progressSums) row(name string, epoch int, elapsed float64) Row {
	return Row{Model: name, Split: "train", Epoch: epoch,
		Loss: p.LossSum / float64(p.Seen), Accuracy: float64(p.Correct) / float64(p.Seen),
		FwdNFE: float64(p.FwdNFE) / float64(p.Batches), BwdNFE: float64(p.BwdNFE) / float64(p.Batches),
		Seconds: p.Seconds, Elapsed: elapsed + p.Seconds}
}
