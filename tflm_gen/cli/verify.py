"""`tflm-gen verify`: bit-exact with the oracle or not (tflm_gen/verify.py), exit 0 only
when it is."""

from __future__ import annotations

import click

from tflm_gen.inspect import read_model_bytes
from tflm_gen.model.reader import read_model
from tflm_gen.options import compress_option, memory_option, tags_option, weights_option
from tflm_gen.oracle import ORACLES
from tflm_gen.samples import load_samples
from tflm_gen.text import examples
from tflm_gen.verify import report_lines, verify


@click.command("verify", epilog=examples(
    "tflm-gen verify model.tflite",
    "tflm-gen verify model.tflite --runs 20 --tags cmsis",
    "tflm-gen verify model.tflite -i my_samples/ --per-op",
    "tflm-gen verify model.tflite --weights separate --compress --tags cmsis"))
@click.argument("model_path", type=click.Path(dir_okay=False))
@click.option("--against", type=click.Choice(("auto", *ORACLES)), default="auto",
              show_default=True, help="auto: tflm, or litert for ops TFLM cannot run")
@click.option("--runs", type=click.IntRange(1, 1000), default=3, show_default=True,
              help="invokes on seeded random inputs (when no -i is given)")
@click.option("-i", "--input", "input_paths", multiple=True,
              help="your own inputs: one .npy per model input, a .npz, or a folder of them; "
                   "a leading sample axis holds several samples (README: your own data)")
@click.option("--per-op", is_flag=True,
              help="also compare every intermediate tensor and name the first operator "
                   "whose output differs")
@tags_option()
@memory_option()
@weights_option()
@compress_option()
def verify_command(model_path, against, runs, input_paths, per_op, tags, memory, weights,
                   compress):
    """Compare the C runtime with the reference runtime; exit 0 only when bit-exact."""
    data = read_model_bytes(model_path)
    samples = load_samples(input_paths, read_model(data)) if input_paths else None
    report = verify(data, against, runs, tags, samples, per_op, memory, weights, compress)
    if report.against != "tflm":  # the default oracle goes unsaid; another one is explained
        click.echo(f"oracle: {report.against} ({report.reason})")
    for line in report_lines(report, read_model(data)):
        click.echo(line)
    if report.per_op_report is None and not report.bit_exact:
        click.echo("rerun with --per-op to name the first operator whose output differs")
    raise SystemExit(0 if report.passed else 1)
