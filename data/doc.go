// Package data reads the datasets of the paper's experiments and cuts them
// into batches: MNIST and Fashion-MNIST (IDX files), CIFAR-10 (binary
// batches) and the Silverbox recording (CSV).
//
// # Readers
//
// ReadIDX, ReadIDXImages, ReadIDXLabels, ReadCIFAR10 and ReadSilverbox read
// from an io.Reader and take the file's name for their error messages;
// LoadIDX, LoadMNIST, LoadFashionMNIST, LoadCIFAR10 and LoadSilverbox open
// files by path. Every reader accepts plain or gzip-compressed data and tells
// them apart by the first two bytes (1f 8b), never by the file's name.
//
// LoadMNIST and LoadFashionMNIST find the four IDX files in a directory
// under their standard names, with or without .gz. FashionMNISTDir is where
// Debian's dataset-fashion-mnist package installs Fashion-MNIST; MNIST and
// CIFAR-10 are read from a directory the caller names.
//
// Images come back as *Images: uint8 pixels, channel-major, with int labels.
// Head, SplitAt, Shuffled and Concat make subsets, train/validation splits
// and unions.
//
// # Errors
//
// Readers never panic on bad input. A malformed file (wrong magic number,
// truncated payload or trailing bytes, image and label counts that differ,
// a label out of range, a bad CSV row) is reported as a *FormatError whose
// message names the file, the byte offset (binary files; in the decompressed
// data for gzip files) or the 1-based line (CSV), and what is wrong, e.g.
//
//	data: train-labels-idx1-ubyte.gz: decompressed byte offset 17: label 12 of example 9 is out of range [0, 10)
//	data: sb.csv:5: V2 value "x" is not a finite number
//
// Use errors.As to get at the fields. A file that cannot be opened is an
// error wrapping the *fs.PathError (and fs.ErrNotExist when missing).
//
// # Batches
//
// A Loader turns Images into float32 batches of shape [B, C, H, W] with
// values in [0, 1] (or standardised per channel), with their int labels and
// their indices in the dataset. Epoch returns a Go iterator over one epoch:
//
//	for b, err := range loader.Epoch(ctx, epoch) {
//		if err != nil {
//			return err // ctx was cancelled; the iteration is over
//		}
//		train(b.X, b.Labels)
//	}
//
// The contract:
//
//   - Order: with Shuffle, epoch e visits the images in a permutation drawn
//     from (Seed, e) with math/rand/v2's PCG, so a run is reproducible and
//     every image appears exactly once per epoch (less the partial last batch
//     when DropLast is set). Without Shuffle, in dataset order.
//   - Ownership: the yielded *Batch and the memory behind its tensor and
//     slices belong to the iterator and stay valid only until the loop body
//     returns; the next step overwrites them. Clone what must outlive the
//     step. Storage is allocated when an iteration starts (Prefetch+1
//     batches) and reused within it, so an epoch allocates nothing per batch.
//   - Prefetch: with Prefetch > 0 a background goroutine prepares up to that
//     many batches ahead. It exists only while the range loop runs: breaking
//     out of the loop, cancelling ctx or reaching the end stops it, and the
//     iterator returns only after it has exited, so nothing leaks.
//   - Errors: the only error an epoch yields is ctx.Err(), once, with a nil
//     batch; reading files happens before, in the readers.
//   - Concurrency: a Loader is immutable after NewLoader; several epochs may
//     be iterated at once, each with its own storage. The Images it reads
//     must not change meanwhile.
//
// # Irregularly sampled series
//
// A Series is one time series observed at its own, strictly increasing
// times, with a mask for missing channels. NewSeriesBatch pads B series to
// the sorted union of their times, as the latent ODE of Rubanova et al.
// (2019) and torchdiffeq's example do: Values and Mask of shape [B, T, C],
// both 0 where a series has no observation, so that one ODE solve over the
// union serves the batch and the loss counts only the entries Mask marks.
// Times are merged by exact equality. SeriesLoader batches a slice of
// series in the seeded order Loader uses, yielding batches the caller
// keeps; SplitTimes cuts series for extrapolation and SineWaves draws the
// toy data of noisy sine waves. Invalid series (unsorted or duplicate
// times, values or a mask of the wrong length, differing channels) are
// reported as a *SeriesError naming the series and the positions at fault.
package data
