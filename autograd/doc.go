// Package autograd is reverse-mode automatic differentiation over the tensor
// package: an explicit tape that records a define-by-run forward pass, ops
// with backward rules (differentiable again: gradients of gradients,
// forward-mode JVPs, Jacobian traces), custom nodes whose backward the
// caller supplies (how an ODE block runs its adjoint solve), a
// vector–Jacobian-product helper, and gradient checkers for tests.
//
// # Tapes, Vars and Params
//
// A Tape[T] records one forward pass computed with one tensor.Engine[T].
// There is no global tape: every op finds its tape through its operands, and
// all operands of an op must be on the same tape. Leaves enter a tape as
//
//	tp.Const(x)  // data, targets: no gradient
//	tp.Input(x)  // a leaf whose gradient Backward computes (v.Grad())
//	tp.Param(p)  // a parameter: Backward adds into p.Grad
//
// A Var is a small handle (tape, slot, pass number) passed by value; the
// zero Var stands for an absent optional operand, such as a bias. Ops are
// functions of Vars: z := autograd.ReLU(autograd.Linear(x, w, b)). A Param
// (name, value, gradient) outlives tapes; a tape lives for one forward and
// backward pass and may then be Reset to record the next pass with the same
// buffers, so that a training loop allocates nothing in steady state.
//
// A training loop reuses one tape: Reset, record the forward pass, Backward
// (which adds into every Param.Grad, and returns the error of a failed
// custom node), step, zero the gradients (see the package Example;
// optim.Minimize does the last three in one call).
//
// The functions that return a Var and an error (an ODE block's Forward,
// GradOf, a classifier's Forward) return NaNs of their result's shape with
// an error, so that a pass may check its errors once: Tape.Check takes the
// pair, remembers the first error, and Backward returns it without running
// (see Check).
//
// # Ops in PyTorch's terms
//
// Besides the elementwise maps (broadcasting as PyTorch's), matrix
// products, convolutions, pooling and reductions: Linear on x [..., In]
// (nn.Linear), Permute (x.permute), Stack and Concat (torch.stack,
// torch.cat), Narrow and Split, LogSumExp, Softmax and LogSoftmax along an
// axis (stable: shifted by the maximum), IndexSelect (torch.index_select),
// Gather (torch.gather, the index tensor given flat with its shape), Where
// with a constant mask (torch.where), MaskedSum and MaskedMean (a sum or
// mean over a mask's nonzeros; an empty mean is 0), Cumsum, and the
// scalar-first RSub (a − x) and RDiv (a / x). Indices, masks and labels are
// constants: no gradient reaches them.
//
// # Ownership
//
// Leaf values are the caller's tensors, referenced, never copied: do not
// modify them between the forward pass and Backward. The values (and
// gradients) of op results belong to the tape and stay valid until its next
// Reset or Release; after that, any use of an old Var panics. Backward
// releases the recorded graph (inputs, saved tensors, custom closures) as it
// walks it, and recycles the gradients of op results once they have been
// consumed, so only leaves keep a gradient afterwards.
//
// # When gradients accumulate
//
// Gradients only ever accumulate: every use of a Var adds its share, so
// fan-out is right by construction. Backward adds into Param.Grad on top of
// whatever is there; nothing zeroes a parameter gradient except ZeroGrad and
// ZeroGrads, so two backward passes without zeroing give the sum of their
// gradients. A tape runs Backward once per pass.
//
// # No-grad mode
//
// In no-grad mode (Tape.SetNoGrad) ops compute values only and record
// nothing; use it for evaluation.
//
// # Custom nodes and VJP
//
// Custom records a node whose value and backward function the caller
// supplies; Custom's backward may also fail with an error (an adjoint solve
// that breaks down), which Backward then returns. Its backward may evaluate and differentiate other functions on
// other tapes while the outer Backward runs: Pullback.VJP evaluates a Func at
// a point on an inner tape and pulls a cotangent back, returning the input
// cotangents and, where asked, the parameters' gradients, into destinations
// the caller gives (as an adjoint solve needs) or into Param.Grad
// (VJPDest.ParamGrad). Otherwise parameters are constants in a VJP: as
// torch.autograd.grad, it leaves Param.Grad alone, so a VJP inside a forward
// pass cannot corrupt that pass's gradients.
//
// A VJP's result is a plain tensor: recorded on a tape, it is a constant.
// So a VJP taken at the value of a Var that a tape is recording gradients
// for would silently drop its own derivative. Such a VJP is an error
// instead (ErrVJPOfRecorded), returned by the VJP and by that tape's
// Backward; differentiable VJPs are Grad's (below). A VJP at a copy of the
// value (Tensor.Clone) is taken as a constant on purpose.
//
// # Gradients of gradients
//
// Grad returns gradients as Vars on the same tape, as torch.autograd.grad
// does: of outputs with respect to inputs (leaves or intermediates) and
// parameters, with given cotangents, leaving Param.Grad alone. With
// GradOptions.CreateGraph they are recorded as ops, so they enter further
// ops and are differentiated again — by Backward (a gradient penalty), or
// by Grad once more, to any order. Every op has its backward written in
// ops for this (the gradRule of gradrules.go and gradops.go); the fused
// kernels of Backward's first-order path are untouched and run only there.
// Factors that are constant almost everywhere (ReLU's mask, Abs's sign,
// MaxAxis's and MaxPool2D's choices) are constants, as in PyTorch.
//
// On top of it: JVP (forward mode, built from two reverse passes: the
// double-VJP construction, so every op and every differentiable custom
// node has one), HVP, Jacobian, the per-row Jacobian traces TraceExact and
// TraceHutchinson (with RademacherProbe and GaussianProbe) that a
// continuous normalizing flow needs. They record their function with
// gradients on even on a tape in no-grad mode (an ODE solve's forward
// pass), returning constants there and differentiable Vars otherwise.
//
// A Custom node is differentiated this way only if it has a backward
// written in ops (CustomDiff; OpsVJP makes one from the node's
// function written in ops); otherwise Grad returns a *CreateGraphError
// naming it, never a constant. RowShards nodes have none. CheckHigherOrder
// checks second and higher derivatives of a user's function against
// central differences of the ones below, as CheckGradients checks the
// first.
//
// # Shards of a batch
//
// RowShards evaluates a function whose rows are independent (an MLP on a
// batch) on one shard of the rows per worker of the engine at once, each
// shard on a tape of its own computing with tensor.Serial of the engine,
// and records the result as one node: PyTorch's DataParallel within one
// process. Its backward runs the shards' backward passes at once and sums
// their parameter gradients. odeblock.ShardedField wraps an ODE field so.
// ApplyShards takes the caller's cuts of the rows and passes each shard its
// index, for a function that keeps state per shard (odeblock.Block.Shards
// runs a whole ODE solve on each).
//
// # Gradient checking
//
// CheckGradients compares Backward with central differences in float64 and
// reports the worst absolute and relative errors by parameter name and
// element. Models written generically over T are checked in float64 through
// the very code that trains in float32.
//
// # Panics
//
// Misuse is a programming error and panics, as in the tensor package. Ops
// check shapes when they are recorded and panic with a *tensor.ShapeError
// whose message names the op and the shapes involved; the same type reports
// a backward function returning a gradient of the wrong shape. Other misuse
// (an op on a Var of an earlier pass, mixing tapes, Backward twice, recording
// during Backward, Backward in no-grad mode or from an output that depends on
// no Param or Input) panics with an error whose message starts "autograd:".
// Failures that are not the caller's mistake are errors, never panics: the
// error of a Custom backward is returned by Backward, BackwardWith and
// Pullback.VJP (MustVJP panics with it). Numerical trouble in the built-in ops (NaN, Inf) is not
// checked here.
package autograd
