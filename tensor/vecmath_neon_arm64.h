// Advanced SIMD (NEON) instructions that Go's arm64 assembler has no
// mnemonic for, as WORDs, for vecmath_arm64.s and vecmath64_arm64.s.
// Registers are numbers (V0 is 0), and the operands are in Go's order,
// sources first, destination last: OP(m, n, d) is the A64 instruction
// "OP Vd, Vn, Vm" (so FSUB4(m, n, d) sets d = n − m), OP(n, d) is
// "OP Vd, Vn", and a shift is OP(shift, n, d). The suffix 4 is the
// arrangement .4S (four float32 or int32 lanes), 2 is .2D (two float64 or
// int64 lanes), 16 is .16B (bitwise). Each encoding was checked by
// assembling every macro and disassembling the result with llvm-objdump
// (--triple=aarch64), and the kernels by the tests under qemu-aarch64.

#define NEON3(op, m, n, d) WORD $((op) | ((m)<<16) | ((n)<<5) | (d))

#define FADD4(m, n, d) NEON3(0x4E20D400, m, n, d)  // fadd  vd.4s, vn.4s, vm.4s
#define FSUB4(m, n, d) NEON3(0x4EA0D400, m, n, d)  // fsub  vd.4s, vn.4s, vm.4s
#define FMUL4(m, n, d) NEON3(0x6E20DC00, m, n, d)  // fmul  vd.4s, vn.4s, vm.4s
#define FDIV4(m, n, d) NEON3(0x6E20FC00, m, n, d)  // fdiv  vd.4s, vn.4s, vm.4s
#define FMAX4(m, n, d) NEON3(0x4E20F400, m, n, d)  // fmax  vd.4s, vn.4s, vm.4s (NaN if either is)
#define FMIN4(m, n, d) NEON3(0x4EA0F400, m, n, d)  // fmin  vd.4s, vn.4s, vm.4s (NaN if either is)
#define FMLA4(m, n, d) NEON3(0x4E20CC00, m, n, d)  // fmla  vd.4s, vn.4s, vm.4s: d += n·m, fused
#define FMLS4(m, n, d) NEON3(0x4EA0CC00, m, n, d)  // fmls  vd.4s, vn.4s, vm.4s: d −= n·m, fused
#define FCMGT4(m, n, d) NEON3(0x6EA0E400, m, n, d) // fcmgt vd.4s, vn.4s, vm.4s: n > m
#define FCMGE4(m, n, d) NEON3(0x6E20E400, m, n, d) // fcmge vd.4s, vn.4s, vm.4s: n ≥ m
#define FCMEQ4(m, n, d) NEON3(0x4E20E400, m, n, d) // fcmeq vd.4s, vn.4s, vm.4s: n = m
#define ADD4(m, n, d) NEON3(0x4EA08400, m, n, d)   // add   vd.4s, vn.4s, vm.4s (integer)
#define SUB4(m, n, d) NEON3(0x6EA08400, m, n, d)   // sub   vd.4s, vn.4s, vm.4s (integer)
#define FSQRT4(n, d) NEON3(0x6EA1F800, 0, n, d)    // fsqrt vd.4s, vn.4s
#define FABS4(n, d) NEON3(0x4EA0F800, 0, n, d)     // fabs  vd.4s, vn.4s
#define SCVTF4(n, d) NEON3(0x4E21D800, 0, n, d)    // scvtf vd.4s, vn.4s
#define SHL4(s, n, d) NEON3(0x4F005400, 32+(s), n, d)  // shl  vd.4s, vn.4s, #s
#define SSHR4(s, n, d) NEON3(0x4F000400, 64-(s), n, d) // sshr vd.4s, vn.4s, #s

#define FADD2(m, n, d) NEON3(0x4E60D400, m, n, d)  // fadd  vd.2d, vn.2d, vm.2d
#define FSUB2(m, n, d) NEON3(0x4EE0D400, m, n, d)  // fsub  vd.2d, vn.2d, vm.2d
#define FMUL2(m, n, d) NEON3(0x6E60DC00, m, n, d)  // fmul  vd.2d, vn.2d, vm.2d
#define FDIV2(m, n, d) NEON3(0x6E60FC00, m, n, d)  // fdiv  vd.2d, vn.2d, vm.2d
#define FMAX2(m, n, d) NEON3(0x4E60F400, m, n, d)  // fmax  vd.2d, vn.2d, vm.2d
#define FMIN2(m, n, d) NEON3(0x4EE0F400, m, n, d)  // fmin  vd.2d, vn.2d, vm.2d
#define FMLA2(m, n, d) NEON3(0x4E60CC00, m, n, d)  // fmla  vd.2d, vn.2d, vm.2d
#define FMLS2(m, n, d) NEON3(0x4EE0CC00, m, n, d)  // fmls  vd.2d, vn.2d, vm.2d
#define FCMGT2(m, n, d) NEON3(0x6EE0E400, m, n, d) // fcmgt vd.2d, vn.2d, vm.2d
#define FCMGE2(m, n, d) NEON3(0x6E60E400, m, n, d) // fcmge vd.2d, vn.2d, vm.2d
#define FCMEQ2(m, n, d) NEON3(0x4E60E400, m, n, d) // fcmeq vd.2d, vn.2d, vm.2d
#define ADD2(m, n, d) NEON3(0x4EE08400, m, n, d)   // add   vd.2d, vn.2d, vm.2d
#define SUB2(m, n, d) NEON3(0x6EE08400, m, n, d)   // sub   vd.2d, vn.2d, vm.2d
#define FSQRT2(n, d) NEON3(0x6EE1F800, 0, n, d)    // fsqrt vd.2d, vn.2d
#define FABS2(n, d) NEON3(0x4EE0F800, 0, n, d)     // fabs  vd.2d, vn.2d
#define SCVTF2(n, d) NEON3(0x4E61D800, 0, n, d)    // scvtf vd.2d, vn.2d
#define SHL2(s, n, d) NEON3(0x4F005400, 64+(s), n, d)   // shl  vd.2d, vn.2d, #s
#define SSHR2(s, n, d) NEON3(0x4F000400, 128-(s), n, d) // sshr vd.2d, vn.2d, #s

#define AND16(m, n, d) NEON3(0x4E201C00, m, n, d) // and vd.16b, vn.16b, vm.16b
#define ORR16(m, n, d) NEON3(0x4EA01C00, m, n, d) // orr vd.16b, vn.16b, vm.16b
#define EOR16(m, n, d) NEON3(0x6E201C00, m, n, d) // eor vd.16b, vn.16b, vm.16b
#define BIC16(m, n, d) NEON3(0x4E601C00, m, n, d) // bic vd.16b, vn.16b, vm.16b: n &^ m
#define BSL16(m, n, d) NEON3(0x6E601C00, m, n, d) // bsl vd.16b, vn.16b, vm.16b: d = d ? n : m, bitwise
#define BIT16(m, n, d) NEON3(0x6EA01C00, m, n, d) // bit vd.16b, vn.16b, vm.16b: d = m ? n : d
#define BIF16(m, n, d) NEON3(0x6EE01C00, m, n, d) // bif vd.16b, vn.16b, vm.16b: d = m ? d : n
#define MOV16(n, d) ORR16(n, n, d)                // mov vd.16b, vn.16b
