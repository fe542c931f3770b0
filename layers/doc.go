// Package layers holds neural-network modules built on package autograd,
// their PyTorch-compatible initialisation, the losses, and parameter and
// optimizer checkpoints in the safetensors format.
//
// # Modules
//
// A Module records its output for an input on a tape and lists its
// parameters:
//
//	Forward(tp *autograd.Tape[T], x autograd.Var[T]) autograd.Var[T]
//	Params() []*autograd.Param[T]
//
// The layers are Linear, Conv2D (stride, padding), ReLU, LeakyReLU, ELU, Tanh,
// Sigmoid, Softplus, Hardtanh, Flatten, Dropout and TimeConcat; Sequential
// chains modules. Layers compute with the tape's engine and allocate
// nothing of their own per call (Dropout's mask excepted): their results
// come from the tape's buffers, so a training loop that reuses its tape
// runs allocation-free.
//
// A TimeModule takes a time: ForwardT(tp, t, x). TimeConcat appends a
// channel filled with t; it is a TimeModule only, with no Forward. A
// Sequential holds Layers (Modules, TimeModules or both) and passes t on to
// its children, so an ODE right-hand side f(h, t) is a Sequential with
// TimeConcat layers, run with ForwardT (see ExampleTimeConcat); it is an
// odeblock.Field as it is. Its Forward panics when a child needs a time.
//
// The recurrent cells RNNCell, GRUCell and LSTMCell are not Modules: a
// step takes the state too, Step(tp, x, h) (LSTM: Step(tp, x, h, c)),
// with PyTorch's gate order and parameter names (weight_ih, weight_hh,
// bias_ih, bias_hh), so torch's weights load by name.
//
// # Names
//
// Every parameter's Name is its path in the module tree, which is how it is
// saved: a layer names its parameters "weight" and "bias"; Sequential.Add
// prefixes the child's name ("conv2.weight", or "1.weight" for the
// positional names of NewSequential, as PyTorch's nn.Sequential); Prefix
// adds a root ("f.conv2.weight"). Renaming happens when a module is added,
// so a module belongs to one container.
//
// # Initialisation
//
// Linear and Conv2D are initialised as PyTorch's: the weight
// Kaiming-uniform with a = √5 (uniform within ±1/√fanIn), then the bias
// uniform within ±1/√fanIn, drawn from the *rand.Rand given to the
// constructor, so that a seed fixes a model. The recurrent cells draw all
// four parameters uniform within ±1/√H (H the hidden size), in PyTorch's
// order. KaimingUniform, Uniform, FanIn and BiasBound are exported for
// other modules.
//
// # Modes
//
// Modules start in training mode. SetTraining(m, false) puts m and, through
// Sequential, its children in evaluation mode, where Dropout is the
// identity.
//
// # Losses
//
// SoftmaxCrossEntropy (fused, stable) and MSE are thin wrappers on the
// autograd ops, returning the batch mean as PyTorch's default reduction.
//
// # Panics
//
// Misuse panics, with typed values as autograd's: an input of the wrong
// shape or a bad layer size (negative features or channels, a kernel of 0,
// groups that do not divide the channels) with a *tensor.ShapeError naming
// the layer and the shapes, which tensor.Recover turns into an error at an
// API edge; a duplicate or dotted child name, Forward of a Sequential
// holding a TimeConcat, a child that is neither a Module nor a TimeModule,
// a dropout probability outside [0, 1] or an unknown nonlinearity with an
// error value that tensor.Recover lets through (a bug in the calling code,
// not in its data). Bad files are returned errors, never panics.
//
// # Checkpoints
//
// Parameters save and load as safetensors files (readable by PyTorch's
// safetensors.torch.load_file), each tensor named by its Param.Name, a module
// path such as f.conv2.weight:
//
//	layers.SaveParams(path, model.Params(), map[string]string{"epoch": "3"})
//	meta, err := layers.LoadParams(path, model.Params())
//
// SaveCheckpoint and LoadCheckpoint also carry an optimizer's state (any
// Stateful, such as the optimizers of package optim) under names starting
// with OptimPrefix: optim.adam.exp_avg.f.conv2.weight for tensors,
// optim.adam.step.f.conv2.weight for step counts in the metadata.
//
// Writes are atomic: a temporary file in the same directory, synced, then
// renamed over the target; a failed write leaves the target as it was.
// Loading checks names, dtypes and shapes against the parameters and changes
// nothing unless all fit: every parameter must be present, and every tensor
// of the file must be a parameter or optimizer state (LoadOptions.
// IgnoreUnknown skips the others, as PyTorch's strict=False). Floating-point
// tensors are converted to the parameters' type — F16 and BF16 (as PyTorch
// writes half-precision models), F32, F64 — rounding when the file is
// wider (LoadOptions.NoNarrowing refuses that). A file that cannot be
// read, a malformed or truncated file, a missing, extra or misshapen tensor:
// each is a returned *FileError naming the file and, when one is concerned,
// the tensor. The reader never panics on any input (it is fuzzed). An
// untrusted file costs bounded memory: a header length over MaxHeaderLen
// (100,000,000 bytes, the reference implementation's limit) is refused from
// the file's first 8 bytes, and a header of many small entries allocates a
// small multiple of the file's size (about 4 times).
//
// The lower level is Safetensors, the contents of a file as RawTensor values
// of any of the format's dtypes: ParseSafetensors and ReadSafetensorsFile
// read one, WriteTo, Marshal and WriteFile write one, RawFromTensor and
// TensorFromRaw convert to and from tensor.Tensor (F32 for float32, F64 for
// float64, no conversion between them).
//
// Nothing in this package keeps mutable package-level state.
package layers
