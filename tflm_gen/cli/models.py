"""`tflm-gen plan` and `tflm-gen partition`: commands that write a transformed model."""

from __future__ import annotations

import click

from tflm_gen.inspect import read_model_bytes
from tflm_gen.model.reader import read_model
from tflm_gen.optimize import device_model
from tflm_gen.output import write_file
from tflm_gen.text import examples


@click.command("plan", epilog=examples("tflm-gen plan model.tflite -o model_planned.tflite"))
@click.argument("model_path", type=click.Path(dir_okay=False))
@click.option("-o", "--output", "output_path", required=True, type=click.Path(dir_okay=False))
def plan_command(model_path, output_path):
    """Write MODEL with an offline memory plan (and flash requantisation) embedded."""
    planned, plan = device_model(read_model_bytes(model_path), for_tflm=True)
    write_file(output_path, planned)
    click.echo(f"head {plan.head_bytes} bytes (op-by-op bound {plan.lower_bound_bytes}); "
               f"wrote {output_path}")


@click.command("partition", epilog=examples(
    "tflm-gen partition model.tflite --accelerator conv_only -o model_npu.tflite",
    "tflm-gen partition model.tflite --accelerator my_npu.toml --cut conv3_out -o out.tflite"))
@click.argument("model_path", type=click.Path(dir_okay=False))
@click.option("--accelerator", "spec", required=True,
              help="an accelerators/*.toml file, or a shipped one's name (conv_only, "
                   "all_but_softmax, small_pool)")
@click.option("-o", "--output", "output_path", required=True, type=click.Path(dir_okay=False))
@click.option("--cut", "cuts", multiple=True, help="a tensor name the groups may not span")
def partition_command(model_path, spec, output_path, cuts):
    """Move the ops an accelerator runs into custom ops, one per maximal group."""
    from tflm_gen.accelerator import load_accelerator
    from tflm_gen.model.writer import write_model
    from tflm_gen.partition import partition_model, partition_summary, plan_partition, summary_line

    model = read_model(read_model_bytes(model_path))
    accelerator = load_accelerator(spec)
    plan = plan_partition(model, accelerator, tuple(cuts))
    write_file(output_path, write_model(partition_model(model, accelerator, plan)))
    summary = partition_summary(model, plan, accelerator)
    click.echo(f"{summary_line(summary)}; wrote {output_path}")
