/* The assembly shared by conv_narrow.h's RGB kernel and depthwise_narrow.h: 3 output pixels
 * x 2 channels per pass over inputs widened once into memory, the 6 sums in registers
 * (r2-r4 channel a's of pixels 0-2, r5-r7 channel b's), per half of a group of 4 inputs
 * one chain of 5 loads (r8 r9 the two channels' weight words, r10-r12 the 3 pixels' input
 * words: 6 cycles) and 6 SMLADs; and the loop over the runs of triples of a job whose
 * first words are rows[3], line[3], out (at 24), ..., count (at 40), advance (at 44). */
#ifndef TFLM_CMSIS_NARROW_TRIPLES_H
#define TFLM_CMSIS_NARROW_TRIPLES_H

/* The 5 loads of one half-group, at the addresses given (assembler operands). */
#define NARROW3_LOADS(wa, wb, x0, x1, x2)                                                  \
  "ldr r8, " wa "\n\t"                                                                   \
  "ldr r9, " wb "\n\t"                                                                   \
  "ldr r10, " x0 "\n\t"                                                                  \
  "ldr r11, " x1 "\n\t"                                                                  \
  "ldr r12, " x2 "\n\t"
/* Their 6 products added to the sums. */
#define NARROW3_MACS                                                                       \
  "smlad r2, r8, r10, r2\n\t"                                                            \
  "smlad r3, r8, r11, r3\n\t"                                                            \
  "smlad r4, r8, r12, r4\n\t"                                                            \
  "smlad r5, r9, r10, r5\n\t"                                                            \
  "smlad r6, r9, r11, r6\n\t"                                                            \
  "smlad r7, r9, r12, r7\n\t"
/* The first half-group's: the sums start at r2 (channel a) and r5 (channel b). */
#define NARROW3_START                                                                      \
  "smlad r3, r8, r11, r2\n\t"                                                            \
  "smlad r4, r8, r12, r2\n\t"                                                            \
  "smlad r2, r8, r10, r2\n\t"                                                            \
  "smlad r6, r9, r11, r5\n\t"                                                            \
  "smlad r7, r9, r12, r5\n\t"                                                            \
  "smlad r5, r9, r10, r5\n\t"
/* The first half-group: the sums start at the words at start_a, start_b (assembler
 * operands), then `loads` (NARROW3_LOADS) and NARROW3_START. */
#define NARROW3_FIRST(start_a, start_b, loads)                                             \
  "ldr r2, " start_a "\n\t"                                                              \
  "ldr r5, " start_b "\n\t"                                                              \
  loads NARROW3_START

/* After a triple: the job at [sp, #job_at] into r0; its count less 1, and when triples are
 * left its rows moved by advance and out by 24, then back to label 1 (else on to 2). */
#define NARROW3_NEXT(job_at)                                                               \
  "ldr r0, [sp, #" job_at "]\n\t"                                                        \
  "ldr r12, [r0, #40]\n\t"                                                               \
  "subs r12, r12, #1\n\t"                                                                \
  "beq 2f\n\t"                                                                           \
  "str r12, [r0, #40]\n\t"                                                               \
  "ldr r1, [r0, #44]\n\t"                                                                \
  "ldmia r0, {r2, r3, r4}\n\t"                                                           \
  "add r2, r2, r1\n\t"                                                                   \
  "add r3, r3, r1\n\t"                                                                   \
  "add r4, r4, r1\n\t"                                                                   \
  "ldr r5, [r0, #24]\n\t"                                                                \
  "stmia r0, {r2, r3, r4}\n\t"                                                           \
  "add r5, r5, #24\n\t"                                                                  \
  "str r5, [r0, #24]\n\t"                                                                \
  "b 1b\n\t"                                                                             \
  "2:\n\t"

#endif /* TFLM_CMSIS_NARROW_TRIPLES_H */
