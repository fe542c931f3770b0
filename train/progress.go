package train

import (
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// progress is the training progress bar: one bar per epoch, drawn on
// standard error with the batch count, elapsed time and ETA, and a
// description carrying the running loss, accuracy and NFE. It draws
// nothing when standard error is not a terminal or when quiet is set.
type progress struct {
	on  bool
	bar *progressbar.ProgressBar
}

func newProgress(quiet bool) *progress {
	return &progress{on: !quiet && term.IsTerminal(int(os.Stderr.Fd()))}
}

// start begins a bar of n batches of which done are already done.
func (p *progress) start(n, done int) {
	if !p.on {
		return
	}
	p.bar = progressbar.NewOptions(n,
		progressbar.OptionSetWriter(os.Stderr),
		progressbar.OptionSetWidth(24),
		progressbar.OptionShowCount(),
		progressbar.OptionSetItsString("batch"),
		progressbar.OptionShowIts(),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
	)
	p.bar.Set(done)
}

// set moves the bar to done batches with the given description.
func (p *progress) set(done int, desc string) {
	if p.bar == nil {
		return
	}
	p.bar.Describe(desc)
	p.bar.Set(done)
}

// finish clears the bar.
func (p *progress) finish() {
	if p.bar == nil {
		return
	}
	p.bar.Finish()
	p.bar = nil
}
