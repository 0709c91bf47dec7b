"""One descriptor per operator: everything Python knows about an op, in one table.

Adding an op means one row here, its C file (whose marker line `tflm-op: NAME symbol types:`
says which dtypes its kernel runs, beside the code that runs them) and its test.  Every
other module asks this table: the model builder (options type, versions), the planner
(in place, alias), the overlap rule (sequential or window, pixel block), requantisation
(weight operands), `support` (the input that selects the kernel, TFLM's structural limits),
`inspect` (MACs), `accelerator` (ops that stay on the CPU, filter windows) and the
compiler-free arena (allocation model).  The builtin code comes from
`tflite.BuiltinOperator` and is never typed; the C side reads the same numbers from
`runtime_c/tflm_builtin_codes.h` (tflm_gen.builtin_header).

One table module rather than a package of one module per op family: most ops hold two or
three facts, and a single sorted table is what a reviewer compares against TFLM and what
a newcomer greps; the few facts that are functions (MAC counts) sit above it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache

import tflite

# (shape of input i, output element count, builtin options) -> multiply-accumulates.
MacCount = Callable[[Callable[[int], list[int]], int, dict], int]


@dataclass(frozen=True)
class OpDescriptor:
    name: str  # BuiltinOperator member name, e.g. "CONV_2D"
    options: str | None = None  # BuiltinOptions member; None: CamelCase(name) + "Options"
    versions: Mapping[str, int] = field(default_factory=dict)  # first input dtype -> version
    in_place: bool = False  # reads element i before writing it, never again: may share
    alias: bool = False  # output is the input's bytes viewed with another shape
    arena: str | None = None  # allocation model in tflm_gen.arena (a record name or model)
    macs: MacCount | None = None  # None: the op counts no MACs
    # The input whose dtype selects the kernel, where the rule "first non-constant input"
    # is wrong: a data input that is not first (TRANSPOSE_CONV: output_shape, weights,
    # input; SELECT_V2: condition, x, y; FILL: dims, value), or a first input that selects
    # even when constant (a GATHER from a constant table is a float or int8 GATHER);
    # ASSIGN_VARIABLE: the handle, not the value assigned (tflm_gen.support).
    data_input: int | None = None
    weights: tuple[int, int] | None = None  # (data, weights) inputs of a requantising op
    channels: str = "filter"  # requant channels: "output" (last dim) or "filter" (scales)
    # Most consecutive output pixels any of its kernels computes at once (CONV_2D: 4, the
    # cmsis MVE path; tflm_gen.overlap keeps the input those pixels read).
    pixel_block: int = 1
    # How the output may overlap its consumed input (tflm_gen.overlap): "sequential" (element
    # i written after input element i was read, in our kernels and TFLM's), a window read
    # from "filter" (weights H, W) or from the "options" (pools); None: no partial overlap.
    overlap: str | None = None
    # Its kernels walk the output pixels backwards when the output starts inside the input
    # (above it), so the planner may also place the output over the input's end
    # (tflm_gen.overlap.backward_start).
    walks_back: bool = False
    filter_window: bool = False  # input 1 is a filter [O, H, W, I]: its window is H, W
    cpu_only: bool = False  # runs subgraphs or owns resource variables: never offloaded
    # TFLM's structural limit (what is counted, the most TFLM takes), read from its kernels.
    tflm_limit: tuple[str, int] | None = None

    @property
    def code(self) -> int:
        """The BuiltinOperator value of the installed schema."""
        return getattr(tflite.BuiltinOperator, self.name)

    @property
    def options_type(self) -> str:
        """The BuiltinOptions union member the op uses ("NONE" when it takes no options)."""
        if self.options is not None:
            return self.options
        camel = "".join(part.capitalize() for part in self.name.split("_")) + "Options"
        return camel if hasattr(tflite.BuiltinOptions, camel) else "NONE"

    def version(self, dtype: str) -> int:
        """The TFLite op version for the dtype of the first input (tflite-micro accepts it)."""
        return self.versions.get(dtype, 1)

    @property
    def dtypes(self) -> frozenset[str]:
        """Activation dtypes our kernel runs, from its marker line (empty: no kernel)."""
        from tflm_gen.kernels import kernel_catalogue  # the C files are read lazily
        spec = kernel_catalogue().get(self.name)
        return spec.dtypes if spec else frozenset()

    @property
    def tflm_dtypes(self) -> frozenset[str]:
        """Dtypes of the kernel-selecting input TFLM's kernel accepts (tflm_op_dtypes.tsv,
        read from TFLM's sources; empty: TFLM lacks the op)."""
        from tflm_gen.op_dtypes import tflm_dtypes
        return frozenset(tflm_dtypes().get(self.name, ()))


def _conv_2d_macs(shape, outputs, options):
    return outputs * math.prod(shape(1)[1:])


def _conv_3d_macs(shape, outputs, options):
    return outputs * math.prod(shape(1)[:-1])


def _depthwise_macs(shape, outputs, options):
    return outputs * math.prod(shape(1)[1:3])


def _fully_connected_macs(shape, outputs, options):
    return outputs * (shape(1)[-1] if shape(1) else 0)


def _transpose_conv_macs(shape, outputs, options):
    # inputs: output shape, filter [O, H, W, I], input
    return math.prod(shape(2)) * math.prod(shape(1)[:3])


def _batch_matmul_macs(shape, outputs, options):
    lhs = shape(0)
    adjoint = options.get("adj_x", False)
    return outputs * (lhs[-2] if adjoint else lhs[-1]) if len(lhs) >= 2 else 0


def _op(name: str, **facts) -> OpDescriptor:
    return OpDescriptor(name, **facts)


_ROWS = [
    _op("ABS", in_place=True, arena="unary"),
    _op("ADD", versions={"int8": 2, "int16": 3}, in_place=True, arena="add"),
    _op("ADD_N", arena="add_n"),
    _op("ARG_MAX", arena="arg", data_input=0),
    _op("ARG_MIN", arena="arg", data_input=0),
    _op("ASSIGN_VARIABLE", cpu_only=True, arena="none", data_input=0),
    _op("AVERAGE_POOL_2D",
        options="Pool2DOptions", versions={"int8": 2, "int16": 3}, arena="pool", overlap="options"),
    _op("BATCH_MATMUL", arena="batch_matmul", macs=_batch_matmul_macs),
    _op("BATCH_TO_SPACE_ND", options="BatchToSpaceNDOptions", arena="space_batch", data_input=0),
    _op("BROADCAST_ARGS", arena="none"),
    _op("BROADCAST_TO", arena="layout_view", data_input=0),
    _op("CALL_ONCE", cpu_only=True, arena="control"),
    _op("CAST", arena="cast"),
    _op("CEIL", arena="unary"),
    _op("CONCATENATION", tflm_limit=("inputs", 10), arena="input_pieces"),  # kMaxInputNum
    _op("CONV_2D",
        options="Conv2DOptions", versions={"int8": 3, "int16": 4}, arena="weighted_conv",
        macs=_conv_2d_macs, weights=(0, 1), channels="output", pixel_block=4, overlap="filter",
        filter_window=True),
    _op("CONV_3D", macs=_conv_3d_macs),
    _op("COS", arena="unary"),
    _op("CUSTOM", cpu_only=True),
    _op("CUMSUM", arena="cumsum", data_input=0),
    _op("DEPTHWISE_CONV_2D",
        options="DepthwiseConv2DOptions", versions={"int8": 3, "int16": 5}, arena="weighted_conv",
        macs=_depthwise_macs, weights=(0, 1), channels="output", overlap="filter",
        walks_back=True, filter_window=True),
    _op("DEPTH_TO_SPACE", arena="layout_view"),
    _op("DEQUANTIZE", overlap="sequential", versions={"int8": 2, "int16": 4}, arena="dequantize"),
    _op("DIV", arena="div"),
    _op("DYNAMIC_UPDATE_SLICE", arena="layout_view", data_input=0),
    _op("ELU", arena="elu"),
    _op("EMBEDDING_LOOKUP", arena="embedding_lookup", data_input=1),
    _op("EQUAL", arena="cmp"),
    _op("EXP", arena="unary"),
    _op("EXPAND_DIMS", alias=True, arena="shape", data_input=0),
    _op("FILL", arena="fill", data_input=1),
    _op("FLOOR", arena="unary"),
    _op("FLOOR_DIV", arena="floor"),
    _op("FLOOR_MOD", arena="floor"),
    _op("FULLY_CONNECTED",
        versions={"int8": 4, "int16": 7}, arena="weighted_fc", macs=_fully_connected_macs,
        weights=(0, 1)),
    _op("GATHER", arena="gather", data_input=0),
    _op("GATHER_ND", arena="gather_nd", data_input=0),
    _op("GELU", arena="gelu"),
    _op("GREATER", arena="cmp"),
    _op("GREATER_EQUAL", arena="cmp"),
    _op("HARD_SWISH", in_place=True, arena="hard_swish"),
    _op("IF", cpu_only=True, arena="control"),
    _op("L2_NORMALIZATION", arena="l2norm"),
    _op("L2_POOL_2D", options="Pool2DOptions", arena="l2_pool"),
    _op("LEAKY_RELU", options="LeakyReluOptions", in_place=True, arena="act"),
    _op("LESS", arena="cmp"),
    _op("LESS_EQUAL", arena="cmp"),
    _op("LOG", arena="unary"),
    _op("LOGICAL_AND", arena="binary"),
    _op("LOGICAL_NOT", arena="none"),
    _op("LOGICAL_OR", arena="binary"),
    _op("LOGISTIC", options="NONE", in_place=True, arena="sigmoid"),
    _op("LOG_SOFTMAX", arena="log_softmax"),
    _op("MAXIMUM", arena="binary"),
    _op("MAX_POOL_2D",
        options="Pool2DOptions", versions={"int8": 2, "int16": 3}, arena="pool", overlap="options"),
    _op("MEAN", arena="reduce_scratch", data_input=0),
    _op("MINIMUM", arena="binary"),
    _op("MIRROR_PAD", arena="mirror_pad", data_input=0),
    _op("MUL", in_place=True, arena="mul"),
    _op("NEG", in_place=True, arena="unary"),
    _op("NOT_EQUAL", arena="cmp"),
    _op("PACK", arena="input_pieces"),
    _op("PAD", arena="pad", data_input=0),
    _op("PADV2", arena="pad", data_input=0),
    _op("POW", arena="binary"),
    _op("PRELU", arena="prelu"),
    _op("QUANTIZE", overlap="sequential", versions={"float32": 2, "int16": 4}, arena="quantize"),
    _op("READ_VARIABLE", cpu_only=True, arena="none"),
    _op("REDUCE_ALL", options="ReducerOptions", arena="reduce_all", data_input=0),
    _op("REDUCE_MAX", arena="reduce_scratch", data_input=0),
    _op("REDUCE_MIN", options="ReducerOptions", arena="reduce_min", data_input=0),
    _op("REDUCE_PROD", data_input=0),
    _op("RELU", options="NONE", in_place=True, arena="act"),
    _op("RELU_N1_TO_1", in_place=True),
    _op("RELU6", options="NONE", in_place=True, arena="act"),
    _op("RELU_0_TO_1", arena="act"),
    _op("RESHAPE", alias=True, arena="reshape", data_input=0),
    _op("RESIZE_BILINEAR", arena="resize", data_input=0),
    _op("RESIZE_NEAREST_NEIGHBOR", arena="resize", data_input=0),
    _op("REVERSE_V2", arena="layout_view", data_input=0),
    _op("ROUND", arena="none"),
    _op("RSQRT", arena="unary"),
    _op("SELECT_V2", arena="select", data_input=1),
    _op("SHAPE", arena="shape"),
    _op("SIGN", arena="none"),
    _op("SIN", arena="unary"),
    _op("SLICE", arena="layout_view", data_input=0),
    _op("SOFTMAX", versions={"int8": 2, "int16": 3}, arena="softmax_tables"),
    _op("SPACE_TO_BATCH_ND", options="SpaceToBatchNDOptions", arena="space_batch", data_input=0),
    _op("SPACE_TO_DEPTH", arena="layout_view"),
    _op("SPLIT", arena="output_pieces", data_input=1),
    _op("SPLIT_V", arena="output_pieces", data_input=0),
    _op("SQRT", arena="unary"),
    _op("SQUARE", arena="unary"),
    _op("SQUARED_DIFFERENCE", arena="sqdiff"),
    _op("SQUEEZE", alias=True, arena="shape"),
    # tflm_limit: strided_slice_common.cc kMaxDim
    _op("STRIDED_SLICE", tflm_limit=("input dimensions", 4), arena="layout_view", data_input=0),
    _op("SUB", in_place=True, arena="sub"),
    _op("SUM", arena="reduce_scratch", data_input=0),
    _op("SVDF", arena="svdf_state"),
    _op("TANH", options="NONE", in_place=True, arena="sigmoid"),
    _op("TILE", data_input=0),
    _op("TRANSPOSE", arena="layout_view", data_input=0),
    _op("TRANSPOSE_CONV",
        options="TransposeConvOptions", arena="weighted_transpose_conv", macs=_transpose_conv_macs,
        weights=(2, 1), channels="output", data_input=2, filter_window=True),
    _op("UNIDIRECTIONAL_SEQUENCE_LSTM", arena="lstm_cells"),
    _op("UNPACK", arena="output_pieces"),
    _op("VAR_HANDLE", cpu_only=True, arena="var_handle"),
    _op("WHILE", cpu_only=True, arena="control"),
    _op("ZEROS_LIKE", arena="fill"),
]
DESCRIPTORS = {d.name: d for d in _ROWS}
if len(DESCRIPTORS) != len(_ROWS):  # a second row would silently replace the first
    raise RuntimeError("op_descriptors: an op has two rows")


@cache
def describe(name: str) -> OpDescriptor:
    """The descriptor of any BuiltinOperator name: the table's row, else one with no facts
    (the builder still writes models of ops without a kernel, to test their refusal)."""
    return DESCRIPTORS.get(name) or OpDescriptor(name)


def ops_with(fact: str) -> frozenset[str]:
    """Names of the ops whose `fact` is set (truthy), e.g. ops_with("in_place")."""
    return frozenset(name for name, d in DESCRIPTORS.items() if getattr(d, fact))
