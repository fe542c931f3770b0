// Package isa decides, once at start-up, which instruction-set path the
// project's own kernels take: the vector maps and slice kernels of package
// tensor, the GEMMs of tensor/internal/sgemm and tensor/internal/dgemm,
// odeblock's AdamNODE kernels and the integrator's error norm. The path is
// the fastest that the CPU and the build run, or a slower one that the
// environment variable ADAMNODE_CPU asks for (avx512, avx2, sse2 or
// generic on amd64, neon or generic on arm64), read once when the package
// initializes; the build tag purego makes
// generic the fastest. Package tensor reports the decision as
// tensor.KernelPath, and the packages outside tensor read it there.
//
// A value of ADAMNODE_CPU that cannot be followed — a path this CPU or
// build does not run, or no path at all — leaves the kernels on the
// fastest path allowed no faster than asked (the fastest there is, for an
// unknown value), and says so once on standard error; package tensor's
// TestKernelPathFromEnv fails on an unknown value, so that a mistyped
// value in a test run does not go unnoticed.
package isa

import (
	"fmt"
	"io"
	"os"
	"strings"
)

// Path is an instruction-set path of the kernels. The paths of one
// architecture are ordered from the slowest to the fastest, and a CPU that
// runs one runs every path of its architecture below it: Generic < SSE2
// < AVX2 < AVX512 on amd64, Generic < NEON on arm64. Paths of two architectures
// are not comparable (see Runs); kernel code compares only the paths of
// its own architecture.
type Path uint8

// The paths.
const (
	// Generic is portable Go: every GOARCH, and the purego build.
	Generic Path = iota
	// SSE2 is amd64 assembly on the 128-bit XMM registers with SSE2 alone
	// (no FMA: products and sums rounded apart), which every amd64 CPU
	// has (Go's GOAMD64=v1 baseline): the fastest path of the CPUs without
	// AVX2 and FMA (Intel before Haswell, many Pentiums and Celerons, AMD
	// before Zen but Excavator). Where a kernel has no SSE2 version, it runs its
	// Go loop on this path, as on Generic.
	SSE2
	// AVX2 is amd64 assembly on 256-bit registers with AVX2 and FMA
	// (Intel since Haswell, AMD since Zen 1). Where a kernel has no AVX2
	// version yet, it runs its Go loop on this path.
	AVX2
	// AVX512 is amd64 assembly on 512-bit registers: AVX-512 F, CD, BW,
	// DQ and VL (the x86-64-v4 level: Intel since Skylake-SP, AMD since
	// Zen 4), with AVX2 and FMA.
	AVX512
	// NEON is arm64 assembly on the 128-bit Advanced SIMD (ASIMD, NEON)
	// registers, which every ARMv8-A CPU has (Apple silicon, Graviton,
	// Ampere, the Raspberry Pi 4 and later).
	NEON
)

// EnvVar is the environment variable that forces a path.
const EnvVar = "ADAMNODE_CPU"

// names are the paths' names, as ADAMNODE_CPU and tensor.KernelPath spell
// them.
var names = [...]string{Generic: "generic", SSE2: "sse2", AVX2: "avx2", AVX512: "avx512", NEON: "neon"}

// arch returns the GOARCH whose CPUs run p ("" for Generic, which every
// GOARCH runs).
func (p Path) arch() string {
	switch p {
	case SSE2, AVX2, AVX512:
		return "amd64"
	case NEON:
		return "arm64"
	}
	return ""
}

// Runs reports whether a CPU whose fastest path is best runs the path p:
// p is Generic, or a path of best's architecture no faster than best.
func (p Path) Runs(best Path) bool {
	return p == Generic || (p.arch() == best.arch() && p <= best)
}

// String returns the path's name: "generic", "sse2", "avx2", "avx512"
// or "neon".
func (p Path) String() string {
	if int(p) < len(names) {
		return names[p]
	}
	return fmt.Sprintf("isa.Path(%d)", uint8(p))
}

// parse returns the path that s names, ignoring case and surrounding
// space, and whether s names one.
func parse(s string) (Path, bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	for p, n := range names {
		if s == n {
			return Path(p), true
		}
	}
	return Generic, false
}

// features are the CPU features the paths need.
type features struct {
	avx2, fma                                       bool
	avx512f, avx512cd, avx512bw, avx512dq, avx512vl bool
}

// fastest returns the fastest path that an amd64 CPU with the features f
// runs: SSE2 at least, which every amd64 CPU has.
func fastest(f features) Path {
	if !f.avx2 || !f.fma {
		return SSE2
	}
	if f.avx512f && f.avx512cd && f.avx512bw && f.avx512dq && f.avx512vl {
		return AVX512
	}
	return AVX2
}

// decide returns the path the kernels take where best is the fastest that
// the CPU and build run (limit names what sets it: "this CPU", "the
// purego build", ...) and ADAMNODE_CPU holds value (set: whether it is set
// at all), with the message to print when the value cannot be followed
// ("" when it can). An empty value counts as unset.
func decide(value string, set bool, best Path, limit string) (Path, string) {
	if !set || strings.TrimSpace(value) == "" {
		return best, ""
	}
	p, ok := parse(value)
	if !ok {
		return best, fmt.Sprintf("adamnode: %s=%q is not a kernel path (avx512, avx2, sse2, neon or generic): the kernels run %s, the fastest %s runs",
			EnvVar, value, best, limit)
	}
	if !p.Runs(best) {
		return best, fmt.Sprintf("adamnode: %s=%s: %s does not run the %s kernels: they run %s, the fastest it runs",
			EnvVar, value, limit, p, best)
	}
	return p, ""
}

// best is the fastest path this CPU and build run, and limit what sets it.
var best, limit = detect()

// current is the path the kernels take: decided once, never changed.
var current = fromEnv(os.LookupEnv, os.Stderr)

// fromEnv decides the path from ADAMNODE_CPU, as lookup reads it, printing
// on w why the value is not followed where it is not.
func fromEnv(lookup func(string) (string, bool), w io.Writer) Path {
	v, set := lookup(EnvVar)
	p, msg := decide(v, set, best, limit)
	if msg != "" {
		fmt.Fprintln(w, msg)
	}
	return p
}

// Current returns the path the kernels take, decided when the package
// initialized.
func Current() Path { return current }

// Best returns the fastest path this CPU and build run, whatever
// ADAMNODE_CPU asks for.
func Best() Path { return best }
