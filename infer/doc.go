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
// the tolerances, so that each row is solved at least as accurately as
// alone. The rows still share their steps, so a row's answer agrees with
// its answer alone to the solver's tolerances, not to the bit. RowsAlone
// solves each row as a batch of its own: its answer alone to the bit, for
// any model (an SDE's too), with none of batching's speed. RowsAsBuilt
// leaves the model as it was built. Per-row solves through Block.Shards
// were not chosen: a shard per row runs each row's solve on its own
// tape, which costs what RowsAlone costs, and Shards is bounded by the
// engine's workers.
//
// # Randomness
//
// An SDE model (SDE) draws its Brownian path afresh at each call from the
// call's seed: WithSeed's on the context, else Options.Seed. A call's
// answer is thus a function of its input and seed, whichever replica runs
// it.
package infer
