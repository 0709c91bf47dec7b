"""Make the PyTorch half of the zoo: tests/zoo/torch/*.tflite and MANIFEST.tsv.

    # Two venvs, each made by `pip install torch==2.13.0` first, then the converter with
    # `-c constraints.txt` holding `torch==2.13.0`, so nothing upgrades torch (and pulls CUDA):
    #   litert: litert-torch tflite          onnx: onnx2tf tensorflow tf_keras onnx
    #   onnx_graphsurgeon sng4onnx psutil ai-edge-litert onnxsim onnxruntime tflite
    /work/venvs/litert/bin/python tests/zoo/make_torch_zoo.py litert-torch
    /work/venvs/onnx/bin/python tests/zoo/make_torch_zoo.py onnx2tf [--only unet ...]

Each run rewrites that converter's models and manifest rows and keeps the other's, so the
two converters may live in separate environments. Weights (torch.manual_seed) and
calibration data (numpy, seeded) are fixed, so a rerun with the same versions makes the
same models. Expectations (`ok`, `refused: ...`, `defect: ...`) are kept in EXPECT below,
found by running tests/test_zoo.py; a rerun never changes them, and
`python3 tests/zoo/make_torch_zoo.py expectations` writes them alone into the manifest.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import sys
import tempfile
import zlib
from importlib import metadata
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
OUT = HERE / "torch"
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent.parent))  # tflm_gen, for the op names of a model

COLUMNS = ["file", "converter", "dtype", "ops", "versions", "sha256", "expect"]
CALIBRATION_SAMPLES = 16

# converter: {architecture: dtypes to write}. litert-torch 0.10.0's PT2E quantizer fails on
# gru int8 (its GRU annotator wants an explicit h0 and both outputs used) and unet int8 (an
# assertion in prepare_pt2e on a skip connection): printed as NOT CONVERTED, no file.
PLAN = {
    "litert-torch": {
        "squeezenet": ["int8"], "shufflenetv2": ["int8"], "mobilenetv3": ["int8", "float32"],
        "efficientnet": ["int8"], "resnet": ["int8"], "global_pool": ["int8"],
        "audio_conv1d": ["int8"], "transformer": ["int8", "float32"],
        "transformer_relu": ["int8"], "gru": ["int8", "float32"], "lstm": ["int8"],
        "unet": ["int8", "float32"],
    },
    # onnx2tf 1.29.24 (the last release for Python 3.11) fails on shufflenetv2 (a channel
    # split feeds a convolution the wrong depth), transformer (MatMul) and gru / lstm
    # (Expand): the run prints them as NOT CONVERTED and writes no file.
    "onnx2tf": {
        "squeezenet": ["int8"], "shufflenetv2": ["int8"], "mobilenetv3": ["int8", "int16x8"],
        "efficientnet": ["int8", "float32"], "resnet": ["int8", "int16x8"],
        "transformer": ["int8"], "gru": ["int8"], "lstm": ["float32"],
        "unet": ["int8", "int16x8"], "audio_conv1d": ["float32"],
    },
}

# file: expectation other than "ok", as tests/test_zoo.py reads it. litert-torch keeps
# nn.GELU as one GELU op and onnx2tf writes HardSigmoid as RELU_0_TO_1; TFLM runs neither,
# so those models are checked against LiteRT's reference kernels. Where LiteRT's kernels for
# an op TFLM also runs round differently from TFLM's, ours (TFLM's) differ from LiteRT: each
# such op, cut out and run alone, is bit-exact with TFLM and differs from LiteRT.
EXPECT: dict[str, str] = {
    "transformer_litert_int8.tflite":
        "defect: FULLY_CONNECTED int8: per-channel, keep_num_dims, output off by 1 against "
        "LiteRT (bit-exact with TFLM) in a model only LiteRT runs (GELU)",
    "mobilenetv3_onnx2tf_int16x8.tflite":
        "defect: MUL int16: output off by 1 against LiteRT (bit-exact with TFLM) in a model "
        "only LiteRT runs (RELU_0_TO_1)",
}


def seed_of(name: str) -> int:
    return zlib.crc32(name.encode())


def calibration(shape: tuple[int, ...], seed: int) -> np.ndarray:
    """Seeded samples shaped like the model's input: standard normal, like normalised data."""
    rng = np.random.default_rng(seed)
    return rng.standard_normal((CALIBRATION_SAMPLES, *shape[1:])).astype(np.float32)


def model_ops(data: bytes) -> str:
    from tflm_gen.model.reader import read_model

    model = read_model(data)
    names = {code[0] if code[0] != "CUSTOM" else f"CUSTOM:{code[1]}"
             for code in model.operator_codes()}
    return ",".join(sorted(names))


def versions(converter: str) -> str:
    packages = ["torch"] + {"litert-torch": ["litert-torch", "litert-converter",
                                             "ai-edge-quantizer", "torchao"],
                            "onnx2tf": ["onnx", "onnx2tf", "tensorflow", "tf_keras"]}[converter]
    return " ".join(f"{name}=={metadata.version(name)}" for name in packages)


def convert_litert_torch(name: str, dtype: str) -> bytes:
    """litert-torch: float32 directly; int8 through PT2E (torch.export, per-channel
    symmetric weights, calibration, convert_pt2e), which gives int8 inputs and outputs."""
    import litert_torch
    import torch
    from torch_models import build

    model, shape = build(name, seed_of(name))
    args = (torch.from_numpy(calibration(shape, seed_of(name) + 1)[:1]),)
    if dtype == "float32":
        edge = litert_torch.convert(model, args)
    else:
        quantized, quant_config = _pt2e_int8(model, args, shape, name)
        edge = litert_torch.convert(quantized, args, quant_config=quant_config)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "model.tflite"
        edge.export(str(path))
        return path.read_bytes()


def _pt2e_int8(model, args, shape, name):
    import torch
    from litert_torch.quantize import pt2e_quantizer
    from litert_torch.quantize.quant_config import QuantConfig
    from torchao.quantization.pt2e import quantize_pt2e

    quantizer = pt2e_quantizer.PT2EQuantizer().set_global(
        pt2e_quantizer.get_symmetric_quantization_config(is_per_channel=True))
    exported = torch.export.export(model, args).module()
    prepared = quantize_pt2e.prepare_pt2e(exported, quantizer)
    for sample in calibration(shape, seed_of(name) + 2):
        prepared(torch.from_numpy(sample[None]))
    converted = quantize_pt2e.convert_pt2e(prepared, fold_quantize=False)
    return converted, QuantConfig(pt2e_quantizer=quantizer)


ONNX2TF_FILES = {"float32": "model_float32.tflite", "int8": "model_full_integer_quant.tflite",
                 "int16x8": "model_full_integer_quant_with_int16_act.tflite"}


def convert_onnx2tf(name: str, dtypes: list[str]) -> dict[str, bytes]:
    """torch.onnx.export (TorchScript exporter, opset 17), then onnx2tf with full-integer
    quantization calibrated on seeded data. Images become NHWC; other inputs keep their
    layout. One conversion writes every variant; the ones asked for are returned."""
    import torch
    from torch_models import build

    model, shape = build(name, seed_of(name))
    args = (torch.from_numpy(calibration(shape, seed_of(name) + 1)[:1]),)
    with tempfile.TemporaryDirectory() as folder:
        onnx_path = Path(folder) / "model.onnx"
        torch.onnx.export(model, args, str(onnx_path), input_names=["input"],
                          output_names=["output"], opset_version=17, dynamo=False)
        _run_onnx2tf(onnx_path, Path(folder) / "out", shape, seed_of(name) + 2)
        return {dtype: (Path(folder) / "out" / ONNX2TF_FILES[dtype]).read_bytes()
                for dtype in dtypes}


def _run_onnx2tf(onnx_path: Path, out: Path, shape, seed: int) -> None:
    import onnx2tf
    import onnx2tf.onnx2tf as internals

    image = len(shape) == 4
    samples = calibration(shape, seed)
    if image:
        samples = samples.transpose(0, 2, 3, 1)
    # onnx2tf fetches a sample image set from the network to check 3-channel image inputs;
    # there is no network here, and seeded data keeps the run deterministic anyway.
    rng = np.random.default_rng(seed)
    internals.download_test_image_data = lambda: rng.standard_normal(
        (20, 128, 128, 3)).astype(np.float32)
    data_path = out.parent / "calibration.npy"
    np.save(data_path, samples)
    neutral = np.zeros((1,) * (samples.ndim - 1) + samples.shape[-1:]).tolist()
    onnx2tf.convert(
        input_onnx_file_path=str(onnx_path), output_folder_path=str(out),
        output_integer_quantized_tflite=True, quant_type="per-channel",
        custom_input_op_name_np_data_path=[
            ["input", str(data_path), neutral, (np.array(neutral) + 1.0).tolist()]],
        keep_shape_absolutely_input_names=None if image else ["input"],
        non_verbose=True)


def make(converter: str, names: list[str]) -> list[dict]:
    rows, failed = [], []
    for name in names:
        dtypes = PLAN[converter][name]
        jobs = [dtypes] if converter == "onnx2tf" else [[dtype] for dtype in dtypes]
        for job in jobs:
            try:
                if converter == "onnx2tf":
                    made = convert_onnx2tf(name, job)
                else:
                    made = {job[0]: convert_litert_torch(name, job[0])}
            except Exception as error:  # noqa: BLE001 - one failure must not stop the rest
                failed.append(f"{name} {job}: {type(error).__name__}: {str(error)[:300]}")
                continue
            rows += [write_model(name, converter, dtype, data) for dtype, data in made.items()]
    for line in failed:
        print(f"NOT CONVERTED {line}", file=sys.stderr)
    return rows


SHORT = {"litert-torch": "litert", "onnx2tf": "onnx2tf"}


def write_model(name: str, converter: str, dtype: str, data: bytes) -> dict:
    file = f"{name}_{SHORT[converter]}_{dtype}.tflite"
    (OUT / file).write_bytes(data)
    print(f"{file}: {len(data)} bytes", flush=True)
    return {"file": file, "converter": converter, "dtype": dtype, "ops": model_ops(data),
            "versions": versions(converter), "sha256": hashlib.sha256(data).hexdigest(),
            "expect": EXPECT.get(file, "ok")}


def write_manifest(replaced: set[str], rows: list[dict]) -> None:
    """Writes `rows` in place of the rows of the files in `replaced`, keeping the others."""
    manifest = OUT / "MANIFEST.tsv"
    kept = []
    if manifest.exists():
        with manifest.open(newline="") as handle:
            kept = [row for row in csv.DictReader(handle, delimiter="\t")
                    if row["file"] not in replaced]
    with manifest.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, COLUMNS, delimiter="\t", lineterminator="\n")
        writer.writeheader()
        writer.writerows(sorted(kept + rows, key=lambda row: row["file"]))


def apply_expectations() -> None:
    """Rewrites only the expect column from EXPECT (after a test run changed what is known)."""
    with (OUT / "MANIFEST.tsv").open(newline="") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    for row in rows:
        row["expect"] = EXPECT.get(row["file"], "ok")
    write_manifest({row["file"] for row in rows}, rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("converter", choices=sorted(PLAN) + ["expectations"],
                        help="the converter whose models to make, or 'expectations' to "
                             "rewrite only the manifest's expect column")
    parser.add_argument("--only", nargs="+", metavar="ARCHITECTURE",
                        help="remake only these architectures of the converter")
    arguments = parser.parse_args()
    converter = arguments.converter
    if converter == "expectations":
        apply_expectations()
        return
    names = arguments.only or list(PLAN[converter])
    OUT.mkdir(exist_ok=True)
    stale = {path for name in names for path in OUT.glob(f"{name}_{SHORT[converter]}_*")}
    for path in stale:
        path.unlink()
    write_manifest({path.name for path in stale}, make(converter, names))


if __name__ == "__main__":
    main()
