"""The transformer vocabulary typed (hybridsim/sections.py): the YAML's names, named models as the
library has them, and typed fields giving the same step as the same `set=` overlays."""
import pytest

import hybridsim

LLAMA3_8B_TP8 = "scenarios/llm/llama3-8b-dgx-h100-tp8.yaml"


def test_named_models_are_the_librarys():
    assert set(hybridsim.models()) >= {"bert-large", "gpt3-175b", "megatron-1.2b", "llama2-7b", "llama2-70b",
                                       "llama3-8b", "llama3-70b", "llama3-405b", "mixtral-8x7b"}
    # Llama 3 8B's model card (../shared/reference/transformers.md): 32 layers, hidden 4,096, 32 heads
    # over 8 KV heads, SwiGLU 14,336, a 128,256-token vocabulary, 8,192-token sequences.
    m = hybridsim.model("llama3-8b")
    assert (m.layers, m.hidden, m.heads, m.kv_heads) == (32, 4096, 32, 8)
    assert (m.ffn_hidden, m.ffn, m.vocab, m.sequence) == (14336, "swiglu", 128256, 8192)
    mixtral = hybridsim.model("mixtral-8x7b")
    assert (mixtral.experts, mixtral.top_k) == (8, 2)
    with pytest.raises(ValueError, match="llama3-8b"):
        hybridsim.model("llama9")


def test_sections_are_the_yamls_keys():
    assert hybridsim.Parallelism(tp=8, pp=8, dp=16, zero=1).overlays() == [
        "parallelism.dp=16", "parallelism.tp=8", "parallelism.pp=8", "parallelism.zero=1"]
    assert hybridsim.Parallelism(ep=8, zero="fsdp", sequence_parallel=True).overlays() == [
        "parallelism.ep=8", "parallelism.zero=fsdp", "parallelism.sequence_parallel=true"]
    assert hybridsim.Training(micro_batch=2, global_batch=512, recompute="full").overlays() == [
        "training.micro_batch=2", "training.global_batch=512", "training.recompute=full"]
    assert hybridsim.Pipeline(schedule="interleaved", virtual_stages=2, stages=[3, 5]).overlays() == [
        "pipeline.schedule=interleaved", "pipeline.virtual_stages=2", "pipeline.stages=[3, 5]"]
    workload = hybridsim.Workload(network="transformer", precision="bf16",
                                  model=hybridsim.Model(layers=4, hidden=1024, ffn="gelu"))
    assert workload.overlays() == ["workload.network=transformer", "workload.model.layers=4",
                                   "workload.model.hidden=1024", "workload.model.ffn=gelu",
                                   "workload.precision=bf16"]


def test_typed_fields_run_the_step_their_overlays_run():
    typed = hybridsim.run(LLAMA3_8B_TP8, workload=hybridsim.Workload(model=hybridsim.Model(layers_simulated=2)),
                          parallelism=hybridsim.Parallelism(tp=4, dp=2),
                          training=hybridsim.Training(recompute="selective"))
    # (The overlays in the order the sections come: workload, training, parallelism, pipeline; the
    # summary's context lists them as given.)
    plain = hybridsim.run(LLAMA3_8B_TP8, set={"workload.model.layers_simulated": 2,
                                              "training.recompute": "selective", "parallelism.dp": 2,
                                              "parallelism.tp": 4})
    assert typed.json == plain.json
    assert "tp 4 × dp 2 = 8 GPUs" in typed.table
    assert typed.critical_path.tensor_parallel_communication_ms > 0
    assert typed.critical_path.model_parallel_transfers_ms == 0


def test_typed_fields_are_checked_as_the_files_are():
    with pytest.raises(hybridsim.ScenarioError, match="tp"):
        hybridsim.run(LLAMA3_8B_TP8, parallelism=hybridsim.Parallelism(tp=3))


def test_workload_gpu_prices_the_step_as_the_files_key():
    # An A100 40GB on dgx-a100 (whose preset GPU has 80 GiB): the memory check is against 40 GiB, as
    # `--set workload.gpu=a100-40gb` gives.
    slice_a100 = "scenarios/llm/gpt3-175b-slice-dgx-a100.yaml"
    typed = hybridsim.run(slice_a100, workload=hybridsim.Workload(gpu="a100-40gb"))
    assert typed.memory_capacity_bytes == 40 * 2**30
    plain = hybridsim.run(slice_a100, set={"workload.gpu": "a100-40gb"})
    assert typed.json == plain.json


def test_a_slice_says_what_the_whole_model_needs():
    # The 2-layer slice of GPT-3 175B at tp 8 x dp 2: its own figures fit an A100's 80 GiB, its 96
    # layers do not. By hand, each GPU holds 96 layers of 12h² + 4h parameters (h = 12,288) and the
    # embedding and LM head of the vocabulary padded to 51,200, all / tp 8, at 16 B each (BF16 weights
    # and gradients, Adam's FP32 moments and master weights): 350 GB before any activation.
    r = hybridsim.run("scenarios/llm/gpt3-175b-slice-dgx-a100.yaml")
    h = 12288
    states = 16 * (96 * (12 * h * h + 4 * h) + 2 * 51200 * h) // 8
    assert (r.layers_simulated, r.layers) == (2, 96)
    assert r.fits_memory and r.peak_memory_bytes < 80 * 2**30
    assert states < r.whole_model_peak_bytes < states + 6 * 10**9
    assert r.whole_model_fits is False
    summary = r.to_dict()
    assert (summary["layers_simulated"], summary["layers"]) == (2, 96)
    assert summary["whole_model_peak_bytes"] == r.whole_model_peak_bytes
    assert summary["whole_model_fits"] is False
    assert "2 of 96 layers simulated" in r.table and "the whole gpt3-175b does not fit" in r.table
    # Every layer simulated: nothing to say.
    full = hybridsim.run(LLAMA3_8B_TP8)
    assert (full.layers_simulated, full.layers, full.whole_model_peak_bytes, full.whole_model_fits) == (
        None, None, None, None)
    assert "layers_simulated" not in full.to_dict()


def test_a_run_says_its_model_flops_as_the_table_does():
    # hunt12: the table's "model FLOPs" line and summary.json's model_tflops_per_gpu and mfu had no
    # RunResult attribute. Llama 3 8B's 2-layer slice at tp 8 on H100: MFU is the count over the
    # H100's dense BF16 peak, 989.4 TFLOP/s (../shared/reference/hardware.md; no recomputation, so
    # both counts are one).
    r = hybridsim.run(LLAMA3_8B_TP8, set={"workload.model.layers_simulated": 2})
    summary = r.to_dict()
    assert (r.model_tflops_per_gpu, r.mfu) == (summary["model_tflops_per_gpu"], summary["mfu"])
    assert r.mfu == pytest.approx(r.model_tflops_per_gpu / 989.4, abs=1e-4)
    assert f"{r.model_tflops_per_gpu:.1f} TFLOP/s per GPU, MFU {100 * r.mfu:.1f}%" in r.table
    gnmt = hybridsim.run("scenarios/dgx1/gnmt-dp8.yaml")
    assert (gnmt.model_tflops_per_gpu, gnmt.mfu) == (None, None)


def test_plan_ranks_a_transformers_layouts_as_the_command_line_does(cli):
    # The transformer planner from Python: the same table as `hybridsim plan --gpu h100` (where the
    # memory's source names the keyword as Python writes it), and rows in the YAML's parallelism words.
    result = hybridsim.plan("llama3-8b", 8, gpu="h100", simulate=2, threads=1)
    printed = cli("plan", "--model", "llama3-8b", "--gpus", "8", "--gpu", "h100", "--simulate", "2",
                  "--threads", "1", "-q")
    assert printed.returncode == 0, printed.stderr
    assert result.printed == printed.stdout.replace("H100 (--gpu)", "H100 (gpu)")
    assert len(result.ranked) == 2 and result.estimated == [] and result.not_simulated == []
    best = result.ranked[0]
    assert best["dp"] * best["tp"] * best["pp"] == 8 and best["simulated"]
    assert best["label"] in result.printed and best["step_time_ps"] > 0
    assert best["schedule"] in ("gpipe", "1f1b", "interleaved") and best["recompute"] in ("none", "selective", "full")
    assert best["tokens_per_second"] > 0 and best["time_to_train_seconds"] is None  # no critical_batch
    # With a critical batch the rows are ranked by time to train, and say it.
    by_time = hybridsim.plan("llama3-8b", 8, gpu="h100", simulate=1, threads=1, critical_batch=4e6)
    assert by_time.ranked[0]["time_to_train_seconds"] > 0


def test_plan_keeps_the_layouts_past_simulate_to_their_closed_form():
    # simulate=1: one layout simulated and ranked; the others that fit are estimated, listed apart.
    result = hybridsim.plan("llama3-8b", 16, gpu="h100", simulate=1, threads=1)
    assert len(result.ranked) == 1 and result.ranked[0]["simulated"]
    assert result.estimated and not any(row["simulated"] for row in result.estimated)
    assert all(row["step_time_ps"] is None and row["estimated_step_seconds"] > 0 for row in result.estimated)
    assert all(row["why"].startswith("estimated, not simulated (") for row in result.estimated)
    assert result.not_simulated == [row["label"] for row in result.estimated]


@pytest.mark.parametrize("call, error, starts", [
    (lambda: hybridsim.plan("llama3-8b", 8, objective="throughput"), hybridsim.ScenarioError,
     "objective='throughput': not for a transformer (llama3-8b)"),
    (lambda: hybridsim.plan("llama3-8b", 8, show_unfit=True), hybridsim.ScenarioError,
     "show_unfit=True: not for a transformer"),
    (lambda: hybridsim.plan("llama3-8b", 8, critical_batch=0), hybridsim.ScenarioError,
     "critical_batch=0: expected tokens from 1 to 1e15"),
    (lambda: hybridsim.plan("llama3-8b", 8, simulate=-1), hybridsim.ScenarioError, "simulate: expected 0"),
    (lambda: hybridsim.plan("llama3-8b", 8, global_batch=-5), hybridsim.ScenarioError,
     "global_batch: expected sequences a step"),
    (lambda: hybridsim.plan("llama3-8b", 8, gpu="h9"), hybridsim.ScenarioError, 'gpu: unknown GPU "h9"'),
    (lambda: hybridsim.plan("llama3-8b", 8, global_batch="512"), TypeError,
     "plan(): global_batch='512': expected sequences a step"),
    (lambda: hybridsim.plan("gnmt", 8, gpu="h100"), hybridsim.ScenarioError,
     "gpu='h100': transformers only (model='gpt3-175b'"),
    (lambda: hybridsim.plan("gnmt", 8, critical_batch=4e6), hybridsim.ScenarioError,
     "critical_batch=4000000.0: transformers only"),
    # A misspelt transformer's name is said first, not the option it would have taken.
    (lambda: hybridsim.plan("llama3-8B", 8, gpu="h100"), hybridsim.ScenarioError,
     "model='llama3-8B': unknown (did you mean 'llama3-8b'?)"),
])
def test_plan_refuses_each_planners_options_for_the_other(call, error, starts):
    with pytest.raises(error) as e:
        call()
    assert str(e.value).startswith(starts), str(e.value)
