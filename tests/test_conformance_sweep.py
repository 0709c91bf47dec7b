"""Conformance sweep of the Cortex-M4 fast paths (work in progress on branch `audit`).

Plan: multi-op int8 models of CONV_2D / DEPTHWISE_CONV_2D / FULLY_CONNECTED layers drawn
from the ranges the corpus models use (odd channel counts, strides 1/2, 1x1..10x8 windows,
border-dominated 3x3 / 6x6 maps, multipliers 1/2/4/8, zero points near -128 / +127), run with
`--tags cmsis` on the host and on qemu-cortex-m4, compared with TFLM."""
