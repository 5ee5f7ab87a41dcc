#include "textflag.h"

// func dot4AVX(a, b *float32, n int, acc *[4]float32)
// The four partial sums of dot (vector.go) over the first n floats, n a
// multiple of 8, with the Go loop's exact operations: the products of
// eight, rounded; lane i plus lane i+4, rounded; added to accumulator i,
// rounded. IEEE addition commutes, so the result is bit for bit the Go
// loop's (which the compiler does not fuse into FMA on amd64).
TEXT ·dot4AVX(SB), NOSPLIT, $0-32
	MOVQ a+0(FP), SI
	MOVQ b+8(FP), DI
	MOVQ n+16(FP), CX
	MOVQ acc+24(FP), DX
	VXORPS X0, X0, X0

loop:
	CMPQ CX, $8
	JL   done
	VMOVUPS 0(SI), Y1
	VMULPS 0(DI), Y1, Y1
	VEXTRACTF128 $1, Y1, X2
	VADDPS X2, X1, X1
	VADDPS X1, X0, X0
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JMP  loop

done:
	VMOVUPS X0, (DX)
	VZEROUPPER
	RET

// func dot8AVX2(q *float32, c *int8, n int) float32
// The inner product of n floats with n int8 values, each widened to
// float32, sixteen at a time.
TEXT ·dot8AVX2(SB), NOSPLIT, $0-28
	MOVQ q+0(FP), SI
	MOVQ c+8(FP), DI
	MOVQ n+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1

loop16:
	CMPQ CX, $16
	JL   loop8
	VPMOVSXBD 0(DI), Y4
	VPMOVSXBD 8(DI), Y5
	VCVTDQ2PS Y4, Y4
	VCVTDQ2PS Y5, Y5
	VFMADD231PS 0(SI), Y4, Y0
	VFMADD231PS 32(SI), Y5, Y1
	ADDQ $64, SI
	ADDQ $16, DI
	SUBQ $16, CX
	JMP  loop16

loop8:
	CMPQ CX, $8
	JL   reduce
	VPMOVSXBD 0(DI), Y4
	VCVTDQ2PS Y4, Y4
	VFMADD231PS 0(SI), Y4, Y0
	ADDQ $32, SI
	ADDQ $8, DI
	SUBQ $8, CX
	JMP  loop8

reduce:
	VADDPS Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0
	VHADDPS X0, X0, X0
	VHADDPS X0, X0, X0

tail:
	CMPQ CX, $0
	JE   done
	MOVBQSX (DI), AX
	VCVTSI2SSQ AX, X2, X2
	VFMADD231SS (SI), X2, X0
	ADDQ $4, SI
	INCQ DI
	DECQ CX
	JMP  tail

done:
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// func popcounts6AVX512(codes, planes *uint64, n int, out *uint32)
// For each of n codes of six words, Σ_b 2^b·popcount(code & plane_b) over
// the four query planes (planes holds 24 words: plane 0, then 1, 2, 3),
// written to out[i]. The six words of a code fill six lanes of a zmm
// register (a masked load), so a plane costs one AND and one VPOPCNTQ.
// Eight codes at a time, the lanes of their eight registers are summed
// together by a transposition (unpack, then 256- and 128-bit shuffles,
// adding at each step): a dozen instructions for eight sums where summing
// each register across its lanes took eight; the last n mod 8 codes are
// summed one at a time.

// WEIGH leaves in Zt the weighted popcounts of the code at off(SI), lane
// by lane.
#define WEIGH(off, t) \
	VMOVDQU64.Z off(SI), K1, Z0 \
	VPANDQ Z0, Z4, Z8 \
	VPANDQ Z0, Z5, Z9 \
	VPANDQ Z0, Z6, Z10 \
	VPANDQ Z0, Z7, Z11 \
	VPOPCNTQ Z8, Z8 \
	VPOPCNTQ Z9, Z9 \
	VPOPCNTQ Z10, Z10 \
	VPOPCNTQ Z11, Z11 \
	VPSLLQ $1, Z9, Z9 \
	VPSLLQ $2, Z10, Z10 \
	VPSLLQ $3, Z11, Z11 \
	VPADDQ Z9, Z8, Z8 \
	VPADDQ Z11, Z10, Z10 \
	VPADDQ Z10, Z8, t

// PAIR leaves in Zd, for each 128-bit chunk j, the sums of lanes 2j and
// 2j+1 of Za (low qword) and of Zb (high qword).
#define PAIR(a, b, d) \
	VPUNPCKLQDQ b, a, Z12 \
	VPUNPCKHQDQ b, a, d \
	VPADDQ Z12, d, d

// HALVE leaves in Zd the chunks of Za and Zb summed two by two: chunks 0
// and 1 of Za, 2 and 3 of Za, 0 and 1 of Zb, 2 and 3 of Zb.
#define HALVE(a, b, d) \
	VSHUFI64X2 $0x88, b, a, Z12 \
	VSHUFI64X2 $0xdd, b, a, d \
	VPADDQ Z12, d, d

TEXT ·popcounts6AVX512(SB), NOSPLIT, $0-32
	MOVQ codes+0(FP), SI
	MOVQ planes+8(FP), DX
	MOVQ n+16(FP), CX
	MOVQ out+24(FP), DI
	MOVQ $0x3f, AX
	KMOVB AX, K1
	VMOVDQU64.Z 0(DX), K1, Z4
	VMOVDQU64.Z 48(DX), K1, Z5
	VMOVDQU64.Z 96(DX), K1, Z6
	VMOVDQU64.Z 144(DX), K1, Z7

loop8:
	CMPQ CX, $8
	JLT  loop
	WEIGH(0, Z16)
	WEIGH(48, Z17)
	WEIGH(96, Z18)
	WEIGH(144, Z19)
	WEIGH(192, Z20)
	WEIGH(240, Z21)
	WEIGH(288, Z22)
	WEIGH(336, Z23)
	PAIR(Z16, Z17, Z24)
	PAIR(Z18, Z19, Z25)
	PAIR(Z20, Z21, Z26)
	PAIR(Z22, Z23, Z27)
	HALVE(Z24, Z25, Z28)
	HALVE(Z26, Z27, Z29)
	HALVE(Z28, Z29, Z30)
	VPMOVQD Z30, (DI)
	ADDQ $384, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JMP  loop8

loop:
	CMPQ CX, $0
	JE   done
	WEIGH(0, Z8)
	VEXTRACTI64X4 $1, Z8, Y12
	VPADDQ Y12, Y8, Y8
	VEXTRACTI128 $1, Y8, X12
	VPADDQ X12, X8, X8
	VPSHUFD $0x4e, X8, X12
	VPADDQ X12, X8, X8
	VMOVQ X8, AX
	MOVL AX, (DI)
	ADDQ $48, SI
	ADDQ $4, DI
	DECQ CX
	JMP  loop

done:
	VZEROUPPER
	RET

// Popcount of each nibble value, for VPSHUFB (the table repeats in each
// 128-bit lane, which VPSHUFB looks up in separately).
DATA nibbleCount<>+0(SB)/8, $0x0302020102010100
DATA nibbleCount<>+8(SB)/8, $0x0403030203020201
DATA nibbleCount<>+16(SB)/8, $0x0302020102010100
DATA nibbleCount<>+24(SB)/8, $0x0403030203020201
GLOBL nibbleCount<>(SB), (RODATA|NOPTR), $32

DATA lowNibbles<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA lowNibbles<>+8(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA lowNibbles<>+16(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA lowNibbles<>+24(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL lowNibbles<>(SB), (RODATA|NOPTR), $32

// PLANE adds plane p of the nibble table (nib + 128·p: low nibbles of
// words 0-3 at +0, of words 4-5 at +32, high nibbles at +64 and +96) to
// the byte counts: Y8 (words 0-3) and X9 (words 4-5) are doubled, then
// given the popcounts of the code's nibbles (Y0, X1 low; Y2, X3 high)
// under the plane's.
#define PLANE(off) \
	VPAND   off+0(DX), Y0, Y4 \
	VPAND   off+64(DX), Y2, Y5 \
	VPSHUFB Y4, Y14, Y4 \
	VPSHUFB Y5, Y14, Y5 \
	VPAND   off+32(DX), X1, X6 \
	VPAND   off+96(DX), X3, X7 \
	VPSHUFB X6, X14, X6 \
	VPSHUFB X7, X14, X7 \
	VPADDB  Y8, Y8, Y8 \
	VPADDB  X9, X9, X9 \
	VPADDB  Y4, Y8, Y8 \
	VPADDB  X6, X9, X9 \
	VPADDB  Y5, Y8, Y8 \
	VPADDB  X7, X9, X9

// func popcounts6AVX2(codes, nib *uint64, n int, out *uint32)
// popcounts6AVX512's sums without AVX-512: the popcount of a byte is that
// of its two nibbles, looked up 32 at a time by VPSHUFB. nib holds the
// four planes split into nibbles (see PLANE); the planes' weights 8, 4,
// 2, 1 are applied by doubling the byte counts between planes (a byte
// reaches at most 8·15 = 120, and 240 once the two halves are added, so
// bytes never overflow), and VPSADBW sums the bytes of a code.
TEXT ·popcounts6AVX2(SB), NOSPLIT, $0-32
	MOVQ codes+0(FP), SI
	MOVQ nib+8(FP), DX
	MOVQ n+16(FP), CX
	MOVQ out+24(FP), DI
	VMOVDQU nibbleCount<>(SB), Y14
	VMOVDQU lowNibbles<>(SB), Y15
	VPXOR   Y13, Y13, Y13

loop:
	CMPQ CX, $0
	JE   done
	VMOVDQU 0(SI), Y0
	VMOVDQU 32(SI), X1
	VPSRLW  $4, Y0, Y2
	VPSRLW  $4, X1, X3
	VPAND   Y15, Y0, Y0
	VPAND   Y15, Y2, Y2
	VPAND   X15, X1, X1
	VPAND   X15, X3, X3
	VPXOR   Y8, Y8, Y8
	VPXOR   Y9, Y9, Y9
	PLANE(384)
	PLANE(256)
	PLANE(128)
	PLANE(0)
	VPADDB  Y9, Y8, Y8 // Y9's upper half is zero
	VPSADBW Y13, Y8, Y8
	VEXTRACTI128 $1, Y8, X10
	VPADDQ  X10, X8, X8
	VPSHUFD $0x4e, X8, X10
	VPADDQ  X10, X8, X8
	VMOVQ   X8, AX
	MOVL    AX, (DI)
	ADDQ    $48, SI
	ADDQ    $4, DI
	DECQ    CX
	JMP     loop

done:
	VZEROUPPER
	RET

// func estimatesAVX512(counts *uint32, factor *float32, pop *uint16, n int, k *[4]float32, mm *[32]float32)
// The 1-bit estimates of n slots, n a multiple of 16, in place of their
// counts, sixteen at a time with the Go loop's operations in its order
// (no FMA): factor·((lo2·pop + delta2·count) − sum) + add, k holding lo2,
// delta2, sum and add. mm receives the sixteen lanes' minima, then their
// maxima.
TEXT ·estimatesAVX512(SB), NOSPLIT, $0-48
	MOVQ counts+0(FP), DI
	MOVQ factor+8(FP), SI
	MOVQ pop+16(FP), DX
	MOVQ n+24(FP), CX
	MOVQ k+32(FP), AX
	MOVQ mm+40(FP), BX
	VBROADCASTSS 0(AX), Z4
	VBROADCASTSS 4(AX), Z5
	VBROADCASTSS 8(AX), Z6
	VBROADCASTSS 12(AX), Z7
	VMOVUPS 0(BX), Z8
	VMOVUPS 64(BX), Z9

eloop:
	CMPQ CX, $0
	JE   edone
	VPMOVZXWD (DX), Z1
	VCVTDQ2PS Z1, Z1
	VCVTDQ2PS (DI), Z0
	VMULPS Z4, Z1, Z1
	VMULPS Z5, Z0, Z0
	VADDPS Z0, Z1, Z0
	VSUBPS Z6, Z0, Z0
	VMULPS (SI), Z0, Z0
	VADDPS Z7, Z0, Z0
	VMOVUPS Z0, (DI)
	VMINPS Z0, Z8, Z8
	VMAXPS Z0, Z9, Z9
	ADDQ $64, DI
	ADDQ $64, SI
	ADDQ $32, DX
	SUBQ $16, CX
	JMP  eloop

edone:
	VMOVUPS Z8, 0(BX)
	VMOVUPS Z9, 64(BX)
	VZEROUPPER
	RET

// func prefetch(p unsafe.Pointer, n int)
// PREFETCHT0 every 64-byte line that holds one of the n > 0 bytes at p
// (a prefetch never faults, whatever the address).
TEXT ·prefetch(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), SI
	MOVQ n+8(FP), CX
	LEAQ -1(SI)(CX*1), DX // the last byte
	ANDQ $-64, SI

ploop:
	PREFETCHT0 (SI)
	ADDQ $64, SI
	CMPQ SI, DX
	JLS  ploop
	RET
