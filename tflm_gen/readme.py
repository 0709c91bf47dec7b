"""The README.md of a generated project: what is inside (files and sizes), the model's API
with a short example, and how to build, flash, see output, run the self-test and
regenerate for the project's target; and the one command to run next, which the CLI
prints after `project`.

Per-target text lives in `templates/readme/<target>.md.j2`: its `steps` block is the
README's "Build and run" section and its `next_command(folder)` macro the hint, so one file
holds everything a target says about being built."""

from __future__ import annotations

import posixpath
import shlex

import jinja2

from tflm_gen.assemble import environment, render
from tflm_gen.model import ir
from tflm_gen.resources import resource_dir
from tflm_gen.targets import Target

README = "README.md"
SECTIONS = "readme"  # templates/readme/<target>.md.j2
C_TYPES = {"int8": "int8_t", "uint8": "uint8_t", "int16": "int16_t", "uint16": "uint16_t",
           "int32": "int32_t", "uint32": "uint32_t", "int64": "int64_t", "float32": "float",
           "float64": "double", "bool": "uint8_t"}  # numpy dtype -> the C type of an element


def section_template(target: str) -> str:
    """The target's README section; a target without one is a bug the tests catch."""
    return f"{SECTIONS}/{target}.md.j2"


def has_section(target: str) -> bool:
    return (resource_dir("templates") / section_template(target)).is_file()


def regenerate_command(command: str, target: str, tags: tuple[str, ...]) -> str:
    """The command line that made the project, or (from Python, where there is none) the
    equivalent one with the model's path left to fill in."""
    if command:
        return command
    words = ["tflm-gen", "project", "--model", "MODEL.tflite", "--target", target]
    if tags:
        words += ["--tags", ",".join(tags)]
    return shlex.join([*words, "-o", "OUT"])


def _file_rows(files: dict[str, bytes], library_dir: str) -> list[dict]:
    """One row per file outside the library folder, one for the library folder."""
    rows = [{"path": path, "bytes": len(data)} for path, data in files.items()
            if not path.startswith(library_dir + "/")]
    library = [data for path, data in files.items() if path.startswith(library_dir + "/")]
    rows.append({"path": library_dir + "/", "bytes": sum(len(data) for data in library),
                 "count": len(library)})
    return sorted(rows, key=lambda row: row["path"])


def _kernel_sources(files: dict[str, bytes], library_dir: str, name: str) -> list[str]:
    """The kernels' C files in the library folder (neither runtime nor the model's own)."""
    own = (f"{name}.c", f"{name}_model_ops.c", f"{name}_model_delegates.c", f"{name}_weights.c")
    names = (posixpath.basename(path) for path in files if path.startswith(library_dir + "/"))
    return sorted(each for each in names if each.endswith((".c", ".cpp"))
                  and not each.startswith(("tflm_", f"{name}_model_data")) and each not in own)


def layout_values(paths: list[str]) -> dict:
    """Facts of the project's layout the steps name: the uVision project file, the
    Arduino sketches (example folders), whether the self-test has its own folder, and
    whether this tflm-gen knows boards (`--board`)."""
    sketches = [path.split("/")[1] for path in paths
                if path.startswith("examples/") and path.endswith(".ino")]
    return {"paths": paths, "sketches": sketches,
            "uvprojx": next((path for path in paths if path.endswith(".uvprojx")), ""),
            "split_test": any(path.startswith("test/") for path in paths),
            "boards_known": (resource_dir("targets") / "boards").is_dir()}


def readme_file(files: dict[str, bytes], values: dict, command: str,
                tags: tuple[str, ...]) -> bytes:
    """README.md for the project whose other files are `files`; `values` are the values
    its templates saw (target, lib_root, arena_bytes, inputs, outputs, ...)."""
    library_dir = values["lib_root"]
    model_file = posixpath.join(library_dir, f"{values['name']}_model_data.c")
    return render(f"{SECTIONS}/README.md.j2", **values,
                  **layout_values(sorted(files)), section=section_template(values["target"]),
                  file_rows=_file_rows(files, library_dir), model_file=model_file,
                  kernel_sources=_kernel_sources(files, library_dir, values["name"]),
                  regenerate=regenerate_command(command, values["target"], tags))


def tensor_entries(model: ir.Model, indices: list[int]) -> list[dict]:
    """The graph inputs or outputs `indices` of subgraph 0 as the README describes them."""
    entries = []
    for index in indices:
        tensor = model.subgraphs[0].tensors[index]
        entries.append({"dtype": tensor.dtype, "shape": tensor.shape,
                        "size": ir.tensor_bytes(tensor), "count": ir.element_count(tensor),
                        "ctype": C_TYPES.get(tensor.dtype, "uint8_t")})
    return entries


def next_command(target: Target, folder: str, paths: list[str]) -> str:
    """What to run after `project` wrote `target`'s project (files `paths`) into `folder`."""
    # the section's text needs the project's values; its macro only the target's
    template = environment(jinja2.ChainableUndefined).get_template(section_template(target.name))
    module = template.make_module({**target.values, **layout_values(paths)})
    return str(module.next_command(shlex.quote(folder))).strip()
