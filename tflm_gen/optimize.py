"""The model a device runs: the user's model plus what the generator computed for it
(per-channel requantisation in flash, offline weight layouts, an offline memory plan).  All
are standard TFLite metadata; the plan is one TFLM's kernels run too only when asked for
(`for_tflm`): ours may also start a depthwise output inside its input, walked backwards."""

from __future__ import annotations

from tflm_gen.compress import compress_model
from tflm_gen.layout import embed_layout
from tflm_gen.model.reader import read_model
from tflm_gen.model.writer import write_model
from tflm_gen.plan import Plan, embed_plan, make_plan
from tflm_gen.requant import embed_requant


def device_model(model_bytes: bytes, tags: tuple[str, ...] = (),
                 compress: bool = False, for_tflm: bool = False) -> tuple[bytes, Plan]:
    """The model with requantisation, an offline plan and, for the kernels that read them
    (the cmsis tag), offline weight layouts embedded; and the plan.  Other kernels never
    read a layout, so their projects do not pay its flash (vww: +399 KB).  `compress` codes
    the filters first (compress.py), so that no layout record copies a coded filter."""
    model = read_model(model_bytes)
    if compress:  # before the plan: a compressed op's output cannot overlap its input
        model = compress_model(model)
    plan = make_plan(model, backward=not for_tflm)
    if "cmsis" in tags:
        model = embed_layout(model)
    return write_model(embed_plan(embed_requant(model), plan)), plan
