"""`inspect --memory`: the arena a model needs on a device and the plan of its head:
tensor buffers and kernel scratch with their offsets and lifetimes (the picture of it is
`tflm_gen.charts.memory_plan_svg`)."""

from __future__ import annotations

from tflm_gen.host import HostInterpreter
from tflm_gen.model import ir
from tflm_gen.model.lifetimes import model_lifetimes
from tflm_gen.model.reader import read_model
from tflm_gen.optimize import device_model, supported_device_model
from tflm_gen.patches import DEFAULT_MEMORY, model_macs, read_stage


def memory_report(model_bytes: bytes, tags: tuple[str, ...] = (), patches: bool = False,
                  memory: str = DEFAULT_MEMORY, compress: bool = False) -> dict:
    """Arena sizes by section and category, and the offline plan of every head buffer;
    with `patches`, the stages `--memory small|balanced` would run (`patch_rows`).

    The numbers are the same on every target: the runtime keeps no pointer-sized fields in
    the arena, so `arena_bytes` from this host run is what a 32- or 8-bit device uses.
    """
    planned, plan = supported_device_model(model_bytes, tags, memory, compress)
    interpreter = HostInterpreter(planned, tags, audit_scratch=True)
    stats = interpreter.memory_stats()
    model = read_model(planned)  # operators in the order they run (tflm_gen.schedule)
    names = _tensor_names(model)
    buffers = [
        {"tensors": [names[t] for t in b.tensors],
         "tensor_indices": b.tensors, "bytes": b.size, "offset": b.offset,
         "first_op": b.first, "last_op": b.last,
         "overlaps": _overlaps(plan.buffers, b, names)}
        for b in sorted(plan.buffers, key=lambda b: (b.offset, b.first))
    ]
    op_spans = model_lifetimes(model)[1]
    stage = read_stage(model)
    for row in buffers:
        row["tile"] = stage is not None and any(t in stage.tiles() for t in row["tensor_indices"])
    return {**stats, "lower_bound_bytes": plan.lower_bound_bytes, "plan": buffers,
            "scratch": _scratch_rows(model, op_spans, interpreter.scratch_buffers()),
            "steps": max((last for _, last in op_spans.values()), default=-1) + 1,
            "stage": stage_row(stage, names, model_macs(model)) if stage else None,
            "patches": patch_rows(model_bytes, tags) if patches else []}


def stage_row(stage, names: list[str], model_total: int) -> dict:
    """A patch stage as inspect --memory and the SVG show it: its operators, how it ends
    (a chain, a residual join, a reduction), bands, tile buffers, the MACs its halos
    recompute."""
    return {"first_op": stage.first, "last_op": stage.last, "band_rows": stage.band_rows,
            "bands": len(stage.bands), "ending": stage.ending,
            "tiles": [{"tensor": names[t], "bytes": size} for t, size in stage.tile_bytes],
            "buffers": sorted(stage.buffer_bytes().values()),
            "extra_macs": stage.macs - stage.plain_macs, "model_macs": model_total}


def patch_rows(model_bytes: bytes, tags: tuple[str, ...]) -> list[dict]:
    """What `project --memory small` and `balanced` would run as a patch stage
    (tflm_gen.patches): its operators, bands, tile buffers, the arena measured on the host
    with it and without a stage (`fast`), and the MACs the halos recompute; none when no
    stage lowers the arena."""
    model, rows = read_model(model_bytes), []
    plain = device_model(model_bytes, tags, "fast")[0]
    arena_without = HostInterpreter(plain, tags).arena_used_bytes
    names, total = _tensor_names(model), model_macs(model)
    for memory in ("balanced", "small"):
        device, _ = device_model(model_bytes, tags, memory)
        stage = read_stage(read_model(device))
        if stage is None:
            continue
        rows.append({"memory": memory, **stage_row(stage, names, total),
                     "arena_without": arena_without,
                     "arena_bytes": HostInterpreter(device, tags).arena_used_bytes})
    return rows


def _overlaps(buffers: list, buffer, names: list[str]) -> list[dict]:
    """The partial overlaps the plan uses: this buffer (an operator's output) runs up into
    the consumed start of its input's buffer, or (written backwards) down into its consumed
    end (tflm_gen.overlap).  `offset` is where the shared bytes start."""
    rows = []
    for other in sorted({*buffer.clearance, *buffer.above}):
        source = buffers[other]
        low, high = sorted((buffer, source), key=lambda b: b.offset)
        shared = min(low.offset + low.size, high.offset + high.size) - high.offset
        if shared > 0:
            rows.append({"input": names[source.tensors[0]], "offset": high.offset,
                         "bytes": shared,
                         "walk": "forward" if buffer.offset <= source.offset else "backward"})
    return rows


def _scratch_rows(model: ir.Model, op_spans: dict, found: list[tuple[int, int, int]]) -> list:
    """Scratch buffers with the operator that asked for them and the steps it spans (a
    control-flow node's span covers its callees, as in the runtime's planner)."""
    operators = [(s, position, op) for s, graph in enumerate(model.subgraphs)
                 for position, op in enumerate(graph.operators)]
    rows = []
    for size, node, offset in found:
        s, position, op = operators[node]
        first, last = op_spans[(s, position)]
        rows.append({"op": op.custom_code if op.opcode == "CUSTOM" else op.opcode,
                     "node": node, "bytes": size, "offset": offset, "first_op": first,
                     "last_op": last})
    return rows


def _tensor_names(model) -> list[str]:
    """Names by global tensor index; tensors of subgraph s > 0 are prefixed `s:`."""
    return [(f"{s}:" if s else "") + (tensor.name or f"tensor {t}")
            for s, graph in enumerate(model.subgraphs) for t, tensor in enumerate(graph.tensors)]
