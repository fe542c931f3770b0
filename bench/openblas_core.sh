# openblas_core.sh — sourced by the compare scripts: makes both sides run
# OpenBLAS's vector kernels on a CPU that Debian's OpenBLAS does not know.
#
# A build of OpenBLAS for several CPUs (Debian's 0.3.21) picks its kernels
# when it loads; on a CPU newer than itself (an Intel Xeon family 6 model
# 207, say) it falls back to Prescott's SSE3 ones, which run a float32 GEMM
# at a fifth of the core's speed. PyTorch's linear layers run on that
# OpenBLAS, so a comparison there would pit adamnode against a handicapped
# peer. Unless OPENBLAS_CORETYPE is already set, this exports
# OPENBLAS_CORETYPE=SkylakeX (AVX-512) or Haswell (AVX2 with FMA) when the
# CPU has those and OpenBLAS chose an older core, for both sides (adamnode's
# OpenBLAS build then keeps its measured OpenBLAS shapes too), and says so.
# Needs $python (with ctypes) and /proc/cpuinfo.
openblas_core() {
	"$python" -c 'import ctypes, ctypes.util
lib = ctypes.CDLL(ctypes.util.find_library("openblas") or "libopenblas.so.0")
lib.openblas_get_corename.restype = ctypes.c_char_p
print(lib.openblas_get_corename().decode())' 2>/dev/null || echo unknown
}
if [ -z "${OPENBLAS_CORETYPE:-}" ]; then
	core=$(openblas_core)
	case $core in
	SkylakeX | Cooperlake | SapphireRapids | Haswell | Zen) ;;
	*)
		flags=$(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null || true)
		want=
		if [[ " $flags " == *" avx512f "* ]]; then
			want=SkylakeX
		elif [[ " $flags " == *" avx2 "* && " $flags " == *" fma "* ]]; then
			want=Haswell
		fi
		if [ -n "$want" ]; then
			export OPENBLAS_CORETYPE=$want
			echo "openblas_core.sh: OpenBLAS chose $core kernels on this CPU; both sides run with OPENBLAS_CORETYPE=$want (now: $(openblas_core))" >&2
		fi
		;;
	esac
fi
