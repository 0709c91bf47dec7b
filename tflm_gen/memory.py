"""`inspect --memory`: the arena a model needs on a device, the plan of its head, and a
picture of the plan (buffers as rectangles: operator steps across, addresses up)."""

from __future__ import annotations

import html

from tflm_gen.host import HostInterpreter
from tflm_gen.model.reader import read_model
from tflm_gen.optimize import device_model
from tflm_gen.table import format_table
from tflm_gen.text import printable


def memory_report(model_bytes: bytes, tags: tuple[str, ...] = ()) -> dict:
    """Arena sizes by section and category, and the offline plan of every head buffer.

    The numbers are the same on every target: the runtime keeps no pointer-sized fields in
    the arena, so `arena_bytes` from this host run is what a 32- or 8-bit device uses.
    """
    planned, plan = device_model(model_bytes)
    stats = HostInterpreter(planned, tags).memory_stats()
    names = _tensor_names(read_model(model_bytes))
    buffers = [
        {"tensors": [names[t] for t in b.tensors],
         "tensor_indices": b.tensors, "bytes": b.size, "offset": b.offset,
         "first_op": b.first, "last_op": b.last}
        for b in sorted(plan.buffers, key=lambda b: (b.offset, b.first))
    ]
    return {**stats, "lower_bound_bytes": plan.lower_bound_bytes, "plan": buffers}


def _tensor_names(model) -> list[str]:
    """Names by global tensor index; tensors of subgraph s > 0 are prefixed `s:`."""
    return [(f"{s}:" if s else "") + (tensor.name or f"tensor {t}")
            for s, graph in enumerate(model.subgraphs) for t, tensor in enumerate(graph.tensors)]


def format_memory(report: dict) -> str:
    where = report.get("target", "host")
    tags = ",".join(report.get("tags", [])) or "none"
    lines = [
        (f"arena: {report['arena_bytes']:,} bytes on {where}, tags {tags} (the exact size a "
         "project declares)"),
        (f"  head {report['head_bytes']:,} bytes (activation lower bound "
         f"{report['lower_bound_bytes']:,}, kernel scratch {report['scratch_bytes']:,})"),
        (f"  tail {report['tail_bytes']:,} bytes: runtime state {report['runtime_bytes']:,}, "
         f"kernel data {report['kernel_bytes']:,}, variable tensors "
         f"{report['variable_bytes']:,}"),
        (f"  bottom at peak: {report['arena_bytes'] - report['tail_bytes']:,} bytes "
         "(the head, or init temporaries where larger)"),
        "",
    ]
    rows = []
    for buffer in report["plan"]:
        names = printable(", ".join(buffer["tensors"]))
        names = names if len(names) <= 70 else names[:67] + "..."
        rows.append([buffer["offset"], buffer["bytes"],
                     f"{buffer['first_op']}-{buffer['last_op']}", names])
    lines.append(format_table(["offset", "bytes", "ops", "tensors"], rows))
    return "\n".join(lines)


def plan_svg(report: dict, width: int = 720, height: int = 420) -> str:
    """An SVG picture of the head plan: x = operator step, y = address (0 at the bottom)."""
    steps = max((b["last_op"] for b in report["plan"]), default=0) + 1
    head = max(report["head_bytes"], 1)
    margin, plot_w, plot_h = 50, width - 70, height - 70
    parts = [(f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
              f'font-family="sans-serif" font-size="11">'),
             f'<rect width="{width}" height="{height}" fill="white"/>',
             (f'<text x="{margin}" y="16">head plan: {report["head_bytes"]} bytes '
              f'(lower bound {report["lower_bound_bytes"]}), {steps} operators</text>')]
    for index, buffer in enumerate(report["plan"]):
        x = margin + plot_w * buffer["first_op"] / steps
        w = plot_w * (buffer["last_op"] - buffer["first_op"] + 1) / steps
        h = plot_h * buffer["bytes"] / head
        y = 30 + plot_h - plot_h * buffer["offset"] / head - h
        hue = (index * 47) % 360
        title = html.escape(f"{', '.join(buffer['tensors'])}: {buffer['bytes']} bytes at "
                            f"{buffer['offset']}, ops {buffer['first_op']}-{buffer['last_op']}")
        parts.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" '
                     f'fill="hsl({hue},60%,70%)" stroke="black" stroke-width="0.5">'
                     f'<title>{title}</title></rect>')
    parts.append(f'<text x="{margin}" y="{height - 12}">operator step →</text>')
    parts.append(f'<text x="4" y="{30 + plot_h / 2:.0f}">address ↑</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"
