"""The user's own inputs for `verify -i`: a list of samples, each one array per model input.

`-i` may be given several times; each value is one of:
  * `FILE.npy`: one array per model input, in the model's input order (as `run -i` takes
    them); the `.npy` files given directly must be as many as the model has inputs.
  * `FILE.npz`: every input of one or more samples; the array of input i is keyed by the
    input tensor's name, or `input_<i>`, or `arr_<i>` as `np.savez(a, b)` writes it.
  * `DIR`: every `.npz` in it, sorted by file name, and for a model with one input every
    `.npy` (one file per sample).
Any array may carry a leading sample axis: shape (N, *input shape) holds N samples, and
the arrays of one file (or of the `.npy` files given together) must agree on N.  Arrays
are never cast or reshaped: a wrong dtype or shape is an InputError naming the file.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np

from tflm_gen.errors import InputError
from tflm_gen.model import ir


def input_specs(model: ir.Model) -> list[tuple[str, tuple[int, ...], np.dtype]]:
    """(name, shape, dtype) of each graph input, in the model's order."""
    specs = []
    for index in model.subgraph.inputs:
        tensor = model.subgraph.tensors[index]
        numpy_name = ir.dtype_info(tensor.dtype).numpy
        if numpy_name is None:
            raise InputError(f"input '{tensor.name}' is {tensor.dtype}: no file can supply it")
        specs.append((tensor.name, tuple(tensor.shape), np.dtype(numpy_name)))
    return specs


def load_samples(paths: tuple[str, ...], model: ir.Model) -> list[list[np.ndarray]]:
    """Every sample the paths hold, in the order given (see the module docstring)."""
    specs = input_specs(model)
    direct = [path for path in paths if Path(path).suffix == ".npy" and not Path(path).is_dir()]
    samples: list[list[np.ndarray]] = []
    if direct:
        if len(direct) != len(specs):
            raise InputError(f"the model has {len(specs)} inputs but {len(direct)} .npy files "
                             "were given; put samples of several inputs in .npz files")
        samples += _split([_read_npy(path) for path in direct], specs, ", ".join(direct))
    for path in paths:
        if path not in direct:
            samples += _load_source(Path(path), specs)
    if not samples:
        raise InputError(f"the inputs {', '.join(paths)} hold no samples")
    return samples


def _load_source(path: Path, specs) -> list[list[np.ndarray]]:
    if path.is_dir():
        return _load_folder(path, specs)
    if path.suffix == ".npz":
        return _split(_read_npz(path, specs), specs, str(path))
    raise InputError(f"cannot read input {path}: expected a .npy file, a .npz file or a folder")


def _load_folder(folder: Path, specs) -> list[list[np.ndarray]]:
    names = {".npz", ".npy"} if len(specs) == 1 else {".npz"}
    files = sorted(p for p in folder.iterdir() if p.suffix in names and p.is_file())
    if not files:
        kinds = " or ".join(sorted(names))
        raise InputError(f"no {kinds} files in {folder} (a model with {len(specs)} inputs)")
    samples = []
    for file in files:
        arrays = [_read_npy(file)] if file.suffix == ".npy" else _read_npz(file, specs)
        samples += _split(arrays, specs, str(file))
    return samples


def _read_npy(path) -> np.ndarray:
    try:
        return np.load(path, allow_pickle=False)
    except ValueError as error:
        # numpy reads any file that is not an array as pickled objects, which it refuses
        reason = "not a .npy array" if "pickled" in str(error) else str(error)
        raise InputError(f"cannot read input {path}: {reason}") from None
    except OSError as error:
        raise InputError(f"cannot read input {path}: {error}") from None


def _npz_keys(keys: set[str], specs) -> list[str] | None:
    """The keys of inputs 0..n-1 in `keys`: the input tensors' names, input_<i> or arr_<i>."""
    count = len(specs)
    for wanted in ([name for name, _, _ in specs], [f"input_{i}" for i in range(count)],
                   [f"arr_{i}" for i in range(count)]):
        if len(set(wanted)) == count and set(wanted) == keys:
            return wanted
    return None


def _read_npz(path: Path, specs) -> list[np.ndarray]:
    """The arrays of the inputs in model order (see _npz_keys for the keys)."""
    try:
        with np.load(path, allow_pickle=False) as archive:
            wanted = _npz_keys(set(archive.files), specs)
            if wanted is None:
                names = ", ".join(repr(name) for name, _, _ in specs)
                raise InputError(f"{path} holds {sorted(archive.files)}; a model with "
                                 f"{len(specs)} inputs needs exactly its input names ({names}) "
                                 f"or input_0..input_{len(specs) - 1}")
            return [archive[key] for key in wanted]
    except (OSError, ValueError, zipfile.BadZipFile) as error:
        raise InputError(f"cannot read input {path}: {error}") from None


def _sample_count(array: np.ndarray, spec, index: int, source: str) -> int:
    """1 for an array of the input's shape, N for (N, *shape); else an InputError."""
    name, shape, dtype = spec
    if array.dtype == dtype and tuple(array.shape) == shape:
        return 1
    if array.dtype == dtype and array.ndim == len(shape) + 1 and tuple(array.shape[1:]) == shape:
        return int(array.shape[0])
    raise InputError(f"{source}: input {index} '{name}' must be {dtype} {list(shape)} "
                     f"(or with a leading sample axis), got {array.dtype} {list(array.shape)}")


def _split(arrays: list[np.ndarray], specs, source: str) -> list[list[np.ndarray]]:
    """Samples from one array per input, each with or without a leading sample axis."""
    counts = [_sample_count(a, s, i, source) for i, (a, s) in enumerate(zip(arrays, specs))]
    if len(set(counts)) > 1:
        raise InputError(f"{source}: the inputs hold different numbers of samples {counts}")
    batched = [a.reshape((-1, *s[1])) for a, s in zip(arrays, specs)]
    return [[batch[sample] for batch in batched] for sample in range(counts[0] if counts else 1)]
