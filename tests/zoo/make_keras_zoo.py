"""Make the Keras half of the model zoo: Keras models with seeded random weights, converted
by TensorFlow's TFLite converter with a seeded representative dataset.

    /work/venvs/tf/bin/python tests/zoo/make_keras_zoo.py [--keep-existing] [NAME ...]

needs TensorFlow (and tf_keras for the TF2-Keras LSTMs), which the tests do not: it writes
`tests/zoo/keras/<name>_<dtype>.tflite` and `tests/zoo/keras/MANIFEST.tsv` (format in
tests/test_zoo.py); with names, it remakes only those models and keeps the other rows.
With --keep-existing, a model whose file exists is read instead of converted again (the
output is the same; converting the image networks takes minutes). The `expect` column is
a finding of the tests, not of this script: rows keep theirs when remade, and new rows
start as `ok`.

Most layer nets take a static batch of 1, as models for microcontrollers are usually
converted; the keras.applications networks, flatten_dynamic, ds_cnn_kws, conv1d_tcn and
batch_matmul_attention keep Keras' dynamic batch, whose shape arithmetic (SHAPE,
STRIDED_SLICE and PACK on int32, REDUCE_PROD) real models carry.

Each model is converted to int8 (full integer, int8 input and output), and where listed
to int16x8 (int16 activations, int8 weights) and float32. Random weights would make most
image networks' activations vanish after a few dozen layers (and so give degenerate
models whose quantized tensors are all zero): every bias and normalization parameter is
drawn at random, and every BatchNormalization takes its moving statistics from one batch
of the representative data, so each layer sees normalized activations like a trained one.

Every model must stay under 1 MB. Where a keras.applications network cannot (ResNet50,
DenseNet121, EfficientNetB0, NASNetMobile, MobileNetV2 1.0, MobileNetV3Large), the zoo
holds a prefix of it: the layers up to a named intermediate layer, then global average
pooling and a small softmax head (see `prefix_model`).

Output is deterministic on one machine (seeded weights and data, oneDNN off); another CPU
may differ in a float rounding of the calibration and so in a scale, which is why the
tests check the committed files' hashes and never regenerate them.
"""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import os
import subprocess
import sys
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ["TF_ENABLE_ONEDNN_OPTS"] = "0"  # one summation order, so one calibration

import keras
import numpy as np
import tensorflow as tf
import tf_keras
from tensorflow.lite.python import schema_py_generated as schema

HERE = Path(__file__).resolve().parent / "keras"
COLUMNS = ["file", "converter", "dtype", "ops", "versions", "sha256", "expect"]
ALL_DTYPES = ("int8", "int16x8", "float32")
# Variants beyond the three: int8 inside with the float input and output the converter
# gives by default (QUANTIZE and DEQUANTIZE at the ends), and dynamic-range quantization
# (float activations, int8 weights), which TFLM refuses. File suffix -> manifest dtype.
# The converter's 16x8 quantization lacks ops that some nets use (NEG and so
# LayerNormalization, HARD_SWISH, PRELU, LOG_SOFTMAX, DEPTH_TO_SPACE, SQUARE, ARG_MAX,
# GREATER, the fused LSTM, and the int32 -> float CAST of Embedding); its int8
# calibration crashes (segmentation fault) on WHILE loops, which stay float32.
NO_INT16 = ("int8", "float32")
FLOAT_ONLY = ("float32",)
MANIFEST_DTYPE = {"int8": "int8", "int16x8": "int16x8", "float32": "float32",
                  "int8floatio": "int8", "hybrid": "hybrid"}
CALIBRATION_SAMPLES = 16
MAX_MODEL_BYTES = 1 << 20
KERAS3 = f"tensorflow {tf.__version__}, keras {keras.__version__}"
TF_KERAS = f"tensorflow {tf.__version__}, tf_keras {tf_keras.__version__}"
OPS_BY_CODE = {value: name for name, value in vars(schema.BuiltinOperator).items()
               if not name.startswith("_")}  # fmt: skip


@dataclass(frozen=True)
class Spec:
    """One zoo network: `build()` returns a Keras model (Keras 3 or tf_keras) or a
    `tf.Module` whose `__call__` is a tf.function with an input signature."""

    name: str
    build: Callable[[], object]
    dtypes: tuple[str, ...] = ALL_DTYPES
    int_inputs: int = 0  # > 0: inputs are int32 ids in [0, int_inputs)
    # Converted in a process of its own: the converter names control-flow subgraphs after
    # a process-wide counter (cond_true_97310), which depends on all converted before.
    own_process: bool = False


def seed_for(name: str) -> int:
    return zlib.crc32(name.encode())


# ---------------------------------------------------------------- weights and data


def input_specs(model) -> list[tuple[tuple[int, ...], tf.DType]]:
    """(shape with batch 1, dtype) of each input, in the model's order."""
    if isinstance(model, tf.Module) and not hasattr(model, "inputs"):
        signature = model.__call__.input_signature
        return [(tuple(spec.shape), spec.dtype) for spec in signature]
    return [((1,) + tuple(t.shape[1:]), tf.as_dtype(t.dtype)) for t in model.inputs]


def sample_inputs(model, spec: Spec, rng: np.random.Generator, count: int):
    """`count` samples per input, stacked along the batch dimension: uniform in [-1, 1]
    (image-like and feature inputs), or ids for int inputs."""
    samples = []
    for shape, dtype in input_specs(model):
        full = (count,) + shape[1:]
        if dtype.is_integer:
            samples.append(rng.integers(0, spec.int_inputs, full).astype(dtype.as_numpy_dtype))
        else:
            samples.append(rng.uniform(-1.0, 1.0, full).astype(np.float32))
    return samples


def converted_input_order(model) -> list[int]:
    """For each input of the converted model, the position of the Keras input it is: the
    converter orders several inputs by name, and calibration feeds them in its order."""
    inputs = getattr(model, "inputs", [])
    if len(inputs) < 2:
        return [0]
    names = [tensor.name.split(":")[0] for tensor in inputs]
    interpreter = tf.lite.Interpreter(model_content=converter_for(model).convert())
    converted = interpreter.get_signature_list()["serving_default"]["inputs"]
    return [names.index(name) for name in converted]


def _weight_kind(variable) -> str:
    return variable.name.split("/")[-1].split(":")[0]


def randomize_offsets(model, rng: np.random.Generator) -> None:
    """Random biases, betas and gammas: Keras initializes them to 0 and 1, which would
    leave every quantized bias zero and every normalization an identity."""
    for variable in model.weights:
        kind, shape = _weight_kind(variable), tuple(variable.shape)
        if kind in ("bias", "beta"):
            variable.assign(rng.normal(0.0, 0.2, shape).astype(np.float32))
        elif kind == "gamma":
            variable.assign(rng.uniform(0.5, 1.5, shape).astype(np.float32))


def calibrate_batch_norms(model, batch) -> None:
    """Moving mean and variance of every BatchNormalization = the statistics of `batch`."""
    norms = [layer for layer in _all_layers(model) if "BatchNormalization" in type(layer).__name__]
    if not norms:
        return
    for layer in norms:
        layer.momentum = 0.0
    model(batch if len(batch) > 1 else batch[0], training=True)


def _all_layers(model):
    for layer in model.layers:
        yield layer
        if hasattr(layer, "layers"):
            yield from _all_layers(layer)


def prepare_weights(model, spec: Spec) -> None:
    if isinstance(model, tf.Module) and not hasattr(model, "layers"):
        return  # tf.Module nets draw their own seeded weights
    rng = np.random.default_rng(seed_for(spec.name) + 1)
    randomize_offsets(model, rng)
    calibrate_batch_norms(model, sample_inputs(model, spec, rng, CALIBRATION_SAMPLES))


def representative_dataset(model, spec: Spec):
    samples = sample_inputs(model, spec, np.random.default_rng(seed_for(spec.name) + 2),
                            CALIBRATION_SAMPLES)

    order = converted_input_order(model)

    def generate():
        for index in range(CALIBRATION_SAMPLES):
            yield [samples[position][index : index + 1] for position in order]

    return generate


# ---------------------------------------------------------------- conversion


def converter_for(model) -> tf.lite.TFLiteConverter:
    if isinstance(model, tf.Module) and not hasattr(model, "layers"):
        function = model.__call__.get_concrete_function()
        converter = tf.lite.TFLiteConverter.from_concrete_functions([function], model)
        converter.experimental_enable_resource_variables = True
        return converter
    return tf.lite.TFLiteConverter.from_keras_model(model)


def convert(model, spec: Spec, dtype: str) -> bytes:
    converter = converter_for(model)
    if dtype == "float32":
        return converter.convert()
    converter.optimizations = [tf.lite.Optimize.DEFAULT]
    if dtype == "hybrid":
        return converter.convert()
    converter.representative_dataset = representative_dataset(model, spec)
    if dtype == "int8floatio":
        converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
        return converter.convert()
    if dtype == "int8":
        converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
        io_type = tf.int8
    else:
        ops_set = tf.lite.OpsSet.EXPERIMENTAL_TFLITE_BUILTINS_ACTIVATIONS_INT16_WEIGHTS_INT8
        converter.target_spec.supported_ops = [ops_set]
        io_type = tf.int16
    converter.inference_input_type = io_type
    converter.inference_output_type = io_type
    return converter.convert()


def builtin_ops(data: bytes) -> list[str]:
    """Builtin operators the model's operators use, in every subgraph, sorted."""
    model = schema.Model.GetRootAsModel(data, 0)
    codes = []
    for index in range(model.OperatorCodesLength()):
        code = model.OperatorCodes(index)
        codes.append(max(code.BuiltinCode(), code.DeprecatedBuiltinCode()))
    used = set()
    for graph_index in range(model.SubgraphsLength()):
        graph = model.Subgraphs(graph_index)
        for op_index in range(graph.OperatorsLength()):
            used.add(OPS_BY_CODE[codes[graph.Operators(op_index).OpcodeIndex()]])
    return sorted(used)


def build(spec: Spec):
    keras.utils.set_random_seed(seed_for(spec.name))
    tf_keras.utils.set_random_seed(seed_for(spec.name))
    model = spec.build()
    prepare_weights(model, spec)
    return model


def convert_in_own_process(spec: Spec) -> None:
    subprocess.run([sys.executable, __file__, "--convert-only", spec.name], check=True)


def make(spec: Spec, expectations: dict[str, str], keep_existing: bool) -> list[dict]:
    model, rows = None, []
    if spec.own_process and not keep_existing:
        convert_in_own_process(spec)
        keep_existing = True
    for dtype in spec.dtypes:
        file = f"{spec.name}_{dtype}.tflite"
        if keep_existing and (HERE / file).exists():
            data = (HERE / file).read_bytes()
        else:
            model = model or build(spec)
            data = convert(model, spec, dtype)
        assert len(data) < MAX_MODEL_BYTES, (file, len(data))
        (HERE / file).write_bytes(data)
        rows.append({"file": file, "converter": "tflite-converter", "dtype": MANIFEST_DTYPE[dtype],
                     "ops": ",".join(builtin_ops(data)),
                     "versions": TF_KERAS if spec.name in TF_KERAS_NETS else KERAS3,
                     "sha256": hashlib.sha256(data).hexdigest(),
                     "expect": expectations.get(file, "ok")})  # fmt: skip
        print(f"{file}: {len(data)} bytes, {rows[-1]['ops']}", flush=True)
    return rows


# ---------------------------------------------------------------- image networks

L = keras.layers


def image_input(size: int, channels: int = 3):
    return keras.Input((size, size, channels))


def classifier_head(features, classes: int = 10):
    pooled = L.GlobalAveragePooling2D()(features)
    return L.Dense(classes, activation="softmax")(pooled)


def prefix_model(base, layer_name: str):
    """`base` up to `layer_name`, then global average pooling and a 10-class head."""
    features = base.get_layer(layer_name).output
    return keras.Model(base.input, classifier_head(features))


def mobilenet_v1():
    return keras.applications.MobileNet(input_shape=(64, 64, 3), alpha=0.25, weights=None,
                                        classes=10)


def mobilenet_v2(alpha: float, size: int):
    return lambda: keras.applications.MobileNetV2(input_shape=(size, size, 3), alpha=alpha,
                                                  weights=None, classes=10)


def mobilenet_v2_prefix(alpha: float, layer_name: str):
    """MobileNetV2 without its last layers: 1.0 holds 2.2 M weights, 0.5 0.7 M (1.0 MB
    as int8), most of them in the last 1x1 convolution to 1280 channels."""

    def build():
        base = keras.applications.MobileNetV2(input_shape=(64, 64, 3), alpha=alpha,
                                              include_top=False, weights=None)
        return prefix_model(base, layer_name)

    return build


def mobilenet_v3(large: bool, alpha: float, minimalistic: bool, until: str | None = None,
                 top: bool = False):
    """With Keras' own top (whose Flatten keeps a dynamic batch) where it fits in 1 MB,
    else with a small head after the last layer or, given `until`, a named layer."""

    def build():
        factory = keras.applications.MobileNetV3Large if large else \
            keras.applications.MobileNetV3Small
        base = factory(input_shape=(64, 64, 3), alpha=alpha, minimalistic=minimalistic,
                       include_top=top, weights=None, classes=10)
        if top:
            return base
        return prefix_model(base, until or base.layers[-1].name)

    return build


def application_prefix(factory, layer_name: str, size: int = 64):
    def build():
        base = factory(input_shape=(size, size, 3), include_top=False, weights=None)
        return prefix_model(base, layer_name)

    return build


IMAGE_SPECS = [
    Spec("mobilenet_v1_a025_64", mobilenet_v1, NO_INT16),
    Spec("mobilenet_v2_a035_96", mobilenet_v2(0.35, 96), ("int8", "int16x8")),
    Spec("mobilenet_v2_a050_64_block16", mobilenet_v2_prefix(0.5, "block_16_project_BN"),
         ("int8",)),
    Spec("mobilenet_v2_a100_64_block9", mobilenet_v2_prefix(1.0, "block_9_add"),
         ("int8", "int16x8")),
    Spec("mobilenet_v3_small_a075_64", mobilenet_v3(False, 0.75, False), ("int8",)),
    Spec("mobilenet_v3_small_min_a075_64", mobilenet_v3(False, 0.75, True, top=True),
         ("int8",)),
    Spec("mobilenet_v3_small_a100_64_conv5",
         mobilenet_v3(False, 1.0, False, "expanded_conv_5_add"), NO_INT16),
    Spec("mobilenet_v3_large_min_a050_64", mobilenet_v3(True, 0.5, True), ("int8",)),
    Spec("mobilenet_v3_large_a100_64_conv8",
         mobilenet_v3(True, 1.0, False, "expanded_conv_8_add"), NO_INT16),
    Spec("efficientnet_b0_64_block4a",
         application_prefix(keras.applications.EfficientNetB0, "block4a_project_bn")),
    Spec("resnet50_64_conv2b2",
         application_prefix(keras.applications.ResNet50, "conv2_block2_out")),
    Spec("densenet121_64_conv2b4",
         application_prefix(keras.applications.DenseNet121, "conv2_block4_concat"),
         ("int8", "int16x8")),
    Spec("nasnet_mobile_64_cell1",
         application_prefix(keras.applications.NASNetMobile, "normal_concat_1")),
]

# ---------------------------------------------------------------- layer networks

K = tf_keras.layers


def chain(shape, *layers, batch_size=None):
    """A Keras 3 model applying `layers` in turn to one input of `shape`."""
    x = inputs = keras.Input(shape, batch_size=batch_size)
    for layer in layers:
        x = layer(x)
    return keras.Model(inputs, x)


def tf_keras_chain(shape, *layers, batch_size=None):
    """The same with TF2 Keras (tf_keras), whose LSTM converts to the fused LSTM op."""
    x = inputs = tf_keras.Input(shape, batch_size=batch_size)
    for layer in layers:
        x = layer(x)
    return tf_keras.Model(inputs, x)


def gru_unrolled():
    return chain((16, 8), L.GRU(16, unroll=True), L.Dense(4, activation="softmax"),
                 batch_size=1)


def gru_keras3():
    return chain((12, 8), L.GRU(16), L.Dense(4, activation="softmax"), batch_size=1)


def lstm_keras3():
    return chain((12, 8), L.LSTM(16), L.Dense(4, activation="softmax"), batch_size=1)


def lstm_fused():
    return tf_keras_chain((16, 8), K.LSTM(16, return_sequences=True), K.LSTM(16),
                          K.Dense(4, activation="softmax"), batch_size=1)


def bilstm_fused():
    return tf_keras_chain((16, 8), K.Bidirectional(K.LSTM(12, return_sequences=True)),
                          K.GlobalAveragePooling1D(), K.Dense(4, activation="softmax"),
                          batch_size=1)


def bigru_unrolled():
    return chain((12, 8), L.Bidirectional(L.GRU(12, unroll=True)),
                 L.Dense(4, activation="softmax"), batch_size=1)


def simple_rnn_unrolled():
    return chain((10, 6), L.SimpleRNN(16, unroll=True, return_sequences=True),
                 L.TimeDistributed(L.Dense(3)), batch_size=1)


def conv_bn_relu_1d(filters, kernel, **options):
    return [L.Conv1D(filters, kernel, use_bias=False, **options), L.BatchNormalization(),
            L.ReLU()]


def conv1d_audio():
    """Raw-waveform classifier: strided Conv1D blocks, max pooling, global average."""
    return chain((1024, 1), *conv_bn_relu_1d(8, 9, strides=4), L.MaxPooling1D(2),
                 *conv_bn_relu_1d(16, 5), L.MaxPooling1D(2), *conv_bn_relu_1d(32, 3),
                 L.GlobalAveragePooling1D(), L.Dense(6, activation="softmax"))


def conv1d_tcn():
    """Dilated causal Conv1D stack with a residual connection, an output per step."""
    x = inputs = keras.Input((64, 4))
    skip = L.Conv1D(16, 1)(x)
    for rate in (1, 2, 4):
        x = L.Conv1D(16, 3, padding="causal", dilation_rate=rate, activation="relu")(x)
    x = L.Add()([x, skip])
    return keras.Model(inputs, L.Conv1D(2, 1)(x))


def separable_conv1d():
    """Log-mel spectrogram keyword spotter with depthwise-separable Conv1D."""
    return chain((98, 40), L.SeparableConv1D(32, 5, strides=2), L.BatchNormalization(),
                 L.ReLU(), L.SeparableConv1D(32, 5, padding="same"),
                 L.BatchNormalization(), L.ReLU(), L.AveragePooling1D(7), L.Flatten(),
                 L.Dense(12, activation="softmax"), batch_size=1)


def ds_cnn_kws():
    """MLPerf Tiny's keyword-spotting DS-CNN at small width, on 49x10 MFCCs."""
    layers = [L.Conv2D(32, (10, 4), strides=2, padding="same"), L.BatchNormalization(),
              L.ReLU()]
    for _ in range(3):
        layers += [L.DepthwiseConv2D(3, padding="same"), L.BatchNormalization(), L.ReLU(),
                   L.Conv2D(32, 1), L.BatchNormalization(), L.ReLU()]
    layers += [L.Dropout(0.4), L.AveragePooling2D((25, 5)), L.Flatten(),
               L.Dense(12, activation="softmax")]
    return chain((49, 10, 1), *layers)


def encoder_block(x, heads, key_dim, hidden, activation, causal=False):
    attended = L.MultiHeadAttention(heads, key_dim)(x, x, use_causal_mask=causal)
    x = L.LayerNormalization()(L.Add()([x, attended]))
    feed = L.Dense(hidden, activation=activation)(x)
    feed = L.Dense(x.shape[-1])(feed)
    return L.LayerNormalization()(L.Add()([x, feed]))


def transformer_encoder():
    x = inputs = keras.Input((16, 32), batch_size=1)
    x = encoder_block(x, 4, 8, 64, "relu")
    pooled = L.GlobalAveragePooling1D()(x)
    return keras.Model(inputs, L.Dense(4, activation="softmax")(pooled))


def causal_attention():
    x = inputs = keras.Input((12, 16), batch_size=1)
    return keras.Model(inputs, encoder_block(x, 2, 8, 32, keras.activations.gelu, causal=True))


def cross_attention():
    """Two inputs (queries, context), two outputs (the sequence, a pooled class)."""
    query, context = keras.Input((8, 16), name="query"), keras.Input((12, 16), name="context")
    attended = L.MultiHeadAttention(2, 8)(query, context)
    sequence = L.LayerNormalization()(L.Add()([query, attended]))
    label = L.Dense(3, activation="softmax")(L.GlobalAveragePooling1D()(sequence))
    return keras.Model([query, context], [sequence, label])


def batch_matmul_attention():
    """Single-head attention written with matmul: BATCH_MATMUL between activations."""
    x = inputs = keras.Input((10, 16))
    query, key, value = L.Dense(16)(x), L.Dense(16)(x), L.Dense(16)(x)
    scores = keras.ops.matmul(query, keras.ops.transpose(key, (0, 2, 1))) * 0.25
    weights = keras.ops.softmax(scores, axis=-1)
    return keras.Model(inputs, keras.ops.matmul(weights, value))


def layer_norm_mlp():
    return chain((32,), L.Dense(64), L.LayerNormalization(), L.ReLU(), L.Dense(64),
                 L.LayerNormalization(center=False), L.Dense(8))


def gelu_mlp(approximate: bool):
    def gelu(x):
        return keras.activations.gelu(x, approximate=approximate)

    return lambda: chain((24,), L.Dense(32), L.Activation(gelu), L.Dense(8))


def resize_net(interpolation: str):
    """Upsampling and downsampling by Resizing and UpSampling2D."""
    return lambda: chain((12, 12, 3), L.Conv2D(8, 3, padding="same"),
                         L.Resizing(24, 24, interpolation=interpolation),
                         L.Conv2D(8, 3, padding="same", activation="relu"),
                         L.Resizing(16, 16, interpolation=interpolation),
                         L.UpSampling2D(2, interpolation=interpolation), L.Conv2D(3, 1),
                         batch_size=1)


def unet():
    """A two-level U-Net: Conv2DTranspose upsampling and skip concatenation."""
    inputs = keras.Input((32, 32, 3), batch_size=1)
    level1 = L.Conv2D(8, 3, padding="same", activation="relu")(inputs)
    level2 = L.Conv2D(16, 3, padding="same", activation="relu")(L.MaxPooling2D()(level1))
    bottom = L.Conv2D(32, 3, padding="same", activation="relu")(L.MaxPooling2D()(level2))
    up2 = L.Conv2DTranspose(16, 2, strides=2)(bottom)
    x = L.Conv2D(16, 3, padding="same", activation="relu")(L.Concatenate()([up2, level2]))
    up1 = L.Conv2DTranspose(8, 3, strides=2, padding="same")(x)
    x = L.Conv2D(8, 3, padding="same", activation="relu")(L.Concatenate()([up1, level1]))
    return keras.Model(inputs, L.Conv2D(1, 1, activation="sigmoid")(x))


def flatten_dynamic():
    """Flatten on a dynamic batch: SHAPE, STRIDED_SLICE, PACK, RESHAPE on int32."""
    return chain((8, 8, 4), L.Conv2D(8, 3, activation="relu"), L.Flatten(),
                 L.Dense(10, activation="softmax"))


def multi_io():
    """An image and a feature vector in; class probabilities and a regression out."""
    image, features = keras.Input((16, 16, 3), name="image"), keras.Input((8,), name="features")
    x = L.Conv2D(16, 3, strides=2, activation="relu")(image)
    x = L.GlobalAveragePooling2D()(L.Conv2D(16, 3, activation="relu")(x))
    x = L.Concatenate()([x, L.Dense(16, activation="relu")(features)])
    x = L.Dense(32, activation="relu")(x)
    return keras.Model([image, features],
                       [L.Dense(5, activation="softmax")(x), L.Dense(1)(x)])


def reductions():
    """Global pooling written as reductions: mean (keepdims and not), max, sum."""
    inputs = keras.Input((8, 8, 16))
    x = L.Conv2D(16, 3, padding="same", activation="relu")(inputs)
    mean = keras.ops.mean(x, axis=(1, 2), keepdims=True)
    gated = L.Multiply()([x, L.Activation("sigmoid")(mean)])
    pooled = [keras.ops.mean(gated, axis=(1, 2)), keras.ops.max(gated, axis=(1, 2)),
              keras.ops.sum(gated, axis=(1, 2)) * 0.05]
    return keras.Model(inputs, L.Dense(4)(L.Concatenate()(pooled)))


def squeeze_excite(x, activation, gate):
    channels = x.shape[-1]
    squeezed = L.GlobalAveragePooling2D(keepdims=True)(x)
    squeezed = L.Conv2D(max(channels // 4, 4), 1, activation=activation)(squeezed)
    return L.Multiply()([x, L.Conv2D(channels, 1, activation=gate)(squeezed)])


def se_net(activation: str, gate: str):
    """Convolutions with `activation` and a squeeze-excite block gated by `gate`."""

    def build():
        inputs = keras.Input((16, 16, 8))
        x = L.Conv2D(16, 3, padding="same", activation=activation)(inputs)
        x = L.DepthwiseConv2D(3, padding="same", activation=activation)(x)
        x = squeeze_excite(x, "relu", gate)
        return keras.Model(inputs, L.Conv2D(8, 1)(x))

    return build


def pixel_shuffle():
    """Sub-pixel upsampling (depth_to_space) and its inverse (space_to_depth)."""
    inputs = keras.Input((8, 8, 4))
    x = L.Conv2D(16, 3, padding="same", activation="relu")(inputs)
    x = L.Lambda(lambda t: tf.nn.depth_to_space(t, 2))(x)
    x = L.Conv2D(8, 3, padding="same", activation="relu")(x)
    x = L.Lambda(lambda t: tf.nn.space_to_depth(t, 2))(x)
    return keras.Model(inputs, L.Conv2D(4, 1)(x))


def prelu_net():
    return chain((12, 12, 3), L.Conv2D(8, 3), L.PReLU(shared_axes=[1, 2]), L.Flatten(),
                 L.Dense(16), L.PReLU(), L.Dense(4), batch_size=1)


def activations():
    """One Dense layer feeding the activations Keras offers, concatenated."""
    inputs = keras.Input((16,))
    x = L.Dense(16)(inputs)
    branches = [L.LeakyReLU(0.2)(x), L.ELU()(x), L.Activation("tanh")(x),
                L.Activation("sigmoid")(x), L.ReLU(6.0)(x), L.Activation("hard_sigmoid")(x),
                L.Activation("log_softmax")(x), L.Activation("relu")(x)]
    return keras.Model(inputs, L.Dense(8)(L.Concatenate()(branches)))


def split_concat():
    """Channel split, per-branch convolutions, concatenation, slicing, permutation."""
    inputs = keras.Input((12, 12, 8), batch_size=1)
    left, right = keras.ops.split(inputs, 2, axis=-1)
    x = L.Concatenate()([L.Conv2D(8, 3, padding="same")(left),
                         L.Conv2D(8, 1, activation="relu")(right)])
    x = x[:, 2:10, 1:11, :]
    x = L.Permute((3, 1, 2))(x)
    x = L.Reshape((16, 80))(x)
    return keras.Model(inputs, L.Dense(4)(x))


def padding_pooling():
    inputs = keras.Input((15, 15, 4))
    x = L.ZeroPadding2D(((1, 2), (2, 1)))(inputs)
    x = L.Conv2D(8, 3, activation="relu")(x)
    x = L.Lambda(lambda t: tf.pad(t, [[0, 0], [1, 1], [1, 1], [0, 0]], mode="REFLECT"))(x)
    x = L.MaxPooling2D(3, strides=2)(x)
    x = L.AveragePooling2D(2, padding="same")(x)
    x = L.Cropping2D(((1, 0), (0, 1)))(x)
    return keras.Model(inputs, L.Conv2D(4, 1)(x))


def embedding_text():
    return chain((20,), L.Embedding(100, 16), L.Conv1D(16, 3, activation="relu"),
                 L.GlobalMaxPooling1D(), L.Dense(3, activation="softmax"))


def mlp_tabular():
    return chain((20,), L.Dense(64), L.BatchNormalization(), L.ReLU(), L.Dropout(0.3),
                 L.Dense(32, activation="relu"), L.Dense(3, activation="softmax"))


def autoencoder():
    """Dense autoencoder as anomaly detectors use (MLPerf Tiny's ToyADMOS, smaller)."""
    return chain((128,), L.Dense(64, activation="relu"), L.Dense(8, activation="relu"),
                 L.Dense(64, activation="relu"), L.Dense(128))


def depthwise_variants():
    return chain((16, 16, 4), L.DepthwiseConv2D(3, depth_multiplier=2, dilation_rate=2),
                 L.SeparableConv2D(16, 3, strides=2, padding="same", activation="relu"),
                 L.DepthwiseConv2D(3, strides=2, activation="relu6"), L.Conv2D(4, 1),
                 batch_size=1)


def grouped_conv():
    return chain((12, 12, 8), L.Conv2D(16, 3, groups=4, activation="relu"),
                 L.Conv2D(8, 1), L.GlobalAveragePooling2D(), L.Dense(4))


def elementwise():
    """Two inputs combined by the elementwise ops of feature engineering."""
    a, b = keras.Input((16,), name="a"), keras.Input((16,), name="b")
    x, y = L.Dense(16)(a), L.Dense(16)(b)
    parts = [L.Subtract()([x, y]), L.Maximum()([x, y]), L.Minimum()([x, y]),
             L.Multiply()([x, y]), keras.ops.abs(x), keras.ops.square(x - y),
             L.UnitNormalization()(x)]
    return keras.Model([a, b], L.Dense(4)(L.Concatenate()(parts)))


def argmax_segmentation():
    """Per-pixel class indices (ARG_MAX) beside the class scores."""
    inputs = keras.Input((16, 16, 3))
    x = L.Conv2D(8, 3, padding="same", activation="relu")(inputs)
    scores = L.Conv2D(4, 1)(x)
    classes = L.Lambda(lambda t: tf.argmax(t, axis=-1, output_type=tf.int32))(scores)
    return keras.Model(inputs, [scores, classes])


def time_distributed_cnn():
    """Frames through a shared CNN (TimeDistributed), then an unrolled GRU."""
    frames = keras.Input((4, 16, 16, 1), batch_size=1)
    x = L.TimeDistributed(L.Conv2D(8, 3, strides=2, activation="relu"))(frames)
    x = L.TimeDistributed(L.GlobalAveragePooling2D())(x)
    x = L.GRU(8, unroll=True)(x)
    return keras.Model(frames, L.Dense(3, activation="softmax")(x))


# tf.Module nets: control flow and state that Keras layers do not produce.


def _weights(rng, *shape):
    return tf.constant(rng.normal(0.0, 1.0 / np.sqrt(shape[0]), shape).astype(np.float32))


class CondNet(tf.Module):
    """tf.cond on a data-dependent predicate: IF with a subgraph per branch."""

    def __init__(self):
        rng = np.random.default_rng(seed_for("tf_cond"))
        self.w, self.a, self.b = (_weights(rng, 16, 16) for _ in range(3))

    @tf.function(input_signature=[tf.TensorSpec([1, 16], tf.float32)])
    def __call__(self, x):
        h = tf.nn.relu(tf.matmul(x, self.w))
        return tf.cond(tf.reduce_mean(x) > 0.0, lambda: tf.tanh(tf.matmul(h, self.a)),
                       lambda: tf.sigmoid(tf.matmul(h, self.b)))


class WhileNet(tf.Module):
    """tf.while_loop applying one recurrent step five times: WHILE."""

    def __init__(self):
        rng = np.random.default_rng(seed_for("tf_while"))
        self.w = _weights(rng, 16, 16)

    @tf.function(input_signature=[tf.TensorSpec([1, 16], tf.float32)])
    def __call__(self, x):
        def body(step, h):
            return step + 1, tf.tanh(tf.matmul(h, self.w) + x)

        return tf.while_loop(lambda step, h: step < 5, body, (tf.constant(0), x))[1]


class StateNet(tf.Module):
    """A leaky accumulator kept in a tf.Variable across invokes: VAR_HANDLE,
    READ_VARIABLE, ASSIGN_VARIABLE, and CALL_ONCE for its initialization."""

    def __init__(self):
        rng = np.random.default_rng(seed_for("variable_state"))
        self.w = _weights(rng, 8, 8)
        self.state = tf.Variable(tf.zeros([1, 8]))

    @tf.function(input_signature=[tf.TensorSpec([1, 8], tf.float32)])
    def __call__(self, x):
        new = 0.5 * self.state + tf.tanh(tf.matmul(x, self.w))
        self.state.assign(new)
        return new


TF_KERAS_NETS = {"lstm_fused", "bilstm_fused"}  # built with tf_keras, not Keras 3

LAYER_SPECS = [
    Spec("gru_unrolled", gru_unrolled),
    Spec("gru_keras3", gru_keras3, FLOAT_ONLY, own_process=True),
    Spec("lstm_keras3", lstm_keras3, FLOAT_ONLY, own_process=True),
    Spec("lstm_fused", lstm_fused, NO_INT16),
    Spec("bilstm_fused", bilstm_fused, NO_INT16),
    Spec("bigru_unrolled", bigru_unrolled),
    Spec("simple_rnn_unrolled", simple_rnn_unrolled),
    Spec("conv1d_audio", conv1d_audio),
    Spec("conv1d_tcn", conv1d_tcn),
    Spec("separable_conv1d_kws", separable_conv1d),
    Spec("ds_cnn_kws", ds_cnn_kws, ALL_DTYPES + ("int8floatio",)),
    Spec("transformer_encoder", transformer_encoder, NO_INT16),
    Spec("causal_attention", causal_attention, NO_INT16),
    Spec("cross_attention", cross_attention, NO_INT16),
    Spec("batch_matmul_attention", batch_matmul_attention),
    Spec("layer_norm_mlp", layer_norm_mlp, NO_INT16),
    Spec("gelu_tanh_mlp", gelu_mlp(True)),
    Spec("gelu_exact_mlp", gelu_mlp(False)),
    Spec("resize_bilinear", resize_net("bilinear")),
    Spec("resize_nearest", resize_net("nearest")),
    Spec("unet_conv2d_transpose", unet),
    Spec("flatten_dynamic", flatten_dynamic),
    Spec("multi_io", multi_io),
    Spec("reductions", reductions),
    Spec("hard_swish_se", se_net("hard_swish", "hard_sigmoid"), NO_INT16),
    Spec("swish_se", se_net("swish", "sigmoid")),
    Spec("pixel_shuffle", pixel_shuffle, NO_INT16),
    Spec("prelu", prelu_net, NO_INT16),
    Spec("activations", activations, NO_INT16),
    Spec("split_concat", split_concat),
    Spec("padding_pooling", padding_pooling),
    Spec("embedding_text", embedding_text, NO_INT16, int_inputs=100),
    Spec("mlp_tabular", mlp_tabular, ALL_DTYPES + ("hybrid",)),
    Spec("autoencoder", autoencoder),
    Spec("depthwise_variants", depthwise_variants),
    Spec("grouped_conv", grouped_conv),
    Spec("elementwise", elementwise, NO_INT16),
    Spec("argmax_segmentation", argmax_segmentation, NO_INT16),
    Spec("time_distributed_cnn", time_distributed_cnn),
    Spec("tf_cond", CondNet, NO_INT16, own_process=True),
    Spec("tf_while", WhileNet, FLOAT_ONLY, own_process=True),
    Spec("variable_state", StateNet, own_process=True),
]

SPECS = IMAGE_SPECS + LAYER_SPECS


def existing_rows() -> list[dict]:
    manifest = HERE / "MANIFEST.tsv"
    if not manifest.exists():
        return []
    with manifest.open(newline="") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


def write_manifest(rows: list[dict]) -> None:
    with (HERE / "MANIFEST.tsv").open("w", newline="") as handle:
        writer = csv.DictWriter(handle, COLUMNS, delimiter="\t", lineterminator="\n")
        writer.writeheader()
        writer.writerows(sorted(rows, key=lambda row: row["file"]))


def main(arguments: list[str]) -> None:
    keep_existing = "--keep-existing" in arguments
    names = [name for name in arguments if not name.startswith("--")]
    if "--convert-only" in arguments:  # the child of convert_in_own_process
        for spec in SPECS:
            if spec.name in names:
                make(dataclasses.replace(spec, own_process=False), {}, False)
        return
    unknown = set(names) - {spec.name for spec in SPECS}
    if unknown:
        sys.exit(f"unknown zoo models: {', '.join(sorted(unknown))}")
    HERE.mkdir(exist_ok=True)
    old = existing_rows()
    expectations = {row["file"]: row["expect"] for row in old}
    chosen = [spec for spec in SPECS if not names or spec.name in names]
    remade = {spec.name for spec in chosen}
    rows = [row for row in old if names and row["file"].rsplit("_", 1)[0] not in remade]
    failed = []
    for spec in chosen:
        try:
            rows += make(spec, expectations, keep_existing)
        except Exception as error:  # noqa: BLE001 (report every model that fails, then stop)
            print(f"{spec.name}: FAILED: {type(error).__name__}: {error}", flush=True)
            failed.append(spec.name)
            rows += [row for row in old if row["file"].rsplit("_", 1)[0] == spec.name]
    if not names and not failed:
        for stale in set(HERE.glob("*.tflite")) - {HERE / row["file"] for row in rows}:
            stale.unlink()
    write_manifest(rows)
    if failed:
        sys.exit(f"these models failed (their old rows kept): {', '.join(failed)}")


if __name__ == "__main__":
    main(sys.argv[1:])
