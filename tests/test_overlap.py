"""Partial overlaps (tflm_gen.overlap): a convolution's or pooling's output placed as far into its
consumed input as the planner allows stays bit-exact with TFLM, with the reference and the
cmsis kernels; placed fully over its input it does not (the check can fail).  And the
planner goes below the op-by-op bound on the corpus CNNs."""

from __future__ import annotations

import itertools
import json
import re

import numpy as np
import pytest
import test_ops_conv as conv_cases
import test_ops_elementwise as unary_cases
import test_ops_pooling as pool_cases
from click.testing import CliRunner
from conftest import need_corpus, need_tool
from op_oracle import run_tflm

from tflm_gen import project, qemu
from tflm_gen.cli import main
from tflm_gen.compress import compress_model
from tflm_gen.host import HostInterpreter
from tflm_gen.layout import embed_layout
from tflm_gen.model import ir
from tflm_gen.model.builder import ModelBuilder
from tflm_gen.model.reader import read_model
from tflm_gen.model.writer import write_model
from tflm_gen.plan import Plan, embed_plan, make_plan
from tflm_gen.prune import prune_weights

KINDS = {"conv": ("CONV_2D",), "depthwise": ("DEPTHWISE_CONV_2D",),
         "pool": ("AVERAGE_POOL_2D", "MAX_POOL_2D")}
CASES = [(dtype, kind) for dtype in ("int8", "int16", "float32") for kind in KINDS]


def add_op(b: ModelBuilder, rng: np.random.Generator, dtype: str, opcode: str) -> np.ndarray:
    """One random op reading its own model input; returns that input's data."""
    if opcode in pool_cases.OPS:
        return pool_cases.add_pool(b, opcode, dtype, pool_cases.random_case(rng), rng)
    return conv_cases.add_case(b, rng, dtype, opcode == "DEPTHWISE_CONV_2D")[0]


def conv_model(seed: int, dtype: str, opcodes: tuple[str, ...]):
    """Independent random ops, one per step."""
    rng = np.random.default_rng(5000 + seed)
    b = ModelBuilder()
    inputs = [add_op(b, rng, dtype, opcode) for opcode in opcodes]
    return b.build(), inputs


def codable_depthwise_model(seed: int, count: int):
    """`count` random int8 DEPTHWISE_CONV_2D ops that --compress codes once pruned: channel
    multiplier 1 (others stay plain: compress.choose) and filters of 48 bytes or more."""
    rng = np.random.default_rng(5000 + seed)
    b, inputs = ModelBuilder(), []
    while len(inputs) < count:
        g = conv_cases.random_geometry(rng, True)
        if g["multiplier"] == 1 and g["cin"] * g["kh"] * g["kw"] >= 48:
            inputs.append(conv_cases.add_case(b, rng, "int8", True, g)[0])
    return b.build(), inputs


def tight_plan(model_bytes: bytes, slack: int, backward: bool = False,
               unit: int = 1) -> tuple[Plan, int]:
    """The planner's buffers, each overlapping pair at `clearance - slack` bytes (slack 0:
    as deep as the planner would ever place them), every other buffer on its own; and how
    many pairs overlap.  `backward`: the pairs a backward walk allows (depthwise), each
    output starting `start - slack` bytes (at least 8, rounded up to a multiple of `unit`)
    above its input's start."""
    plan = make_plan(read_model(model_bytes))
    top, pairs = 0, set()
    for index, buffer in enumerate(plan.buffers):
        for other, clearance in (buffer.above if backward else buffer.clearance).items():
            low, high = (plan.buffers[other], buffer) if backward else (buffer, plan.buffers[other])
            gap = -(-max(8, clearance - slack) // unit) * unit if backward else \
                max(0, clearance - slack)
            low.offset, high.offset = top, top + gap
            top += max(low.size, gap + high.size)
            pairs |= {index, other}
    for index, buffer in enumerate(plan.buffers):
        if index not in pairs:
            buffer.offset, top = top, top + buffer.size
    return plan, len(pairs) // 2


def outputs_with_plan(model_bytes: bytes, plan: Plan, inputs, tags) -> list[np.ndarray]:
    device = write_model(embed_plan(read_model(model_bytes), plan))
    return [np.asarray(o) for o in HostInterpreter(device, tags).run(inputs)]


def same_bits(ours, expected) -> list[bool]:
    return [np.asarray(a).tobytes() == np.asarray(b).tobytes()
            for a, b in zip(ours, expected, strict=True)]


@pytest.mark.parametrize("tags", [(), ("cmsis",)], ids=["reference", "cmsis"])
@pytest.mark.parametrize("dtype,kind", CASES)
def test_deepest_overlap_is_bit_exact(dtype, kind, tags):
    model, inputs = conv_model(CASES.index((dtype, kind)), dtype, KINDS[kind] * 10)
    expected = run_tflm(model, inputs)
    plan, pairs = tight_plan(model, slack=0)
    assert pairs >= 2  # ops with one batch that are not the last overlap
    assert all(same_bits(outputs_with_plan(model, plan, inputs, tags), expected))


# QUANTIZE / DEQUANTIZE pairs: wider, narrower and same-width outputs (float <-> int16
# is left out by the planner: compilers may reorder such loads and stores).
CONVERSIONS = [("float32", "int8"), ("int8", "float32"), ("int8", "int16"), ("int16", "int8"),
               ("int32", "int8"), ("int16", "int16"), ("int8", "int8")]


def conversion_model():
    rng = np.random.default_rng(5100)
    b, inputs = ModelBuilder(), []
    for in_dtype, out_dtype in CONVERSIONS * 2:
        shape = [1, int(rng.integers(2, 9)), int(rng.integers(2, 9)), int(rng.integers(1, 5))]
        op = "DEQUANTIZE" if out_dtype == "float32" else "QUANTIZE"
        in_quant = {} if in_dtype == "float32" else unary_cases.random_quant(rng, in_dtype)
        out_quant = {} if out_dtype == "float32" else unary_cases.random_quant(rng, out_dtype)
        limit = 2**20 if in_dtype == "int32" else None
        data = unary_cases.random_values(rng, in_dtype, shape, limit)
        inputs.append(unary_cases.add_unary(b, op, data, in_quant, out_dtype, out_quant))
    return b.build(), inputs


def test_deepest_conversion_overlap_is_bit_exact():
    model, inputs = conversion_model()
    plan, pairs = tight_plan(model, slack=0)
    assert pairs >= len(CONVERSIONS)
    assert all(same_bits(outputs_with_plan(model, plan, inputs, ()), run_tflm(model, inputs)))


@pytest.mark.parametrize("tags", [(), ("cmsis",)], ids=["reference", "cmsis"])
@pytest.mark.parametrize("kind,backward", [("conv", False), ("depthwise", False),
                                           ("depthwise", True)])
def test_deepest_overlap_of_coded_filters_is_bit_exact(kind, backward, tags):
    """Filters pruned and compressed into one block (tflm_gen.compress) are decoded before
    the uncoded pixel walk, so the planner keeps their overlaps."""
    if kind == "depthwise":
        model, inputs = codable_depthwise_model(31, 10)
    else:
        model, inputs = conv_model(30, "int8", KINDS[kind] * 10)
    pruned = prune_weights(model, 0.8).model
    coded = write_model(compress_model(read_model(pruned)))
    assert len(ir.compressed_tensors(read_model(coded))) >= 5
    plan, pairs = tight_plan(coded, slack=0, backward=backward)
    assert pairs >= 2
    assert all(same_bits(outputs_with_plan(coded, plan, inputs, tags), run_tflm(pruned, inputs)))


@pytest.mark.parametrize("tags", [(), ("cmsis",)], ids=["reference", "cmsis"])
def test_output_fully_over_its_input_is_caught(tags):
    """The check above can fail: outputs placed exactly over their inputs give wrong values."""
    model, inputs = conv_model(99, "int8", sum(KINDS.values(), ()) * 5)
    whole, pairs = tight_plan(model, slack=1 << 30)
    assert pairs >= 6
    ours = outputs_with_plan(model, whole, inputs, tags)
    assert not all(same_bits(ours, run_tflm(model, inputs)))


@pytest.mark.parametrize("tags", [(), ("cmsis",)], ids=["reference", "cmsis"])
@pytest.mark.parametrize("dtype", ["int8", "int16", "float32"])
def test_deepest_backward_overlap_is_bit_exact(dtype, tags):
    """Depthwise outputs started as far into their inputs as a backward walk allows."""
    model, inputs = conv_model(20 + CASES.index((dtype, "depthwise")), dtype,
                               KINDS["depthwise"] * 10)
    plan, pairs = tight_plan(model, slack=0, backward=True)
    assert pairs >= 2
    assert all(same_bits(outputs_with_plan(model, plan, inputs, tags), run_tflm(model, inputs)))


@pytest.mark.parametrize("tags", [(), ("cmsis",)], ids=["reference", "cmsis"])
def test_output_just_above_its_input_is_caught(tags):
    """Started 8 bytes above its input (almost wholly over it), a depthwise output is
    wrong even walked backwards: the check above can fail."""
    model, inputs = conv_model(98, "int8", KINDS["depthwise"] * 10)
    plan, pairs = tight_plan(model, slack=1 << 30, backward=True)
    assert pairs >= 2
    assert not all(same_bits(outputs_with_plan(model, plan, inputs, tags),
                             run_tflm(model, inputs)))


@pytest.mark.parametrize("backward", [False, True], ids=["forward", "backward"])
@pytest.mark.parametrize("target", ["qemu-cortex-m4", "qemu-cortex-m55"])
def test_deepest_overlap_is_bit_exact_on_board(target, backward, monkeypatch):
    """The DSP (2 pixels a pass) and MVE (4) convolution loops of the cmsis tag, and its
    depthwise loops walked backwards."""
    board = qemu.board_of(target)
    need_tool(board["toolchain"] + "gcc")
    need_tool(board["qemu"])
    need_tool("make")
    model, inputs = conv_model(99, "int8", sum(KINDS.values(), ()) * 5)
    plan, pairs = tight_plan(model, slack=0, backward=backward)
    assert pairs >= (2 if backward else 6)
    # The cmsis kernels read the offline layout: the tightest plan with it.
    device = write_model(embed_plan(embed_layout(read_model(model)), plan))
    for module in (project, qemu):  # the project embeds this plan instead of its own
        monkeypatch.setattr(module, "supported_device_model", lambda *_, **__: (device, plan))
    result = qemu.run_on_target(model, target, inputs, ("cmsis",))
    assert result.matches_host, result.stdout
    assert all(same_bits(result.outputs, run_tflm(model, inputs)))


@pytest.mark.parametrize("name", ["vww_96_int8", "person_detect", "kws_ref_model",
                                  "pretrainedResnet_quant"])
def test_head_below_op_by_op_bound(name):
    model = read_model((need_corpus() / f"{name}.tflite").read_bytes())
    plan = make_plan(model)
    assert plan.head_bytes < plan.lower_bound_bytes
    assert make_plan(model).tensor_offsets(999) == plan.tensor_offsets(999)  # deterministic


@pytest.mark.parametrize("name", ["vww_96_int8", "person_detect"])
def test_backward_overlap_only_where_the_head_needs_it(name):
    """An output placed inside its input's buffer (its kernel then writes it backwards, on a
    slower path: vww op 25) stays there only when no offset without that overlap keeps the
    head; the balanced plans of both keep some (their peaks need them)."""
    from tflm_gen.optimize import device_model
    from tflm_gen.plan import _first_fit

    plan = device_model((need_corpus() / f"{name}.tflite").read_bytes(), ("cmsis",))[1]
    kept = 0
    for index, buffer in enumerate(plan.buffers):
        sources = [plan.buffers[other] for other in buffer.above]
        if any(s.offset < buffer.offset < s.offset + s.size for s in sources):
            kept += 1
            above, buffer.above = buffer.above, {}
            others = [i for i in range(len(plan.buffers)) if i != index]
            assert _first_fit(plan.buffers, others, index) + buffer.size > plan.head_bytes
            buffer.above = above
    assert kept > 0


@pytest.mark.parametrize("name", ["vww_96_int8", "kws_ref_model"])  # kws: backward too
def test_inspect_memory_shows_every_overlap(tmp_path, name):
    """Buffers live at the same step share bytes only where the report lists the overlap,
    in the JSON, the text table and the picture's tooltips."""
    path = need_corpus() / f"{name}.tflite"
    svg = tmp_path / "plan.svg"
    result = CliRunner().invoke(main, ["inspect", "--memory", "--json", "--svg", str(svg),
                                       str(path)])
    assert result.exit_code == 0, result.output
    plan = json.loads(result.stdout)["plan"]
    def listed_by(output, source, low, high):
        shared = min(low["offset"] + low["bytes"], high["offset"] + high["bytes"]) - high["offset"]
        return any(o["input"] == source["tensors"][0] and o["offset"] == high["offset"]
                   and o["bytes"] == shared for o in output["overlaps"])

    listed = 0
    for low, high in itertools.combinations(sorted(plan, key=lambda b: b["offset"]), 2):
        same_time = low["first_op"] <= high["last_op"] and high["first_op"] <= low["last_op"]
        if same_time and low["offset"] + low["bytes"] > high["offset"]:
            # Written forwards (the output lower) or backwards (the output higher).
            assert listed_by(low, high, low, high) or listed_by(high, low, low, high)
            listed += 1
    assert listed == sum(len(b["overlaps"]) for b in plan) >= 5
    text = CliRunner().invoke(main, ["inspect", "--memory", str(path)]).output
    first = next(b for b in plan if b["overlaps"])["overlaps"][0]
    assert re.search(rf"{first['bytes']:,} over {first['offset']:,} ", text)
    assert f"bytes over the consumed input at {first['offset']:,}" in svg.read_text()
