"""Charts of `tflm-gen report` and `inspect --memory --svg`, drawn with matplotlib's SVG
backend (object API only: no pyplot, no global backend switch).

The SVG is deterministic: a fixed hash salt per chart (ids stay distinct when several
charts share one HTML page), no date in the metadata, and text kept as `<text>` in
matplotlib's bundled DejaVu Sans (browsers fall back to their sans-serif)."""

from __future__ import annotations

import html
import io

from tflm_gen.text import printable

# Tensor buffers take these in turn: 20 distinguishable colours (matplotlib's tab20).
BUFFER_COLOURS = [
    "#1f77b4", "#aec7e8", "#ff7f0e", "#ffbb78", "#2ca02c", "#98df8a", "#d62728", "#ff9896",
    "#9467bd", "#c5b0d5", "#8c564b", "#c49c94", "#e377c2", "#f7b6d2", "#7f7f7f", "#c7c7c7",
    "#bcbd22", "#dbdb8d", "#17becf", "#9edae5",
]
SCRATCH_COLOUR = "#fff2a8"
STAGE_COLOUR = "#e6e6e6"  # the steps of a patch stage, behind its buffers
TILE_HATCH = "..."  # a stage's tile buffers (a band's rows of the tensors inside it)
TAIL_PARTS = (("runtime_bytes", "tail: runtime state", "#4d4d4d"),
              ("kernel_bytes", "tail: kernel data", "#878787"),
              ("variable_bytes", "tail: variable tensors", "#bababa"))
# Bar series: colours none of the above uses, so each chart can be found in a screenshot.
SERIES_COLOURS = ["#2b5c8a", "#e8702a", "#4c9a2a", "#b8336a"]
FONT_POINTS = 8
DPI = 100


def _figure(width: float, height: float):
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), dpi=DPI)


def figure_svg(figure, salt: str) -> str:
    """The figure as an SVG element (no XML prolog), byte-identical for identical input."""
    import matplotlib

    settings = {"svg.hashsalt": f"tflm-gen-{salt}", "svg.fonttype": "none"}
    with matplotlib.rc_context(settings):
        buffer = io.StringIO()
        figure.savefig(buffer, format="svg", metadata={"Date": None})
    text = buffer.getvalue()
    return text[text.index("<svg"):]


def thousands(value, _position=None) -> str:
    return f"{int(value):,}"


def memory_plan_svg(report: dict) -> str:
    """The arena over time: operator step across, arena offset up.  Head buffers are
    rectangles over their lifetime (labelled where the name fits, numbered otherwise, as
    in the table of the report), scratch is hatched, the tail spans every step on top."""
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    with _chart_settings():
        figure = _figure(10, 5.6)
        axes = figure.add_axes((0.08, 0.2, 0.9, 0.74))
        steps, arena = max(report["steps"], 1), max(report["arena_bytes"], 1)
        axes.set_xlim(-0.5, steps - 0.5)  # step i is drawn over [i - 0.5, i + 0.5)
        axes.set_ylim(0, arena)
        scale = (axes.bbox.width / steps, axes.bbox.height / arena)  # pixels per step, byte
        if report.get("stage"):
            _stage(axes, report["stage"], arena)
        for number, buffer in enumerate(report["plan"]):
            colour = BUFFER_COLOURS[number % len(BUFFER_COLOURS)]
            _block(axes, buffer, colour, _label(buffer["tensors"][0], number), scale,
                   f"buffer-{number}", TILE_HATCH if buffer.get("tile") else None)
        for number, scratch in enumerate(report["scratch"]):
            _block(axes, scratch, SCRATCH_COLOUR, f"scratch {printable(scratch['op'])}", scale,
                   f"scratch-{number}", "///")
        _tail(axes, report, steps, scale)
        _head_line(axes, report)
        axes.set_xlabel("operator step")
        axes.set_ylabel("arena offset (bytes)")
        axes.xaxis.set_major_locator(MaxNLocator(integer=True))
        axes.yaxis.set_major_formatter(FuncFormatter(thousands))
        axes.set_title(f"arena {report['arena_bytes']:,} bytes: head {report['head_bytes']:,} "
                       f"(op-by-op bound {report['lower_bound_bytes']:,}), "
                       f"tail {report['tail_bytes']:,}", fontsize=FONT_POINTS + 1)
        axes.legend(handles=_legend_handles(report), loc="upper center",
                    bbox_to_anchor=(0.5, -0.09), ncol=3, frameon=False)
        return _with_tooltips(figure_svg(figure, "memory"), report)


def _with_tooltips(svg: str, report: dict) -> str:
    """A `<title>` (the browser's tooltip) in every buffer's group: names, size, place."""
    rows = [(f"buffer-{n}", f"#{n} " + ", ".join(b["tensors"]), b)
            for n, b in enumerate(report["plan"])]
    rows += [(f"scratch-{n}", f"scratch of operator {s['node']} {s['op']}", s)
             for n, s in enumerate(report["scratch"])]
    for gid, name, buffer in rows:
        tip = (f"{printable(name)}: {buffer['bytes']:,} bytes at offset {buffer['offset']:,}, "
               f"steps {buffer['first_op']}-{buffer['last_op']}")
        tip += "".join(f"; its {'last' if o['walk'] == 'forward' else 'first'} {o['bytes']:,} "
                       f"bytes over the consumed input at {o['offset']:,}"
                       for o in buffer.get("overlaps", []))
        svg = svg.replace(f'<g id="{gid}">', f'<g id="{gid}"><title>{html.escape(tip)}</title>', 1)
    return svg


def _chart_settings():
    import matplotlib

    return matplotlib.rc_context({"font.family": "DejaVu Sans", "font.size": FONT_POINTS,
                                  "hatch.linewidth": 0.5})


def _label(name: str, number: int) -> str:
    """`#n` and the end of the tensor's name (converters join fused names with `;`)."""
    short = printable("/".join(name.split(";", 1)[0].split("/")[-2:]))
    return f"#{number} {short if len(short) <= 28 else short[:25] + '...'}"


def _block(axes, buffer: dict, colour: str, label: str, scale, gid: str, hatch=None) -> None:
    """One buffer: a rectangle from its first to its last step, labelled where it fits."""
    from matplotlib.patches import Rectangle

    x, width = buffer["first_op"] - 0.5, buffer["last_op"] - buffer["first_op"] + 1
    axes.add_patch(Rectangle((x, buffer["offset"]), width, buffer["bytes"], facecolor=colour,
                             edgecolor="black", linewidth=0.4, hatch=hatch, gid=gid))
    _fit_text(axes, x + width / 2, buffer["offset"] + buffer["bytes"] / 2, label,
              width * scale[0], buffer["bytes"] * scale[1])


def _fit_text(axes, x: float, y: float, label: str, width_px: float, height_px: float) -> None:
    """The label on one line or two, or only its `#n` part, centred in the box if it fits."""
    points_px = (FONT_POINTS - 1) * DPI / 72
    character_px, line_px = points_px * 0.6, points_px * 1.4
    for text in (label, label.replace(" ", "\n", 1), label.split(" ", 1)[0]):
        lines = text.split("\n")
        if (max(map(len, lines)) * character_px <= width_px
                and len(lines) * line_px <= height_px):
            axes.text(x, y, text, ha="center", va="center", fontsize=FONT_POINTS - 1,
                      clip_on=True, linespacing=1.1, parse_math=False)
            return


def _tail(axes, report: dict, steps: int, scale) -> None:
    """The tail, split by category (the order inside the tail is not drawn to scale)."""
    from matplotlib.patches import Rectangle

    offset = report["arena_bytes"] - report["tail_bytes"]
    for key, label, colour in TAIL_PARTS:
        size = report[key]
        if size <= 0:
            continue
        axes.add_patch(Rectangle((-0.5, offset), steps, size, facecolor=colour,
                                 edgecolor="black", linewidth=0.4))
        _fit_text(axes, steps / 2 - 0.5, offset + size / 2, f"{label} {size:,} B",
                  steps * scale[0], size * scale[1])
        offset += size


def _stage(axes, stage: dict, arena: int) -> None:
    """A patch stage: its steps shaded (one step to the planner), split in its bands, the
    order they run in, and named on top."""
    left, right = stage["first_op"] - 0.5, stage["last_op"] + 0.5
    axes.axvspan(left, right, facecolor=STAGE_COLOUR, edgecolor="none", gid="stage")
    axes.axvspan(left, right, facecolor="none", edgecolor="black", linestyle="--",
                 linewidth=0.8, zorder=3)  # framed over the buffers it holds
    width = (right - left) / stage["bands"]
    for band in range(1, stage["bands"]):
        axes.axvline(left + band * width, color="black", linestyle=":", linewidth=0.5, zorder=3)
    ending = "" if stage["ending"] == "chain" else f", {stage['ending']}"
    axes.text((left + right) / 2, arena, f"stage: {stage['bands']} bands{ending}", ha="center",
              va="bottom", fontsize=FONT_POINTS - 1, parse_math=False)


def _head_line(axes, report: dict) -> None:
    axes.axhline(report["head_bytes"], color="black", linestyle="--", linewidth=0.8)


def _legend_handles(report: dict) -> list:
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    handles = [Patch(facecolor=BUFFER_COLOURS[0], edgecolor="black",
                     label=f"head: tensor buffers ({len(report['plan'])})"),
               Patch(facecolor=SCRATCH_COLOUR, edgecolor="black", hatch="///",
                     label=f"head: kernel scratch ({len(report['scratch'])})")]
    if report.get("stage"):
        stage = report["stage"]
        handles += [Patch(facecolor=STAGE_COLOUR, edgecolor="black", linestyle="--",
                          label=f"patch stage: operators {stage['first_op']}-{stage['last_op']}, "
                                f"{stage['bands']} bands"),
                    Patch(facecolor="white", edgecolor="black", hatch=TILE_HATCH,
                          label=f"head: stage tile buffers ({len(stage['buffers'])})")]
    handles += [Patch(facecolor=colour, edgecolor="black", label=label)
                for key, label, colour in TAIL_PARTS if report[key] > 0]
    handles.append(Line2D([], [], color="black", linestyle="--", linewidth=0.8,
                          label=f"top of the head ({report['head_bytes']:,} B)"))
    return handles


def bar_chart_svg(title: str, labels: list[str], series: dict[str, list[int]], unit: str,
                  salt: str) -> str:
    """Horizontal bars, one group per label and one bar per series in a group, each bar
    with its value written beside it."""
    from matplotlib.ticker import FuncFormatter

    with _chart_settings():
        rows = max(len(labels), 1)
        figure = _figure(10, min(1.2 + 0.22 * rows * max(len(series), 1), 14))
        axes = figure.add_axes((0.24, 0.4 / figure.get_figheight() * 1.4, 0.62,
                                1 - 1.0 / figure.get_figheight()))
        height = 0.8 / max(len(series), 1)
        top = max((max(values, default=0) for values in series.values()), default=0)
        for number, (name, values) in enumerate(series.items()):
            positions = [row + number * height for row in range(len(labels))]
            colour = SERIES_COLOURS[number % len(SERIES_COLOURS)]
            axes.barh(positions, values, height=height, color=colour, label=name)
            for position, value in zip(positions, values):
                axes.text(value + top * 0.01, position, f"{value:,}", va="center",
                          fontsize=FONT_POINTS - 1)
        axes.set_yticks([row + height * (len(series) - 1) / 2 for row in range(len(labels))],
                        [printable(label) for label in labels], parse_math=False)
        axes.invert_yaxis()  # the first label on top
        axes.set_xlim(0, max(top, 1) * 1.15)
        axes.xaxis.set_major_formatter(FuncFormatter(thousands))
        axes.set_xlabel(unit)
        axes.set_title(title, fontsize=FONT_POINTS + 1)
        if len(series) > 1:
            axes.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
        return figure_svg(figure, salt)

