// Package layers holds neural-network modules built on package autograd,
// their PyTorch-compatible initialisation, the losses, and parameter and
// optimizer checkpoints in the safetensors format.
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
// of the file must be a parameter or optimizer state. A file that cannot be
// read, a malformed or truncated file, a missing, extra or misshapen tensor:
// each is a returned *FileError naming the file and, when one is concerned,
// the tensor. The reader never panics on any input (it is fuzzed).
//
// The lower level is Safetensors, the contents of a file as RawTensor values
// of any of the format's dtypes: ParseSafetensors and ReadSafetensorsFile
// read one, WriteTo, Marshal and WriteFile write one, RawFromTensor and
// TensorFromRaw convert to and from tensor.Tensor (F32 for float32, F64 for
// float64, no conversion between them).
//
// Nothing in this package keeps mutable package-level state.
package layers
