"""The model a device runs: the user's model plus what the generator computed for it
(per-channel requantisation in flash, offline weight layouts, an offline memory plan).  All
are standard TFLite metadata; the plan is one TFLM's kernels run too only when asked for
(`for_tflm`): ours may also start a depthwise output inside its input, walked backwards."""

from __future__ import annotations

from tflm_gen.arena import NotModelled, arena_bytes
from tflm_gen.compress import BALANCED, compress_model
from tflm_gen.instructions import kernels_of
from tflm_gen.layout import embed_layout
from tflm_gen.layout_cores import keeps, record_form
from tflm_gen.model import ir
from tflm_gen.model.reader import read_model
from tflm_gen.model.writer import write_model
from tflm_gen.patches import DEFAULT_MEMORY, choose_stage, embed_stage, stage_data_bytes
from tflm_gen.plan import Plan, embed_plan, make_plan
from tflm_gen.requant import embed_requant
from tflm_gen.schedule import memory_order
from tflm_gen.support import check_supported


def device_model(model_bytes: bytes, tags: tuple[str, ...] = (),
                 memory: str = DEFAULT_MEMORY, compress: bool | str = False,
                 for_tflm: bool = False, stage_of=None,
                 core: str | None = None) -> tuple[bytes, Plan]:
    """The model with requantisation, an offline plan and, for the kernels that read them
    (the cmsis tag), offline weight layouts embedded; and the plan.  Other kernels never
    read a layout, so their projects do not pay its flash (vww: +399 KB).  `memory`
    (small, balanced, fast) may add a patch stage (tflm_gen.patches), or `stage_of(model)`
    gives the stage to run; but for `fast` or a given stage, the operators run in a
    memory-aware order (tflm_gen.schedule).  `compress` (True or a goal) codes the filters first
    (compress.py), so that no layout record copies a coded filter and the plan knows the
    ops that decode in blocks.  `core` (the -mcpu of the project's board,
    tflm_gen.layout_cores) keeps only the layouts its build reads; None (host runs,
    generic targets) keeps them all."""
    model = read_model(model_bytes)
    if memory != "fast" and stage_of is None:  # stage_of names operators in the given order
        model = memory_order(model)  # same outputs; lets a shortcut's input die earlier
    if compress:  # True: the balanced goal; or a goal's name (compress.GOALS)
        model = compress_model(model, compress if isinstance(compress, str) else BALANCED)
    if "cmsis" in tags:
        model = embed_layout(model, keeps(core), record_form(core))
    model = embed_requant(model)
    stage = stage_of(model) if stage_of else choose_stage(
        model, memory, lambda stage: _arena_with(model, stage, tags, not for_tflm),
        kernels_of(tags)).stage
    plan = make_plan(model, backward=not for_tflm, stage=stage)
    return write_model(embed_stage(embed_plan(model, plan), stage)), plan


def supported_device_model(model_bytes: bytes, *args, **kwargs) -> tuple[bytes, Plan]:
    """device_model (same arguments) after check_supported on the user's model: the step
    every command that runs or generates a model takes, so that a refusal comes before any
    planning and numbers the user's operators (memory_order may run them in another
    order)."""
    check_supported(read_model(model_bytes))
    return device_model(model_bytes, *args, **kwargs)


def _arena_with(model: ir.Model, stage, tags: tuple[str, ...], backward: bool) -> int:
    """The arena of the device model with this stage (or none), or its planned head when
    the Python arena model does not know a kernel."""
    plan = make_plan(model, backward=backward, stage=stage)
    try:
        return arena_bytes(embed_stage(embed_plan(model, plan), stage), tags)
    except NotModelled:
        return plan.head_bytes + stage_data_bytes(stage)
