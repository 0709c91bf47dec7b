"""Partial overlap of an operator's output with the consumed part of its input.

A convolution (plain or depthwise) or a pooling writes its output pixels in raster order
and never reads an input row again once every remaining output pixel's window starts
below it.  Its output may therefore start below its input's offset and run up into the
input's consumed rows: the planner only needs `clearance` bytes of the output kept below
the input (tflm_gen.plan.Buffer.clearance), instead of the whole output.

The rule holds for every kernel that runs these ops, since the plan is shared by all of them:
  * kernels_c/conv_reference.c, depthwise_reference.c (and TFLM's reference kernels): one
    pixel at a time, raster;
  * kernels_c/cmsis/conv.c: blocks of 2, 3 or 4 (DSP) or 4 (MVE) consecutive pixels, all their
    channels written after the block's windows were read; conv_mve.h's channel-group path
    (which reads every pixel again per group) declines a layer whose output overlaps its
    input when it needs more than one group; conv_narrow.h's 1x1 kernels read both pixels
    of a pair (K = 8) or all 4 of a quad (K = 16, 32) before writing any, its RGB kernel the
    3 windows of a triple (at stride 2 the windows of a band of up to 12 pixels of a row);
  * kernels_c/cmsis/depthwise_conv.c: one pixel (or one row of inside pixels) at a time,
    raster (depthwise_narrow.h: 3 pixels of a row, their windows read before any is
    written), or last pixel first when the output starts inside the input; depthwise_mve.h
    per block of 16 channels, walking its pixels last first under such an overlap and
    declining one that is not a whole number of pixels;
  * kernels_c/pooling_reference.c, cmsis/pooling.c (AVERAGE_POOL_2D, MAX_POOL_2D): one
    pixel at a time, raster (cmsis's max pool keeps its running maximum in the output
    pixel: harmless, those bytes are input no later pixel reads).
A block may straddle output rows, so an output pixel only overwrites input that no pixel of
its block, nor any later one, reads: the pixels from `q - (pixel_block - 1)` on
(the op's descriptor, tflm_gen.op_descriptors).
"""

from __future__ import annotations

import functools

from tflm_gen.model import ir
from tflm_gen.op_descriptors import describe

PADDING_SAME = 0  # tflite Padding enum


def clearance(graph: ir.SubGraph, op: ir.Operator) -> int | None:
    """Bytes of the op's output that must lie below its first input's offset when placed
    below it (the rest may run over the consumed input), or None: no partial overlap."""
    if describe(op.opcode).overlap == "sequential":
        return sequential_clearance(graph, op)
    return conv_clearance(graph, op)


def sequential_clearance(graph: ir.SubGraph, op: ir.Operator) -> int | None:
    """Output element i (e_out bytes) lands on input bytes already read when the output
    starts (e_out - e_in) * count bytes lower (or at the input's offset when narrower).
    Only where one side is a byte type or both have the same type: C compilers may assume
    an int16 and a float never alias, and reorder such loads and stores."""
    if len(op.inputs) != 1 or op.inputs[0] < 0 or len(op.outputs) != 1:
        return None
    source, out = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
    count = ir.element_count(source)
    if count == 0 or count != ir.element_count(out):
        return None
    element_in, element_out = ir.tensor_bytes(source) // count, ir.tensor_bytes(out) // count
    if element_in * count != ir.tensor_bytes(source) or element_out * count != ir.tensor_bytes(out):
        return None  # packed int4
    if 1 not in (element_in, element_out) and source.dtype != out.dtype:
        return None
    return max(0, (element_out - element_in) * count)


def pad_before(padding: int, stride: int, dilation: int, in_size: int, filter_size: int,
                out_size: int) -> int:
    """Rows (or columns) of padding before the image, as kernels_c/conv_common.c computes."""
    if padding != PADDING_SAME:
        return 0
    effective = (filter_size - 1) * dilation + 1
    return max(0, (out_size - 1) * stride + effective - in_size) // 2


def window_size(graph: ir.SubGraph, op: ir.Operator) -> tuple[int, int] | None:
    """Filter height and width of a convolution or pooling, or None for other ops."""
    options = op.builtin_options
    window = describe(op.opcode).overlap
    if window == "options":
        return int(options.get("filter_height", 1)), int(options.get("filter_width", 1))
    if window == "filter" and len(op.inputs) >= 2 and op.inputs[1] >= 0:
        filters = graph.tensors[op.inputs[1]]
        return (filters.shape[1], filters.shape[2]) if len(filters.shape) == 4 else None
    return None


def _geometry(graph: ir.SubGraph, op: ir.Operator):
    """(input, output, window, stride, pad_before) of a one-batch convolution or pooling
    whose input and output share a dtype, or None."""
    window = window_size(graph, op)
    if window is None or not op.inputs or op.inputs[0] < 0 or len(op.outputs) != 1:
        return None
    source, out = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
    shapes_ok = len(source.shape) == 4 and len(out.shape) == 4
    if not shapes_ok or source.shape[0] != 1 or out.shape[0] != 1 or source.dtype != out.dtype:
        return None  # batches > 1 or hybrid (float activations, int8 weights): not modelled
    options = op.builtin_options
    padding = int(options.get("padding", PADDING_SAME))
    stride = int(options.get("stride_h", 1)), int(options.get("stride_w", 1))
    dilation = int(options.get("dilation_h_factor", 1)), int(options.get("dilation_w_factor", 1))
    pads = tuple(pad_before(padding, stride[i], dilation[i], source.shape[1 + i], window[i],
                             out.shape[1 + i]) for i in range(2))
    effective = tuple((window[i] - 1) * dilation[i] + 1 for i in range(2))
    return source, out, effective, stride, pads


def _images(source: ir.Tensor, out: ir.Tensor) -> tuple[tuple[int, int, int], ...]:
    """(height, width, bytes per pixel) of a one-batch NHWC input and output of one dtype."""
    _, in_h, in_w, in_c = source.shape
    _, out_h, out_w, out_c = out.shape
    element = ir.tensor_bytes(source) // max(1, in_h * in_w * in_c)
    return (in_h, in_w, in_c * element), (out_h, out_w, out_c * element)


def conv_clearance(graph: ir.SubGraph, op: ir.Operator) -> int | None:
    """Bytes of a convolution's or pooling's output that must lie below its input's offset
    when the output is placed below the input, or None when the operator gets no partial
    overlap."""
    geometry = _geometry(graph, op)
    if geometry is None:
        return None
    source, out, _, stride, pads = geometry
    return _raster_clearance(*_images(source, out), stride, pads, describe(op.opcode).pixel_block)


@functools.lru_cache(maxsize=256)
def _raster_clearance(image_in: tuple[int, int, int], image_out: tuple[int, int, int],
                      stride: tuple[int, int], pads: tuple[int, int], pixel_block: int) -> int:
    """conv_clearance from the geometry alone (memoised: the patch search plans the same
    operators for hundreds of candidate stages)."""
    (in_h, in_w, input_pixel), (out_h, out_w, output_pixel) = image_in, image_out
    (stride_h, stride_w), (pad_h, pad_w) = stride, pads
    # Output start relative to input start: at most `limit` (negative) for every pixel q.
    limit = 0
    for q in range(out_h * out_w):
        first = max(0, q - (pixel_block - 1))
        row, column = (first // out_w) * stride_h - pad_h, (first % out_w) * stride_w - pad_w
        # Pixel `first` reads from (row, column) on; later pixels from further on (a later
        # output row starts at least one input row lower).  A window above the image may be
        # followed by one starting at column 0 of row 0: nothing is consumed yet.
        dead = 0 if row < 0 else min(in_h * in_w, row * in_w + max(0, column)) * input_pixel
        limit = min(limit, dead - (q + 1) * output_pixel)
    return -limit


def backward_start(graph: ir.SubGraph, op: ir.Operator) -> int | None:
    """For an operator whose kernels walk their output pixels backwards when the output
    starts inside the input (descriptor `walks_back`): the fewest bytes the output's start
    may lie above the input's start, or None.  The mirror of `conv_clearance`: pixel q,
    written when every later pixel is done, may only cover input after the last element any
    pixel up to q reads (the end of its window, clipped to the image)."""
    geometry = _geometry(graph, op) if describe(op.opcode).walks_back else None
    if geometry is None:
        return None
    source, out, window, stride, pads = geometry
    return _raster_start(*_images(source, out), window, stride, pads)


@functools.lru_cache(maxsize=256)
def _raster_start(image_in: tuple[int, int, int], image_out: tuple[int, int, int],
                  window: tuple[int, int], stride: tuple[int, int], pads: tuple[int, int]) -> int:
    """backward_start from the geometry alone (memoised as _raster_clearance)."""
    (in_h, in_w, input_pixel), (out_h, out_w, output_pixel) = image_in, image_out
    (eff_h, eff_w), (stride_h, stride_w), (pad_h, pad_w) = window, stride, pads
    start = 0
    for q in range(out_h * out_w):
        row = (q // out_w) * stride_h - pad_h + eff_h - 1
        column = (q % out_w) * stride_w - pad_w + eff_w - 1
        live = in_h * in_w if row >= in_h else row * in_w + min(in_w, column + 1)
        start = max(start, max(0, live) * input_pixel - q * output_pixel)
    return start
