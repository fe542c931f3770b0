// Package infer runs a trained model's forward passes from many
// goroutines at once: the concurrent inference that a server (package
// serve) stands on.
//
// A Pool holds up to Options.Replicas replicas of the model, each made by
// the caller's build function and bound to the trained model's parameter
// tensors (shared, read-only: their names and shapes checked), each with
// its own work buffers (its ODE blocks') and its own tape in no-grad mode,
// reused from call to call. Pool.Predict is safe for any number of
// goroutines: it waits for a free replica, or returns ctx.Err() when its
// context is done first.
//
// Used wrongly, it fails loudly:
//   - a parameter of the trained model written or replaced after the pool
//     was made (trained further, loaded again) fails every Predict with a
//     *ParamChangedError naming it. The check is the storage's version
//     (tensor.Storage: one atomic load per parameter), and a checksum of
//     the elements when the version moved on, so that a pass that reads a
//     weight through Data (and so moves its version) is not taken for a
//     change; a write through a slice taken before the pool was made, which
//     no version sees, is not caught;
//   - a build that returns the trained model, or a model whose ODE block
//     another replica holds, fails New or the Predict that needed the
//     replica, saying so; a replica's block used by a goroutine outside
//     the pool fails the pass with the block's own concurrent-use error;
//   - an input that is not a batch of rows of Options.Input's shape is an
//     error naming both shapes (user input, in a server); a pass that
//     panics is an error, and its replica is replaced.
//
// # Answers that do not depend on the neighbours
//
// An adaptive solver's steps are chosen from an error norm. With one RMS
// norm over a whole batch (an ODE block's default, torchdiffeq's) every
// row takes the steps the batch as a whole needs: a row batched with
// harder rows is solved more finely than alone, and a hard row batched
// with quiet ones has its error diluted among theirs, up to √B times the
// tolerance for a batch of B. A served request's answer would then depend
// on the requests it happened to be batched with.
//
// Options.Rows picks how a pool prevents that. The default, RowErrors,
// sets odeblock.Block.RowErrors on every ODE block it can reach (a
// Classifier's, ODE's, a Func's Blocks): the batch is solved at once, and
// a step is accepted only when every row's own scaled RMS norm is within
// the tolerances (integrate.Options.ErrorRows; a row of an AdamNODE's
// state is strided across its parts h, m, v), so that each row is solved
// at least as accurately as the tolerances ask, whatever its neighbours.
// The rows still share their steps (the batch's hardest row sets them),
// so a row's answer agrees with its answer alone to the solver's
// tolerances, not to the bit. RowsAlone solves each row as a batch of its
// own: its answer alone to the bit, for any model (an SDE's too), with
// none of batching's speed. RowsAsBuilt leaves the model as it was built.
//
// Per-row solves through Block.Shards were not chosen as the default: a
// shard per row is a solve per row on its own tape, which costs what
// RowsAlone costs, and Shards is bounded by the engine's workers. Per-row
// step sizes (torchode's) would keep the batch's products and give each
// row its steps alone; the integrator does not have them.
//
// Measured (TestMeasureBatchedVsAlone, ADAMNODE_MEASURE=1; float32, eight
// requests each placed in a batch of 64; the largest |batched − alone|
// over the outputs, in units of ATol + RTol·|alone|):
//
//	model (tolerances)                 neighbours   RowsAsBuilt  RowErrors  RowsAlone
//	MLP AdamNODE (1e-6, 1e-6)          63 random    0.50         0.90       0
//	MLP AdamNODE                       63 zero      26.4         0          0
//	MNIST AdamNODE (1e-4, 1e-4)        63 random    0.0013       0.0020     0
//	MNIST AdamNODE                     63 zero      0.0069       0          0
//
// (the MLP AdamNODE is mlpbench's base shape, the MNIST one models.Paper's,
// both with their random initial weights). Among random neighbours a
// request's answer moves by less than one tolerance either way: there the
// batch's steps are finer than the request's alone, and the gap is the
// answer alone's own error, which RowErrors does not shrink. A hard request
// among quiet ones (zero inputs) is where the whole batch's norm fails:
// its error is diluted among theirs, 26 tolerances from its answer alone;
// with RowErrors it takes its own steps and gets its answer alone.
//
// RowErrors costs the norm (a sum of squares per row, in one pass over
// the state) and whatever steps the batch's hardest row adds: a batch of
// 64 requests of that MLP AdamNODE (float32, one thread; 5 steps either
// way) took 508 µs with RowErrors and 460 µs with RowsAsBuilt, +10%
// (benchstat over 15 alternated rounds, p < 0.001: BenchmarkPredictRows),
// and about 10 ms with RowsAlone, 14 times RowsAsBuilt's (over 10 noisier
// rounds).
//
// # Randomness
//
// An SDE model (SDE) draws its Brownian path afresh at each call from the
// call's seed: WithSeed's on the context, else Options.Seed. A call's
// answer is thus a function of its input and seed, whichever replica runs
// it.
package infer
