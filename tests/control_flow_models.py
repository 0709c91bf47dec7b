"""Multi-subgraph models built with ModelBuilder for the control-flow tests: IF, WHILE,
CALL_ONCE and resource variables (VAR_HANDLE, READ_VARIABLE, ASSIGN_VARIABLE)."""

from __future__ import annotations

import numpy as np

from tflm_gen.model.builder import ModelBuilder
from tflm_gen.model.ir import Quantization

INT8 = {"scale": 0.05, "zero_point": 3}


def _quant(scale: float, zero_point: int) -> Quantization:
    return Quantization([scale], [zero_point])


def _branch(b: ModelBuilder, name: str, opcode: str, values, dtype="float32") -> int:
    """A subgraph computing `opcode(input, constant)` on a [1, 4] tensor; returns its index."""
    graph = b.subgraph(name)
    x = graph.tensor(f"{name}_x", [1, 4], dtype)
    graph.inputs(x)
    constant = graph.constant(f"{name}_c", np.array([values], np.float32))
    graph.output(graph.add_op(opcode, [x, constant], [1, 4], dtype))
    return graph.index


def if_model() -> bytes:
    """out = IF(cond, x) + tanh(x): then adds a constant, else multiplies; tanh(x) is live
    across the call, so the branches' tensors must not overwrite it."""
    b = ModelBuilder()
    cond = b.input("cond", [1], "bool")
    x = b.input("x", [1, 4], "float32")
    y = b.add_op("TANH", [x], [1, 4], "float32")
    then = _branch(b, "then", "ADD", [0.5, -1.0, 2.0, 0.25])
    other = _branch(b, "else", "MUL", [3.0, -2.0, 0.5, 1.5])
    out = b.tensor("if_out", [1, 4], "float32")
    b.operator("IF", [cond, x], [out],
               options={"then_subgraph_index": then, "else_subgraph_index": other})
    b.output(b.add_op("ADD", [out, y], [1, 4], "float32"))
    return b.build()


def _while_cond(b: ModelBuilder, limit: float) -> int:
    """cond(i, acc): max(acc) < limit."""
    cond = b.subgraph("cond")
    i, acc = cond.tensor("ci", [], "int32"), cond.tensor("ca", [1, 4], "float32")
    cond.inputs(i, acc)
    axis = cond.constant("axis", np.array([0, 1], np.int32))
    largest = cond.add_op("REDUCE_MAX", [acc, axis], [], "float32")
    bound = cond.constant("limit", np.array(limit, np.float32))
    cond.output(cond.add_op("LESS", [largest, bound], [], "bool"))
    return cond.index


def _while_body(b: ModelBuilder) -> int:
    """body(i, acc) = (i + 1, acc + step)."""
    body = b.subgraph("body")
    i, acc = body.tensor("bi", [], "int32"), body.tensor("ba", [1, 4], "float32")
    body.inputs(i, acc)
    one = body.constant("one", np.array(1, np.int32))
    step = body.constant("step", np.array([[0.5, 0.25, 0.75, 0.125]], np.float32))
    body.output(body.add_op("ADD", [i, one], [], "int32"),
                body.add_op("ADD", [acc, step], [1, 4], "float32"))
    return body.index


def while_model() -> bytes:
    """(i, acc) = WHILE(0, x) while max(acc) < 3: the trip count depends on x; i and acc are
    carried from one iteration to the next.  Outputs i and acc + tanh(x)."""
    b = ModelBuilder()
    x = b.input("x", [1, 4], "float32")
    y = b.add_op("TANH", [x], [1, 4], "float32")
    zero = b.constant("zero", np.array(0, np.int32))
    cond, body = _while_cond(b, 3.0), _while_body(b)
    i_out, acc_out = b.tensor("i_out", [], "int32"), b.tensor("acc_out", [1, 4], "float32")
    b.operator("WHILE", [zero, x], [i_out, acc_out],
               options={"cond_subgraph_index": cond, "body_subgraph_index": body})
    b.output(i_out, b.add_op("ADD", [acc_out, y], [1, 4], "float32"))
    return b.build()


def _int8_cond(b: ModelBuilder) -> int:
    """cond(i, h): i < 8 and max(h) > 0 (real value), on int8 h."""
    cond = b.subgraph("cond")
    i, h = cond.tensor("ci", [], "int32"), cond.tensor("ch", [1, 8], "int8", **INT8)
    cond.inputs(i, h)
    axis = cond.constant("axis", np.array([1], np.int32))
    largest = cond.add_op("REDUCE_MAX", [h, axis], [1], "int8", **INT8)
    zero = cond.constant("zero", np.array([INT8["zero_point"]], np.int8),
                         quantization=_quant(INT8["scale"], INT8["zero_point"]))
    positive = cond.add_op("GREATER", [largest, zero], [1], "bool")
    eight = cond.constant("eight", np.array([8], np.int32))
    counting = cond.add_op("LESS", [i, eight], [1], "bool")
    cond.output(cond.add_op("LOGICAL_AND", [counting, positive], [1], "bool"))
    return cond.index


def _int8_body(b: ModelBuilder, seed: int) -> int:
    """body(i, h) = (i + 1, fully_connected(h) int8): a recurrent step."""
    body = b.subgraph("body")
    i, h = body.tensor("bi", [], "int32"), body.tensor("bh", [1, 8], "int8", **INT8)
    body.inputs(i, h)
    rng = np.random.default_rng(seed)
    weights = body.constant("w", rng.integers(-127, 127, size=(8, 8), endpoint=True).astype(np.int8),
                            quantization=_quant(0.002, 0))
    bias = body.constant("bias", rng.integers(-3000, 0, size=8).astype(np.int32),
                         quantization=_quant(INT8["scale"] * 0.002, 0))
    one = body.constant("one", np.array(1, np.int32))
    step = body.add_op("FULLY_CONNECTED", [h, weights, bias], [1, 8], "int8", **INT8,
                        options={"fused_activation_function": "RELU"})
    body.output(body.add_op("ADD", [i, one], [], "int32"), step)
    return body.index


def while_int8_model(seed: int = 0) -> bytes:
    """An int8 recurrence h <- fully_connected(h) run while max(h) > 0, at most 8 times."""
    b = ModelBuilder()
    x = b.input("x", [1, 8], "int8", **INT8)
    zero = b.constant("zero", np.array(0, np.int32))
    cond, body = _int8_cond(b), _int8_body(b, seed)
    i_out, h_out = b.tensor("i_out", [], "int32"), b.tensor("h_out", [1, 8], "int8", **INT8)
    b.operator("WHILE", [zero, x], [i_out, h_out],
               options={"cond_subgraph_index": cond, "body_subgraph_index": body})
    b.output(i_out, h_out)
    return b.build()


def _handle(graph: ModelBuilder, name: str) -> int:
    handle = graph.tensor(f"{name}_handle", [], "resource")
    graph.operator("VAR_HANDLE", [], [handle], options={"shared_name": name})
    return handle


def _accumulate(b: ModelBuilder, name: str, x: int, dtype: str, **quant) -> int:
    """value = read(name) + x; assign(name, value); returns value."""
    handle = _handle(b, name)
    value = b.tensor(f"{name}_value", [1, 4], dtype, **quant)
    b.operator("READ_VARIABLE", [handle], [value])
    total = b.add_op("ADD", [value, x], [1, 4], dtype, **quant)
    b.operator("ASSIGN_VARIABLE", [handle, total], [])
    return total


def variables_model() -> bytes:
    """Two resource variables accumulating the inputs across invokes: "acc" (float32) set by
    a CALL_ONCE init subgraph, "count" (int8, zero point -5) starting from its zero point."""
    b = ModelBuilder()
    x = b.input("x", [1, 4], "float32")
    q = b.input("q", [1, 4], "int8", **INT8)
    init = b.subgraph("init")
    b.operator("CALL_ONCE", [], [], options={"init_subgraph_index": init.index})
    acc = _accumulate(b, "acc", x, "float32")
    count = _accumulate(b, "count", q, "int8", scale=0.05, zero_point=-5)
    start = init.constant("start", np.array([[1.0, 2.0, -3.0, 0.5]], np.float32))
    init.operator("ASSIGN_VARIABLE", [_handle(init, "acc"), start], [])
    b.output(acc, count)
    return b.build()


def nested_model() -> bytes:
    """A WHILE whose body runs an IF, and a second IF in the main graph that runs the same
    branch subgraphs again: subgraphs run from several call sites share one placement."""
    b = ModelBuilder()
    x = b.input("x", [1, 4], "float32")
    zero = b.constant("zero", np.array(0, np.int32))
    then = _branch(b, "then", "ADD", [0.5, 0.25, 0.75, 0.125])
    other = _branch(b, "else", "MUL", [1.25, 1.5, 1.125, 1.75])
    cond = _while_cond(b, 4.0)
    body = b.subgraph("body")
    i, acc = body.tensor("bi", [], "int32"), body.tensor("ba", [1, 4], "float32")
    body.inputs(i, acc)
    one = body.constant("one", np.array(1, np.int32))
    axis = body.constant("axis", np.array([0, 1], np.int32))
    low = body.add_op("REDUCE_MAX", [acc, axis], [], "float32")
    small = body.add_op("LESS", [low, body.constant("half", np.array(0.0, np.float32))], [], "bool")
    stepped = body.tensor("stepped", [1, 4], "float32")
    body.operator("IF", [small, acc], [stepped],
                  options={"then_subgraph_index": then, "else_subgraph_index": other})
    body.output(body.add_op("ADD", [i, one], [], "int32"), stepped)
    i_out, acc_out = b.tensor("i_out", [], "int32"), b.tensor("acc_out", [1, 4], "float32")
    b.operator("WHILE", [zero, x], [i_out, acc_out],
               options={"cond_subgraph_index": cond, "body_subgraph_index": body.index})
    flag = b.add_op("GREATER", [i_out, b.constant("two", np.array(2, np.int32))], [], "bool")
    again = b.tensor("again", [1, 4], "float32")
    b.operator("IF", [flag, acc_out], [again],
               options={"then_subgraph_index": then, "else_subgraph_index": other})
    b.output(i_out, again)
    return b.build()


def recursive_model() -> bytes:
    """An IF whose then branch runs itself: TFLM would never return."""
    b = ModelBuilder()
    cond = b.input("cond", [1], "bool")
    x = b.input("x", [1, 4], "float32")
    loop = b.subgraph("loop")
    lc, lx = loop.tensor("lc", [1], "bool"), loop.tensor("lx", [1, 4], "float32")
    loop.inputs(lc, lx)
    inner = loop.tensor("inner", [1, 4], "float32")
    loop.operator("IF", [lc, lc, lx], [inner],
                  options={"then_subgraph_index": loop.index, "else_subgraph_index": loop.index})
    loop.output(inner)
    out = b.tensor("out", [1, 4], "float32")
    b.operator("IF", [cond, cond, x], [out],
               options={"then_subgraph_index": loop.index, "else_subgraph_index": loop.index})
    b.output(out)
    return b.build()


def while_passing_model(dtype: str) -> bytes:
    """WHILE(0, x) three times round, with x of `dtype` carried unchanged by the body: the
    WHILE's kernel-selecting input (its first non-constant one) is of that dtype."""
    b = ModelBuilder()
    x = b.input("x", [2, 3], dtype)
    zero = b.constant("zero", np.array(0, np.int32))
    cond = b.subgraph("cond")
    ci, cx = cond.tensor("ci", [], "int32"), cond.tensor("cx", [2, 3], dtype)
    cond.inputs(ci, cx)
    cond.output(cond.add_op("LESS", [ci, cond.constant("three", np.array(3, np.int32))], [], "bool"))
    body = b.subgraph("body")
    bi, bx = body.tensor("bi", [], "int32"), body.tensor("bx", [2, 3], dtype)
    body.inputs(bi, bx)
    body.output(body.add_op("ADD", [bi, body.constant("one", np.array(1, np.int32))], [], "int32"), bx)
    i_out, x_out = b.tensor("i_out", [], "int32"), b.tensor("x_out", [2, 3], dtype)
    b.operator("WHILE", [zero, x], [i_out, x_out],
               options={"cond_subgraph_index": cond.index, "body_subgraph_index": body.index})
    b.output(i_out, x_out)
    return b.build()


def int32_handle_model() -> bytes:
    """ASSIGN_VARIABLE given the variable's id as a constant int32 tensor (TFLM accepts an
    int32 handle): variable 0 is the one the VAR_HANDLE creates."""
    b = ModelBuilder()
    x = b.input("x", [1, 4], "float32")
    value = b.tensor("value", [1, 4], "float32")
    b.operator("READ_VARIABLE", [_handle(b, "v")], [value])
    total = b.add_op("ADD", [value, x], [1, 4], "float32")
    b.operator("ASSIGN_VARIABLE", [b.constant("id", np.array([0], np.int32)), total], [])
    b.output(total)
    return b.build()
