// Package train is the training loop of this module, for any model: epochs
// of optimizer steps over a task's batches, with gradient clipping, an
// optional evaluation after each epoch, a progress bar, a CSV of per-epoch
// rows, a checkpoint after every epoch and on interruption, a resume that
// continues bit for bit, and data-parallel training across processes (MPI)
// or replicas in one.
//
// Fit trains a Task: a model's parameters, its training batches (of any
// type) and the loss on one — a regression on a time series, a latent
// ODE's ELBO, a neural CDE's classification. Sampled makes a Task of two
// functions (draw a batch, compute its loss) for models trained on random
// batches; a Task that is also an Evaluator gets a test row per epoch.
// Run is Fit of an image classifier (cross-entropy on a data.Loader,
// evaluated on another), as the command-line tool trains the paper's
// models. The loop does what a PyTorch user writes around loss.backward()
// and optimizer.step(), and what Lightning's Trainer adds.
//
// Fit takes the task, an optimizer and a Config (Run the model, an
// optimizer, the two loaders and a Config). With
// Config.Dir set it writes NAME.csv and NAME.safetensors there (making
// the directory if it is missing, and checking before the first batch
// that it can write there: an error naming it otherwise); each is
// written through a temporary file renamed into place, the checkpoint
// first, so a kill at any point loses no row and leaves files a resumed
// run continues from. Cancelling ctx (Ctrl-C) stops the run after the
// batch under way: the checkpoint then records the partial epoch
// (batches done, sums of loss, accuracy, NFE and time), the run returns
// an *InterruptedError, and a run with Config.Resume continues exactly
// where it stopped — the same parameters, optimizer state and CSV numbers
// as an uninterrupted run (the data loader's order depends only on its
// seed and the epoch).
//
// A step whose gradients are not finite (a NaN or an infinity in some
// parameter's gradient, the loss finite) is not taken: the run stops with
// a *NonFiniteError naming the parameter, the epoch and the batch, before
// anything is stepped or written, so the last checkpoint stays good to
// resume from; with Config.SkipNonFinite the step is skipped, logged and
// counted instead (Result.Skipped, Step.Skipped). The check is the
// gradients' global norm: the one clipping forms anyway, or one more pass
// (on a GPU engine, one number per parameter to the host).
//
// Resuming checks everything in the checkpoint before loading anything:
// that it is a checkpoint of this loop and model, its parameters and
// buffers the model's by name and shape (an *MismatchError otherwise,
// naming the first parameter that differs, both shapes and both counts;
// or when it holds more epochs than Config.Epochs), the
// caller's identity metadata (Config.CheckResume), the ranges of every
// field of the saved progress and rows, the parameter count, the
// optimizer's type, hyperparameters and step counts, and that every
// parameter is finite.
//
// Config.Distributed trains data-parallel across ranks (MPI processes
// through package distributed, or its in-process NewLocal group): every
// rank runs Fit with the same Config, task and seed, its training batches
// its shard of every global batch (Run: its loader's shard). The parameters and buffers start as
// rank 0's; each step's gradients, rank 0's buffers and the step's numbers
// travel in one all-reduce, so every rank takes the same step; the test
// batches are split across the ranks and their sums reduced; rank 0 alone
// writes the files and, resuming, sends its checkpoint to the other ranks
// (no shared file system needed). An error or
// a cancelled context on any rank stops all of them at the same step.
//
// Before anything else the ranks agree on their configuration (Agree):
// Config.Settings (a command line's flags), Config's epochs, clipping,
// name and resuming, the loaders' sizes, batch sizes and shuffle, the
// model's size and the optimizer's kind and hyperparameters. Ranks that
// differ in any of them would wait for each other forever (another number
// of epochs) or train a model that matches none of them (another learning
// rate or seed): instead every rank fails at once with the same
// *SettingsError, naming the setting, rank 0's value and that of the first
// rank that differs. It costs one all-reduce of a digest per rank.
//
// RunReplicas (FitReplicas) does the same within one process: k replicas of the model
// in goroutines, each with a one-worker backend and its shard, their
// gradients averaged after every step (distributed.NewLocal) — faster than
// one model on several cores, whose workers share only the large products.
//
// Config.OnEpoch may end the run early (return ErrStop): early stopping
// on a validation loss, say.
package train
