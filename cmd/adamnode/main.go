// Command adamnode trains the paper's continuous-depth models and reproduces
// its experiments.
//
// Usage:
//
//	adamnode train        [flags]   one model on one dataset
//	adamnode compare      [flags]   the six models, the paper's Figure 2
//	adamnode silverbox    [flags]   untrained models on the Silverbox recording, Figure 3
//	adamnode trajectories [flags]   gradient flow, heavy ball and Adam ODEs, Figure 1
//	adamnode serve        [flags]   a trained model over HTTP (docs/serving.md)
//
// Run "adamnode COMMAND -h" for a command's flags. A bad command line is a
// one-line error and exit code 2; a failed run exits with code 1. Ctrl-C
// stops train and compare after the current batch, saves a checkpoint that
// --resume continues from, and exits with code 130; a second Ctrl-C quits
// at once.
//
// train and compare take the same flags for data, solver and optimiser
// (their defaults are the paper's settings for the dataset); for quick runs,
// --subset and --test-subset cut the data and --nhid or --nhid-scale shrink
// the models' hidden width. Each model writes MODEL.csv (a row per epoch
// and split) and MODEL.safetensors (parameters, Adam state and the run's
// metadata) into --out after every epoch; compare adds compare.csv,
// batches.csv (every training batch of every model), table.md, loss.png and
// efficacy.png (per batch; --replot redraws them from the CSVs).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/adamnode/adamnode/train"
)

// command is one subcommand: run parses args and does the work, writing
// its report to out. ctx is cancelled on Ctrl-C.
type command struct {
	name, summary string
	run           func(ctx context.Context, args []string, out io.Writer) error
}

func commands() []command {
	return []command{
		{"train", "train one model on one dataset", runTrain},
		{"compare", "the six models in the paper's configurations (Figure 2)", runCompare},
		{"silverbox", "untrained models driven by the Silverbox recording (Figure 3)", runSilverbox},
		{"trajectories", "gradient flow, heavy ball and Adam ODEs on test functions (Figure 1)", runTrajectories},
		{"serve", "a checkpoint of train over HTTP, batching concurrent requests", runServe},
	}
}

// usageError is a bad command line: reported in one line, exit code 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// usagef returns a usageError; the message should say how to fix it.
func usagef(format string, args ...any) error { return &usageError{fmt.Sprintf(format, args...)} }

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: adamnode COMMAND [flags]")
	fmt.Fprintln(w, "commands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-13s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, `run "adamnode COMMAND -h" for its flags`)
}

// newFlags returns a flag set for a subcommand that reports errors as
// usageErrors instead of exiting.
func newFlags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet("adamnode "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

// parseFlags parses args into fs; -h prints the flags and returns
// flag.ErrHelp; other errors become usageErrors.
func parseFlags(fs *flag.FlagSet, args []string, out io.Writer) error {
	err := fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fs.SetOutput(out)
		fmt.Fprintf(out, "usage of %s:\n", fs.Name())
		fs.PrintDefaults()
		return flag.ErrHelp
	case err != nil:
		return usagef("%s: %v (see %s -h)", fs.Name(), err, fs.Name())
	case fs.NArg() > 0:
		return usagef("%s: unexpected argument %q (see %s -h)", fs.Name(), fs.Arg(0), fs.Name())
	}
	return nil
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes the command line and returns the exit code.
func run(args []string, out, errOut io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(out)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	finished := make(chan struct{})
	defer close(finished) // before stop: the goroutine below then stays silent
	go func() {
		select {
		case <-finished:
			return
		case <-ctx.Done():
		}
		select {
		case <-finished: // ctx was cancelled by stop on the way out
			return
		default:
		}
		// After the first signal the default handling returns, so that a
		// second Ctrl-C ends the program at once.
		stop()
		fmt.Fprintln(errOut, "adamnode: interrupted: stopping after the current step (serve: after the requests in flight; Ctrl-C again to quit at once)")
	}()
	for _, c := range commands() {
		if c.name != args[0] {
			continue
		}
		err := c.run(ctx, args[1:], out)
		var ue *usageError
		var ie *train.InterruptedError
		switch {
		case err == nil, errors.Is(err, flag.ErrHelp):
			return 0
		case errors.As(err, &ue):
			fmt.Fprintln(errOut, "adamnode:", err)
			return 2
		case errors.As(err, &ie):
			fmt.Fprintln(errOut, "adamnode:", err)
			return 130
		default:
			fmt.Fprintln(errOut, "adamnode:", err)
			return 1
		}
	}
	fmt.Fprintf(errOut, "adamnode: unknown command %q (want train, compare, silverbox, trajectories or serve)\n", args[0])
	return 2
}
