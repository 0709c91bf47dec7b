"""`tflm-gen prune`: magnitude pruning of int8 filters (tflm_gen/prune.py), and how much the
outputs change, said plainly."""

from __future__ import annotations

import click

from tflm_gen.inspect import read_model_bytes
from tflm_gen.output import write_file
from tflm_gen.prune import output_change, prune_weights
from tflm_gen.text import examples


@click.command("prune", epilog=examples(
    "tflm-gen prune model.tflite --sparsity 0.8 -o pruned.tflite",
    "tflm-gen inspect pruned.tflite"))
@click.argument("model_path", type=click.Path(dir_okay=False))
@click.option("--sparsity", type=click.FloatRange(0.0, 1.0, max_open=True), required=True,
              help="fraction of each int8 filter's weights set to zero, smallest magnitudes "
                   "first (0 <= s < 1)")
@click.option("-o", "--output", "output_path", required=True, type=click.Path(dir_okay=False))
@click.option("--samples", type=click.IntRange(1, 1000), default=16, show_default=True,
              help="random inputs on which the outputs of the two models are compared")
def prune_command(model_path, sparsity, output_path, samples):
    """Write MODEL with its int8 CONV_2D / DEPTHWISE_CONV_2D / FULLY_CONNECTED filters
    magnitude-pruned to --sparsity.  This changes the model's accuracy: the command reports
    how much its outputs move on random inputs (TFLM runs both, LiteRT a hybrid model);
    measure it on your data."""
    original = read_model_bytes(model_path)
    result = prune_weights(original, sparsity)
    write_file(output_path, result.model)
    change = output_change(original, result.model, samples)
    click.echo(f"pruned {result.tensors} filters ({result.weights:,} weights): zeros "
               f"{result.zeros_before / result.weights:.1%} -> "
               f"{result.zeros_after / result.weights:.1%}; wrote {output_path}")
    click.echo(f"this changes the model's outputs: on {change.samples} random inputs "
               f"({change.oracle}) the top class agrees on {change.top1_agree}/{change.samples}, mean |output "
               f"difference| {change.mean_abs_difference:.4g} (dequantised first output)")
