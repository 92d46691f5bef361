#include "textflag.h"

// func blockMasksAVX2(src *byte, blocks int, pats uint32, dst *blockBits)
//
// For each 64-byte block of src, four masks (bit i: byte i of the block
// equals one of pats' bytes, lowest first) and the prefix XOR of the
// first are written to dst, five words per block.
TEXT ·blockMasksAVX2(SB), NOSPLIT, $0-32
	MOVQ src+0(FP), SI
	MOVQ blocks+8(FP), CX
	MOVL pats+16(FP), AX
	MOVQ dst+24(FP), DI

	VMOVD AX, X0
	VPBROADCASTB X0, Y1
	SHRL $8, AX
	VMOVD AX, X0
	VPBROADCASTB X0, Y2
	SHRL $8, AX
	VMOVD AX, X0
	VPBROADCASTB X0, Y3
	SHRL $8, AX
	VMOVD AX, X0
	VPBROADCASTB X0, Y4
	VPCMPEQB Y10, Y10, Y10 // all ones: the multiplier of the prefix XOR

loop:
	TESTQ CX, CX
	JZ    done
	VMOVDQU 0(SI), Y5
	VMOVDQU 32(SI), Y6

	VPCMPEQB  Y1, Y5, Y7
	VPCMPEQB  Y1, Y6, Y8
	VPMOVMSKB Y7, AX
	VPMOVMSKB Y8, BX
	SHLQ      $32, BX
	ORQ       BX, AX
	MOVQ      AX, 0(DI)
	VMOVQ     AX, X9
	VPCLMULQDQ $0x00, X10, X9, X11
	VMOVQ     X11, 32(DI)

	VPCMPEQB  Y2, Y5, Y7
	VPCMPEQB  Y2, Y6, Y8
	VPMOVMSKB Y7, AX
	VPMOVMSKB Y8, BX
	SHLQ      $32, BX
	ORQ       BX, AX
	MOVQ      AX, 8(DI)

	VPCMPEQB  Y3, Y5, Y7
	VPCMPEQB  Y3, Y6, Y8
	VPMOVMSKB Y7, AX
	VPMOVMSKB Y8, BX
	SHLQ      $32, BX
	ORQ       BX, AX
	MOVQ      AX, 16(DI)

	VPCMPEQB  Y4, Y5, Y7
	VPCMPEQB  Y4, Y6, Y8
	VPMOVMSKB Y7, AX
	VPMOVMSKB Y8, BX
	SHLQ      $32, BX
	ORQ       BX, AX
	MOVQ      AX, 24(DI)

	ADDQ $64, SI
	ADDQ $40, DI
	DECQ CX
	JMP  loop

done:
	VZEROUPPER
	RET

// func countDelimsAVX2(src *byte, blocks int, d byte) (n int, doubled bool)
//
// n is the count of d bytes in the blocks 64-byte blocks at src; doubled
// says two of them are side by side somewhere in them.
TEXT ·countDelimsAVX2(SB), NOSPLIT, $0-33
	MOVQ    src+0(FP), SI
	MOVQ    blocks+8(FP), CX
	MOVBLZX d+16(FP), AX
	VMOVD   AX, X0
	VPBROADCASTB X0, Y1
	XORQ    R8, R8  // the count
	XORQ    R9, R9  // doubled bytes seen
	XORQ    R10, R10 // bit 0: the byte before the block is d

cloop:
	TESTQ CX, CX
	JZ    cdone
	VPCMPEQB  0(SI), Y1, Y2
	VPCMPEQB  32(SI), Y1, Y3
	VPMOVMSKB Y2, AX
	VPMOVMSKB Y3, BX
	SHLQ      $32, BX
	ORQ       BX, AX
	POPCNTQ   AX, DX
	ADDQ      DX, R8
	MOVQ      AX, DX
	SHLQ      $1, DX
	ORQ       R10, DX
	ANDQ      AX, DX
	ORQ       DX, R9
	MOVQ      AX, R10
	SHRQ      $63, R10
	ADDQ      $64, SI
	DECQ      CX
	JMP       cloop

cdone:
	VZEROUPPER
	MOVQ  R8, n+24(FP)
	TESTQ R9, R9
	SETNE doubled+32(FP)
	RET
