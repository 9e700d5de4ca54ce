"""The Python module against the command line: the same scenario gives the same bytes (summary.json,
the printed table, results.csv), errors carry the CLI's message and its location, threads give the
answers one thread gives, and Ctrl-C stops a long step."""
import concurrent.futures
import copy
import decimal
import fractions
import os
import pathlib
import pickle
import re
import signal
import subprocess
import sys
import time

import pytest

import hybridsim

GNMT_DP8 = "scenarios/dgx1/gnmt-dp8.yaml"
NVLINK_SWEEP = "scenarios/examples/dgx1-nvlink-sweep.yaml"


def test_run_gives_the_command_lines_summary_json_and_table(cli, tmp_path):
    printed = cli("run", GNMT_DP8, "--out", str(tmp_path), "-q")
    assert printed.returncode == 0, printed.stderr
    r = hybridsim.run(GNMT_DP8)
    with open(tmp_path / "summary.json", encoding="utf-8") as f:
        assert r.json == f.read()
    # The CLI adds one line after the table: where the outputs went.
    assert printed.stdout == r.table + f"  outputs in {tmp_path}\n"
    assert r.to_dict()["step_time_us"] == pytest.approx(r.step_time_ps * 1e-6, abs=1e-3)
    assert r.written is None  # no out=: nothing written


def test_typed_figures_agree_with_each_other(cli):
    r = hybridsim.run(GNMT_DP8, set={"parallelism": {"dp": 4, "mp": 2}})
    assert (r.dp, r.mp, r.gpus, r.global_batch) == (4, 2, 8, 512)
    assert r.unit == "tokens"
    assert len(r.per_gpu) == 8 and [g.gpu for g in r.per_gpu] == list(range(8))
    assert r.critical.finish_ms == pytest.approx(r.step_time_ms)
    path = r.critical_path
    parts = path.compute_ms + path.gradient_communication_ms + path.model_parallel_transfers_ms + path.launch_gaps_ms
    assert parts == pytest.approx(r.step_time_ms, rel=1e-9)
    assert r.time_to_train is not None and r.time_to_train.hours == pytest.approx(r.time_to_train.seconds / 3600)
    assert r.fits_memory and 0 < r.peak_memory_bytes < r.memory_capacity_bytes
    # The overlay as text says the same (summary.json quotes the --set text as written).
    same = hybridsim.run(GNMT_DP8, set=["parallelism={dp: 4, mp: 2}"])
    assert (same.step_time_ps, same.events, same.per_gpu) == (r.step_time_ps, r.events, r.per_gpu)


def test_mp_is_the_gpus_of_one_dp_worker_as_in_results_csv(source_dir):
    # Llama 3 8B at tp 8 on one DGX H100: one replica of 8 GPUs, so mp 8 (tp 8 x pp 1) as results.csv
    # says; RunResult.mp was the step's pp (1), and there was no tp. A 2017 network has no tp, pp, ep, zero.
    r = hybridsim.run(os.path.join(source_dir, "scenarios/llm/llama3-8b-dgx-h100-tp8.yaml"))
    assert (r.gpus, r.dp, r.mp, r.tp, r.pp, r.ep, r.zero) == (8, 1, 8, 8, 1, 1, 0)
    assert r.dp * r.mp == r.gpus
    # The run's own summary.json says the same (its "mp" was the step's pp, 1, with no tp, pp, ep, zero).
    d = r.to_dict()
    assert (d["dp"], d["mp"], d["tp"], d["pp"], d["ep"], d["zero"]) == (1, 8, 8, 1, 1, 0)
    g = hybridsim.run(GNMT_DP8, set={"parallelism": {"dp": 4, "mp": 2}})
    assert (g.dp, g.mp, g.tp, g.pp, g.ep, g.zero) == (4, 2, None, None, None, None)
    d = g.to_dict()
    assert (d["dp"], d["mp"], d["tp"], d["pp"], d["ep"], d["zero"]) == (4, 2, None, None, None, None)


def test_notes_are_the_command_lines_stderr_notes(cli, tmp_path):
    # Fabric keys on one machine change nothing: the note hybridsim run prints on stderr is in notes.
    text = "cluster: {preset: dgx1-v100, fabric: rail-optimized}\nworkload: {network: gnmt}\nparallelism: {dp: 8}\n"
    path = tmp_path / "fabric.yaml"
    path.write_text(text, encoding="utf-8")
    printed = cli("run", str(path), "--out", str(tmp_path / "o"), "-q")
    assert printed.returncode == 0, printed.stderr
    r = hybridsim.run(str(path))
    assert len(r.notes) == 1 and r.notes[0].startswith(f"cluster.fabric ({path}:1:38): not used")
    assert printed.stderr == f"hybridsim run: note: {r.notes[0]}\n"
    assert hybridsim.run(GNMT_DP8).notes == []


def test_a_topology_files_infiniband_link_inside_a_machine_is_a_note_of_the_run(cli, tmp_path):
    # hunt10: an InfiniBand link between two GPUs of one machine was taken without a word. It runs as
    # written (a what-if), and run says it, naming the file's line, as the command line's stderr does.
    (tmp_path / "ib.yaml").write_text(
        "nodes:\n  - {name: GPU0, kind: gpu}\n  - {name: GPU1, kind: gpu}\n"
        "links:\n  - {a: GPU0, b: GPU1, kind: infiniband, bandwidth: 25 GB/s}\n", encoding="utf-8")
    path = tmp_path / "s.yaml"
    path.write_text("cluster: {topology: ib.yaml}\nworkload: {network: gnmt}\nparallelism: {dp: 2}\n",
                    encoding="utf-8")
    printed = cli("run", str(path), "--out", str(tmp_path / "o"), "-q")
    assert printed.returncode == 0, printed.stderr
    r = hybridsim.run(str(path))
    assert r.notes == [f"{tmp_path / 'ib.yaml'}:5:5: links[0]: a link of kind infiniband between GPUs \"GPU0\" and "
                       "\"GPU1\" of one machine (node 0), taken as written; a machine's GPUs usually meet over "
                       "nvlink, nvswitch or pcie, and InfiniBand joins machines through their NICs"]
    assert printed.stderr == f"hybridsim run: note: {r.notes[0]}\n"
    assert r.dp == 2 and r.step_time_ms > 0
    # A sweep on the file says it once for the points it holds for, as its other notes.
    swept = tmp_path / "sweep.yaml"
    swept.write_text(path.read_text(encoding="utf-8") +
                     "sweep:\n  parameters:\n    - {path: parallelism.dp, values: [1, 2]}\n", encoding="utf-8")
    assert hybridsim.sweep(str(swept)).attrs["notes"] == [f"sweep points 0, 1: {r.notes[0]}"]


def test_topology_and_collective_say_a_topology_files_notes_as_run_does(cli, tmp_path):
    # The command line's topology and collective print a topology file's notes on stderr, as run does;
    # Python's topology() and collective() dropped them, where run() has them in RunResult.notes.
    path = tmp_path / "ib.yaml"
    path.write_text("nodes:\n  - {name: GPU0, kind: gpu}\n  - {name: GPU1, kind: gpu}\n"
                    "links:\n  - {a: GPU0, b: GPU1, kind: infiniband, bandwidth: 25 GB/s}\n", encoding="utf-8")
    note = (f"{path}:5:5: links[0]: a link of kind infiniband between GPUs \"GPU0\" and \"GPU1\" of one machine "
            "(node 0), taken as written; a machine's GPUs usually meet over nvlink, nvswitch or pcie, and "
            "InfiniBand joins machines through their NICs")
    report = hybridsim.topology(str(path))
    assert report.notes == [note]
    printed = cli("topology", str(path))
    assert printed.returncode == 0, printed.stderr
    assert report == printed.stdout  # still the text the command line prints
    assert pickle.loads(pickle.dumps(report)).notes == [note] and copy.copy(report).notes == [note]
    assert printed.stderr == f"hybridsim topology: note: {note}\n"
    frame = hybridsim.collective(str(path), min_bytes="1 MiB", max_bytes="1 MiB")
    assert frame.attrs["notes"] == [note]
    printed = cli("collective", "-t", str(path), "-b", "1MiB", "-e", "1MiB", "--format", "csv", "-q")
    assert printed.returncode == 0, printed.stderr
    assert printed.stdout == frame.attrs["csv"]
    assert printed.stderr == f"hybridsim collective: note: {note}\n"
    # A preset has none.
    assert hybridsim.topology("dgx1-v100").notes == []
    assert hybridsim.collective("dgx1-v100", min_bytes="1 MiB", max_bytes="1 MiB").attrs["notes"] == []


def test_a_trace_given_says_it_replaces_the_scenarios_trace_block(cli, tmp_path):
    # The scenario traces GPUs 0-7 over "0 ms:50 ms" into trace.json; a trace given to the run replaces
    # that block as a whole, which the run now says (the window silently became the whole step).
    rules = "scenarios/examples/dgx1-gnmt-mp2-rules.yaml"
    r = hybridsim.run(rules, out=tmp_path / "o", trace=tmp_path / "t.json")
    assert len(r.notes) == 1, r.notes
    assert r.notes[0].startswith(f"{rules}:17:10: outputs.trace: replaced as a whole by trace='{tmp_path / 't.json'}': "
                                 "its trace.json is not written, and its window \"0 s:50 ms\" and GPUs 0-7 do not "
                                 "apply (give them with trace_window, trace_gpus, trace_detail)"), r.notes[0]
    printed = cli("run", rules, "--out", str(tmp_path / "c"), "--trace", str(tmp_path / "c.json"), "-q")
    assert printed.returncode == 0, printed.stderr
    assert "outputs.trace: replaced as a whole by --trace " in printed.stderr, printed.stderr
    assert not (tmp_path / "o" / "trace.json").exists()


def test_a_dict_and_yaml_text_are_the_files_scenario(source_dir):
    as_dict = {"name": "gnmt, DGX-1, dp 8", "cluster": {"preset": "dgx1-v100"}, "workload": {"network": "gnmt"},
               "parallelism": {"dp": 8, "mp": 1}}
    from_file = hybridsim.run(GNMT_DP8)
    from_dict = hybridsim.run(as_dict)
    text = "name: gnmt, DGX-1, dp 8\ncluster: {preset: dgx1-v100}\nworkload: {network: gnmt}\nparallelism: {dp: 8}\n"
    from_text = hybridsim.run(text)
    assert from_dict.step_time_ps == from_file.step_time_ps == from_text.step_time_ps
    assert from_dict.events == from_file.events


def test_sweep_gives_the_command_lines_results_csv(cli, tmp_path):
    printed = cli("sweep", NVLINK_SWEEP, "--out", str(tmp_path / "cli"), "--jobs", "1", "-q")
    assert printed.returncode == 0, printed.stderr
    frame = hybridsim.sweep(NVLINK_SWEEP, jobs=2, out=tmp_path / "py")
    with open(tmp_path / "cli" / "results.csv", encoding="utf-8") as f:
        expected = f.read()
    assert frame.attrs["csv"] == expected
    assert list(frame.columns) == expected.splitlines()[0].split(",")
    assert len(frame) == 6
    assert list(frame["cluster.links.nvlink.bandwidth"])[:2] == ["25 GB/s", "25 GB/s"]


def test_a_sweeps_empty_fields_are_missing_numbers_not_text(source_dir, tmp_path):
    # Read with keep_default_na=False, a column with one empty field was text throughout: a GNMT
    # sweep's tp ("" for a 2017 network), a transformer point not simulated's step_time_ms. Now whole
    # numbers are nullable Int64, others float64 with NaN; text columns keep "".
    frame = hybridsim.sweep(NVLINK_SWEEP, jobs=1, out=tmp_path / "gnmt")
    for column in ("tp", "pp", "ep", "zero", "layers_simulated", "whole_model_peak_bytes"):
        assert str(frame[column].dtype) == "Int64", column
        assert frame[column].isna().all(), column
    assert str(frame["step_time_ms"].dtype) == "float64"
    assert list(frame["not_simulated"]) == [""] * 6
    assert list(frame["whole_model_fits"]) == [""] * 6
    # Llama 3 8B at tp 8, micro-batch 1 and 64: the second does not fit the H100s and is not simulated.
    with open(os.path.join(source_dir, "scenarios/llm/llama3-8b-dgx-h100-tp8.yaml"), encoding="utf-8") as f:
        text = f.read()
    scenario = tmp_path / "llama-mb.yaml"
    scenario.write_text(text + "sweep:\n  parameters:\n    - {path: training.micro_batch, values: [1, 64]}\n")
    frame = hybridsim.sweep(str(scenario), jobs=1, out=tmp_path / "llama")
    rows = [line.split(",") for line in frame.attrs["csv"].splitlines()]
    head, first = rows[0], rows[1]
    assert str(frame["step_time_ms"].dtype) == "float64"
    assert frame["step_time_ms"][0] == float(first[head.index("step_time_ms")])
    assert frame["step_time_ms"].isna().tolist() == [False, True]
    assert str(frame["nvswitch_bytes"].dtype) == "Int64"
    assert frame["nvswitch_bytes"][0] == int(first[head.index("nvswitch_bytes")]) > 0
    assert frame["nvswitch_bytes"].isna().tolist() == [False, True]
    assert frame["peak_memory_bytes"].dtype == "int64"
    assert frame["tp"].tolist() == [8, 8]
    assert frame["fits_memory"].tolist() == ["yes", "no"]


def test_bad_input_raises_a_located_scenario_error_with_the_clis_message(cli, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: bad\ncluster:\n  preset: dgx1-v100\nworkload:\n  network: gnmt\nparallelism:\n  dp: -3\n")
    printed = cli("run", str(bad), "-q")
    assert printed.returncode == 1
    with pytest.raises(hybridsim.ScenarioError) as caught:
        hybridsim.run(str(bad))
    e = caught.value
    assert printed.stderr == f"hybridsim run: error: {e.message}\n"
    assert (e.file, e.line, e.field) == (str(bad), 7, "parallelism.dp")
    assert e.column == 7
    assert isinstance(e, ValueError)


# A YAML syntax error names no field, but its place as any other refusal does: file, line and column
# were None for it, though the message leads with them.
@pytest.mark.parametrize("text, line, column", [
    ("cluster: {preset: dgx1-v100}\nworkload: {network: gnmt}\nparallelism: {dp: [}\n", 3, 20),
    ("cluster: {preset: dgx1-v100}\nworkload: {network: gnmt}\nparallelism:\n  dp: 8\n  dp: 4\n", 5, 3),
])
def test_a_yaml_syntax_error_is_located_without_a_field(cli, tmp_path, text, line, column):
    bad = tmp_path / "bad.yaml"
    bad.write_text(text)
    printed = cli("run", str(bad), "-q")
    assert printed.returncode == 1 and f"{bad}:{line}:{column}: invalid YAML: " in printed.stderr
    with pytest.raises(hybridsim.ScenarioError) as caught:
        hybridsim.run(str(bad))
    e = caught.value
    assert printed.stderr == f"hybridsim run: error: {e.message}\n"
    assert (e.file, e.line, e.column, e.field) == (str(bad), line, column, None)
    with pytest.raises(hybridsim.ScenarioError) as caught:
        hybridsim.run(text)
    assert (caught.value.file, caught.value.line, caught.value.column) == ("<text>", line, column)


def test_an_unknown_preset_in_an_overlay_is_a_scenario_error():
    with pytest.raises(hybridsim.ScenarioError, match="cluster.preset"):
        hybridsim.run(GNMT_DP8, set={"cluster.preset": "dgx-none"})


# An overlay's refusal quotes it as the caller wrote it (issue 31): the dict entry, the list item or
# the typed section, never the command line's `--set path=value`, which the command line keeps.
@pytest.mark.parametrize("call, starts", [
    (lambda: hybridsim.run(GNMT_DP8, set={"nope": 1}), "set={'nope': 1}: unknown field 'nope' (did you mean"),
    (lambda: hybridsim.run(GNMT_DP8, set=["cluster.nodes=1", "nope=1"]), "set[1]='nope=1': unknown field"),
    (lambda: hybridsim.run(GNMT_DP8, set="nope=1"), "set='nope=1': unknown field"),
    (lambda: hybridsim.run(GNMT_DP8, set={"cluster.nodes": [1, 2]}),
     "set={'cluster.nodes': [1, 2]}: cluster.nodes: got a list; expected a whole number"),
    (lambda: hybridsim.run(GNMT_DP8, parallelism=hybridsim.Parallelism(dp=0)),
     "parallelism=Parallelism(dp=0): parallelism.dp: got \"0\""),
    (lambda: hybridsim.run(GNMT_DP8, workload=hybridsim.Workload(model=hybridsim.Model(layers=0))),
     "workload=Workload(model=Model(layers=0)): workload.model.layers: got \"0\""),
    (lambda: hybridsim.run(GNMT_DP8, set={"workload.network": "gnmt"}, workload=hybridsim.Workload(network="x")),
     "workload=Workload(network='x'): workload.network is set twice (first by set={'workload.network': 'gnmt'})"),
    (lambda: hybridsim.run(GNMT_DP8, set=["cluster.nodes"]), "set[0]='cluster.nodes': expected path=value"),
    # A section given whole after a field inside it replaced the field without a word (hunt41).
    (lambda: hybridsim.run(GNMT_DP8, set={"communication.bucket_size": "50MB", "communication": {"algorithm": "tree"}}),
     "set={'communication': {'algorithm': 'tree'}}: replaces the whole of communication, so "
     "communication.bucket_size set before it (by set={'communication.bucket_size': '50MB'}) would never count"),
    (lambda: hybridsim.sweep(NVLINK_SWEEP, set={"nope": 1}), "set={'nope': 1}: unknown field 'nope'"),
    (lambda: hybridsim.sweep(NVLINK_SWEEP, set={"cluster.links.nvlink.bandwidth": "1 GB/s"}),
     "set={'cluster.links.nvlink.bandwidth': '1 GB/s'}: the sweep sets cluster.links.nvlink.bandwidth at every"),
])
def test_an_overlays_refusal_quotes_it_as_python_wrote_it(call, starts):
    with pytest.raises(hybridsim.ScenarioError) as caught:
        call()
    assert str(caught.value).startswith(starts), str(caught.value)
    assert "--set" not in str(caught.value)


@pytest.mark.parametrize("call, starts", [
    (lambda: hybridsim.run(GNMT_DP8, set=5), "run(): set=5: expected a dict"),
    (lambda: hybridsim.run(GNMT_DP8, set={4: 1}), "run(): set={4: 1}: expected field paths"),
    (lambda: hybridsim.run(GNMT_DP8, set=[("cluster.nodes", 1)]), "run(): set[0]=('cluster.nodes', 1): expected"),
    (lambda: hybridsim.run(GNMT_DP8, parallelism=hybridsim.Training(micro_batch=1)),
     "run(): parallelism=Training(micro_batch=1"),
    (lambda: hybridsim.sweep(NVLINK_SWEEP, training={"micro_batch": 1}), "sweep(): training={'micro_batch': 1}"),
])
def test_an_overlay_of_the_wrong_type_is_a_type_error_naming_it(call, starts):
    with pytest.raises(TypeError) as caught:
        call()
    assert str(caught.value).startswith(starts), str(caught.value)


def test_the_command_line_still_says_set(cli):
    printed = cli("run", GNMT_DP8, "-q", "--set", "nope=1")
    assert printed.stderr == "hybridsim run: error: --set nope=1: unknown field 'nope' (did you mean 'name'?)\n"


def test_threads_give_the_answers_of_one_thread():
    overlays = [{"parallelism": {"dp": dp, "mp": mp}} for dp, mp in [(8, 1), (4, 2), (2, 4), (4, 1)]]
    alone = [hybridsim.run(GNMT_DP8, set=o).json for o in overlays]
    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        together = list(pool.map(lambda o: hybridsim.run(GNMT_DP8, set=o).json, overlays))
    assert together == alone


def test_trace_writes_the_step_it_describes(tmp_path):
    r = hybridsim.run(GNMT_DP8, set={"parallelism": {"dp": 2, "mp": 1}})
    path = r.trace(tmp_path / "step.json", detail="steps")
    import json
    with open(path, encoding="utf-8") as f:
        trace = json.load(f)
    assert len(trace["traceEvents"]) > 100


def test_progress_callback_and_ctrl_c_stop_a_long_step():
    # A 4,096-GPU step simulated in full takes several seconds (4.7 s idle at 1e6a7be; 2,048 GPUs took
    # 2.1 s there and sometimes ended before the report): its first progress report (2 s in) reaches
    # the callback, and Ctrl-C then ends the step at once (it polls every 2^18 events).
    script = (
        "import hybridsim, sys\n"
        "def report(line):\n"
        "    print('progress', line['events'], flush=True)\n"
        "try:\n"
        "    hybridsim.run('" + GNMT_DP8 + "', set={'cluster.nodes': 512, 'parallelism': {'dp': 4096},"
        " 'communication.fast_path': 'off'}, progress=report)\n"
        "except KeyboardInterrupt:\n"
        "    print('interrupted', flush=True)\n"
        "    sys.exit(0)\n"
        "print('finished', flush=True)\n")
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    first = child.stdout.readline()
    assert first.startswith("progress "), first
    child.send_signal(signal.SIGINT)
    sent = time.monotonic()
    out, _ = child.communicate(timeout=120)
    assert out.splitlines()[-1] == "interrupted", out
    assert time.monotonic() - sent < 2.0


def test_ctrl_c_inside_a_model_run_stops_at_once_and_writes_nothing(tmp_path):
    # GNMT data parallel over 32,768 GPUs with NCCL's trees, folded (the default): nearly all of the
    # step's events are its trees' models, run within one of the step's events on this thread and on
    # a worker (sim/fast/tree_model.h), so a report with events comes from inside one. Not 16,384:
    # idle, its simulation ends (6.2 s in) before the second report is due (2 s, then every 5 s);
    # 32,768's first report with events comes 7.3 s in, of 18.7 s (1.2 GB). Ctrl-C then
    # raises KeyboardInterrupt within a model's next 2^16 events (or 0.1 s of waiting for the worker,
    # whose run stops too), and the outputs asked for (out=) are not written.
    out = tmp_path / "out"
    script = (
        "import hybridsim, sys\n"
        "def report(line):\n"
        "    if line['events'] > 0:\n"
        "        print('progress', line['events'], flush=True)\n"
        "try:\n"
        "    hybridsim.run('" + GNMT_DP8 + "', set={'cluster.nodes': 4096, 'parallelism': {'dp': 32768},"
        " 'communication.algorithm': 'tree'}, out=sys.argv[1], progress=report)\n"
        "except KeyboardInterrupt:\n"
        "    print('interrupted', flush=True)\n"
        "    sys.exit(0)\n"
        "print('finished', flush=True)\n")
    child = subprocess.Popen([sys.executable, "-c", script, str(out)], stdout=subprocess.PIPE, text=True)
    first = child.stdout.readline()
    assert first.startswith("progress "), first
    child.send_signal(signal.SIGINT)
    sent = time.monotonic()
    rest, _ = child.communicate(timeout=300)
    assert rest.splitlines()[-1] == "interrupted", first + rest
    assert time.monotonic() - sent < 2.0
    assert not out.exists()


def test_a_step_over_its_budget_raises_budget_error():
    with pytest.raises(hybridsim.BudgetError, match="simulation.max_events") as refused:
        hybridsim.run(GNMT_DP8, set={"simulation.max_events": 1000, "communication.fast_path": "off"})
    # Its figures beside its words: a floor from the kernels alone, before the cluster is built, so
    # no cap that passes is known yet ("raise it", no figure).
    e = refused.value
    assert (e.kind, e.limit, e.needed) == ("events", 1000, None)
    assert e.estimate == 2 * 2218 and f"about {e.estimate} events" in str(e) and "raise it (" in str(e)


def test_a_budget_error_carries_the_cap_that_passes():
    # A script can raise its cap to the figure the refusal quotes, and the step then runs.
    with pytest.raises(hybridsim.BudgetError) as refused:
        hybridsim.run(GNMT_DP8, max_sim_memory="1 KiB")
    e = refused.value
    assert (e.kind, e.limit) == ("memory", 1024)
    assert e.needed >= e.estimate > e.limit
    assert f"raise it to {e.needed // 1000} kB or more" in str(e)
    assert hybridsim.run(GNMT_DP8, max_sim_memory=f"{e.needed} B").events > 0


@pytest.mark.parametrize("keyword", [dict(trace_gzip=True), dict(trace_gpus="0-3"),
                                     dict(trace_window="2 ms:5 ms"), dict(trace_step="slowest"),
                                     dict(trace_detail="steps")])
def test_a_trace_keyword_without_a_trace_is_refused(keyword):
    # The command line refuses --trace-gzip without --trace; the module ignored it without a word.
    name = next(iter(keyword))
    with pytest.raises(hybridsim.ScenarioError, match=name + " needs trace=PATH"):
        hybridsim.run(GNMT_DP8, **keyword)


def test_without_out_nothing_is_written(tmp_path, source_dir, monkeypatch):
    # dgx1-gnmt-mp2-rules asks for a trace among its outputs: written with out=, not without.
    monkeypatch.chdir(tmp_path)
    scenario = os.path.join(source_dir, "scenarios/examples/dgx1-gnmt-mp2-rules.yaml")
    r = hybridsim.run(scenario)
    assert r.written is None and r.trace_path is None
    assert os.listdir(tmp_path) == []
    written = hybridsim.run(scenario, out=tmp_path / "out")
    assert written.written == str(tmp_path / "out") and os.path.exists(written.trace_path)


def test_collective_and_topology_speak_the_command_lines_words(cli):
    frame = hybridsim.collective("dgx1-v100", min_bytes="1 MiB", max_bytes="4 MiB", step_factor=4)
    printed = cli("collective", "--topology", "dgx1-v100", "-b", "1MiB", "-e", "4MiB", "-f", "4", "--format", "csv")
    assert frame.attrs["csv"] == printed.stdout
    assert len(frame) == 2
    report = hybridsim.topology("dgx1-v100", route=(0, 5))
    assert report == cli("topology", "dgx1-v100", "--route", "0", "5").stdout
    with pytest.raises(TypeError):
        hybridsim.collective("dgx1-v100", no_such_option=1)


def test_collective_takes_the_fabric_topology_takes(cli):
    # 8 DGX-1 machines' 32 NICs fill two leaves, so an all-to-all crosses the spines: 4:1 uplinks
    # slow it (971 us -> 1,496 us at 4 MiB). collective had neither option; the same rule as
    # topology's refuses both on one machine.
    sizes = dict(nodes=8, op="alltoall", min_bytes="4 MiB", max_bytes="4 MiB")
    full = hybridsim.collective("dgx1-v100", **sizes)
    oversubscribed = hybridsim.collective("dgx1-v100", oversubscription=4.0, **sizes)
    assert float(oversubscribed["time_us"][0]) > 1.4 * float(full["time_us"][0])
    printed = cli("collective", "-t", "dgx1-v100", "--nodes", "8", "-o", "alltoall", "-b", "4MiB", "-e", "4MiB",
                  "--oversubscription", "4", "--format", "csv", "-q")
    assert printed.stdout == oversubscribed.attrs["csv"], printed.stderr
    with pytest.raises(hybridsim.ScenarioError, match=r"^fabric needs nodes=N > 1$"):
        hybridsim.collective("dgx1-v100", fabric="rail-optimized")


def test_oversubscription_on_machines_that_fill_one_leaf_is_refused_as_the_command_line_does(cli):
    # 2 DGX H100 machines: 16 NICs, one leaf switch of 16 ports, no spine: the ratio changed nothing
    # (busbw 381.51 GB/s at 4 as at 1) and ran without a word. 3 machines fill two leaves: it applies.
    words = ("oversubscription=4: every NIC of the 2 dgx-h100 machines plugs into one leaf switch of 16 "
             "ports, so nothing crosses a spine and the ratio would change nothing; expected more machines "
             "(nodes=N) than fill one leaf")
    for function in (hybridsim.collective, hybridsim.topology):
        with pytest.raises(hybridsim.ScenarioError, match="^" + re.escape(words) + "$"):
            function("dgx-h100", nodes=2, oversubscription=4.0)
    printed = cli("collective", "-t", "dgx-h100", "--nodes", "2", "--oversubscription", "4")
    assert printed.returncode == 1
    assert printed.stderr.startswith("hybridsim collective: error: --oversubscription 4: every NIC of the 2")
    assert hybridsim.topology("dgx-h100", nodes=3, oversubscription=4.0).startswith("topology 3 × dgx-h100")


def test_topology_refuses_what_shapes_nothing_as_the_command_line_does(cli):
    # One rule in the library (api::topology), each in its own words; Python's accepted all three.
    for keywords, python_words, cli_args in [
            ({"pcie_only": True}, "pcie_only needs rings", ["--pcie-only"]),
            ({"fabric": "rail-optimized"}, "fabric needs nodes=N > 1", ["--fabric", "rail-optimized"]),
            ({"oversubscription": 2}, "oversubscription needs nodes=N > 1", ["--oversubscription", "2"])]:
        with pytest.raises(hybridsim.ScenarioError, match="^" + re.escape(python_words) + "$"):
            hybridsim.topology("dgx1-v100", **keywords)
        printed = cli("topology", "dgx1-v100", *cli_args)
        assert printed.returncode == 1
        assert printed.stderr.startswith("hybridsim topology: error: --" + cli_args[0][2:] + " needs --")
    # Given with machines to join they shape the fabric, as the command line's.
    assert hybridsim.topology("dgx1-v100", nodes=2, fabric="rail-optimized") == \
        cli("topology", "dgx1-v100", "--nodes", "2", "--fabric", "rail-optimized").stdout


def test_plan_ranks_what_the_command_line_ranks(cli):
    result = hybridsim.plan("gnmt", 8, threads=1)
    printed = cli("plan", "--model", "gnmt", "--gpus", "8", "--threads", "1", "-q")
    assert result.printed == printed.stdout
    assert result.ranked and result.ranked[0]["dp"] * result.ranked[0]["mp"] == 8


def _traced_step(path):
    import json
    with open(path, encoding="utf-8") as f:
        return json.load(f)["otherData"]["traced_step"]


def test_trace_step_by_keyword_and_by_the_scenario(tmp_path):
    # Three jittered steps: the trace shows the step asked for, the scenario's variability.trace_step
    # unless run(trace_step=) overrides it, as `--trace-step` does.
    noisy = {"variability": {"steps": 3, "kernel_jitter": 0.05}}
    slowest = hybridsim.run(GNMT_DP8, set=noisy, trace=tmp_path / "a.json", trace_step="slowest")
    # The critical GPU's count of steps, as summary.json holds it.
    assert 1 <= slowest.critical_gpu_steps <= slowest.steps == 3
    assert slowest.to_dict()["critical_gpu_steps"] == slowest.critical_gpu_steps
    assert _traced_step(slowest.trace_path).endswith("(the slowest); the run's figures are the mean of all 3")
    from_file = {"variability": dict(noisy["variability"], trace_step=2)}
    r = hybridsim.run(GNMT_DP8, set=from_file, trace=tmp_path / "b.json")
    assert _traced_step(r.trace_path).startswith("step 2 of 3;")
    r = hybridsim.run(GNMT_DP8, set=from_file, trace=tmp_path / "c.json", trace_step=3)
    assert _traced_step(r.trace_path).startswith("step 3 of 3;")
    assert _traced_step(r.trace(tmp_path / "d.json", step="first")).startswith("step 1 of 3;")
    # The scenario's own trace (outputs.trace) takes the step, and its GPUs are named in the block's
    # words; a trace asked for here names them in Python's (they said --trace-gpus all to both).
    own = hybridsim.run(GNMT_DP8, set=dict(from_file, **{"outputs.trace.gpus": "all"}), out=tmp_path / "o")
    assert _traced_step(own.trace_path).startswith("step 2 of 3;")
    import json
    with open(own.trace_path, encoding="utf-8") as f:
        assert json.load(f)["otherData"]["gpus_shown"].startswith("every GPU (outputs.trace.gpus: all)")
    mine = hybridsim.run(GNMT_DP8, trace=tmp_path / "all.json", trace_gpus="all")
    with open(mine.trace_path, encoding="utf-8") as f:
        assert json.load(f)["otherData"]["gpus_shown"].startswith("every GPU (trace_gpus='all')")
    two = {"cluster.nodes": 2, "parallelism.dp": 16}  # two alike machines: the trace is folded
    folded = hybridsim.run(GNMT_DP8, set=two, trace=tmp_path / "folded.json")
    with open(folded.trace_path, encoding="utf-8") as f:
        other = json.load(f)["otherData"]
    assert other["gpus_shown"].endswith("(the step ran folded onto them, as untraced; trace_gpus='all' for every GPU)")
    assert other["network"].endswith("(trace_gpus='all' for link utilization)")
    listed = hybridsim.run(GNMT_DP8, trace=tmp_path / "listed.json", trace_gpus="0-3")
    with open(listed.trace_path, encoding="utf-8") as f:
        assert "leave trace_gpus out to trace one GPU per class" in json.load(f)["otherData"]["gpus_shown"]
    with pytest.raises(hybridsim.ScenarioError, match="trace step \"last\""):
        hybridsim.run(GNMT_DP8, set=noisy, trace=tmp_path / "e.json", trace_step="last")


def test_study_takes_max_events_as_the_command_line(tmp_path, source_dir):
    # 5,000: above the floor of 1,500 (Inception's 750 kernels), which refuses before any cluster is built.
    with pytest.raises(hybridsim.ScenarioError, match=r"N=32 dp=32 mp=1: .* over the limit max_events = 5000; .*"
                                                      r"\(max_events=N, 0 = no limit\)"):
        hybridsim.study(os.path.join(source_dir, "scenarios/study/ci.yaml"), out=tmp_path / "s", threads=1,
                        plots=False, max_events="5000")


def test_every_function_words_a_cap_past_its_bound_alike():
    # One rule, one wording (hunt4): run() and sweep() said the scenario key's words
    # ("simulation.max_events: got ...") where plan(), study() and collective() said the command
    # line's, and those quoted an int as a str (max_events='1000000000000000001').
    words = "expected a whole number of events from 0 to 1e18 (0 or unlimited: no limit)"
    calls = [lambda v: hybridsim.run(GNMT_DP8, max_events=v),
             lambda v: hybridsim.sweep(NVLINK_SWEEP, max_events=v),
             lambda v: hybridsim.plan("gnmt", 8, max_events=v),
             lambda v: hybridsim.study(_STUDY, plots=False, max_events=v),
             lambda v: hybridsim.collective("dgx1-v100", max_events=v)]
    for call in calls:
        for value, spelled in ((10**18 + 1, "max_events=1000000000000000001"), ("lots", "max_events='lots'")):
            with pytest.raises(hybridsim.ScenarioError) as refused:
                call(value)
            assert str(refused.value) == f"{spelled}: {words}"


def test_plan_takes_max_events_and_max_sim_memory_as_the_command_line():
    # In Python's words (issue 31): the keyword, not the command line's --max-events.
    with pytest.raises(hybridsim.ScenarioError, match=r"over the limit max_events = 1000; raise it \(max_events=N"):
        hybridsim.plan("gnmt", 16, max_events="1000")
    # With the figure it takes unfolded (the memory refusal's "raise it to … or more", issue 31).
    with pytest.raises(hybridsim.ScenarioError, match=r"over the limit max_sim_memory = 1 kB; "
                                                      r"raise it to 1 MB or more \(max_sim_memory='SIZE'"):
        hybridsim.plan("gnmt", 16, max_sim_memory="1 kB")


def test_plan_lists_the_candidates_past_max_events_as_not_simulated():
    # A candidate past the cap is not ranked (plan16k4): its label is in not_simulated, and the
    # printed plan says the ranking is of the simulated ones only.
    result = hybridsim.plan("gnmt", 16, max_events=100000, threads=1)
    assert len(result.not_simulated) == 8 and len(result.ranked) == 40
    assert "gnmt N=16 dp=16 mp=1 bucket=6.25 MB" in result.not_simulated
    assert not {row["label"] for row in result.ranked} & set(result.not_simulated)
    assert "best of the simulated (8 not simulated, listed below)" in result.printed
    assert hybridsim.plan("gnmt", 8, threads=1).not_simulated == []


# Each entry point's refusals in Python's words (issue 31): the keyword as the user wrote it
# (`min_bytes='lots'`), never the command line's `--min-bytes`. A value of the wrong type is a
# TypeError naming the keyword (pybind11's listed the native signatures); a value the library cannot
# use is a ScenarioError (a ValueError), BudgetError for a cap.
_STUDY = "scenarios/study/ci.yaml"


@pytest.mark.parametrize("call, error, starts", [
    (lambda: hybridsim.collective("dgx1-v100", algorithm="x"), hybridsim.ScenarioError,
     "algorithm='x': unknown all-reduce algorithm"),
    (lambda: hybridsim.collective("dgx1-v100", min_bytes="lots"), hybridsim.ScenarioError,
     "min_bytes='lots': bad size"),
    (lambda: hybridsim.collective("dgx1-v100", min_bytes="1 MiB", max_bytes="4 B"), hybridsim.ScenarioError,
     "min_bytes='1 MiB' is above max_bytes='4 B'; expected min_bytes <= max_bytes"),
    (lambda: hybridsim.collective("dgx1-v100", max_bytes="4 TiB"), hybridsim.ScenarioError,
     "max_bytes='4 TiB' is beyond 1 TiB"),
    (lambda: hybridsim.collective("dgx1-v100", max_events="x"), hybridsim.ScenarioError,
     "max_events='x': expected a whole number"),
    (lambda: hybridsim.collective("dgx1-v100", max_sim_memory="lots"), hybridsim.ScenarioError,
     "max_sim_memory='lots': bad size"),
    (lambda: hybridsim.collective("dgx1-v100", channels=999), hybridsim.ScenarioError, "channels=999: expected"),
    (lambda: hybridsim.collective("dgx1-v100", channels=-1), hybridsim.ScenarioError, "channels=-1: expected"),
    (lambda: hybridsim.collective("dgx1-v100", protocol="x"), hybridsim.ScenarioError,
     "protocol='x': unknown protocol"),
    (lambda: hybridsim.collective("dgx1-v100", message_size="0 B"), hybridsim.ScenarioError,
     "message_size='0 B': expected a size above 0 B"),
    (lambda: hybridsim.collective("dgx1-v100", reduction_bandwidth="x"), hybridsim.ScenarioError,
     "reduction_bandwidth='x': bad"),
    (lambda: hybridsim.collective("dgx1-v100", step_factor=1), hybridsim.ScenarioError,
     "step_factor=1: expected a factor above 1"),
    (lambda: hybridsim.collective("dgx1-v100", fast_path="x"), hybridsim.ScenarioError, "fast_path='x': unknown"),
    # The command line's rule (--reduction-bandwidth needs --op allreduce or reducescatter); Python
    # took the rate beside an all-gather without a word.
    (lambda: hybridsim.collective("dgx1-v100", op="allgather", reduction_bandwidth="1 GB/s"), hybridsim.ScenarioError,
     "reduction_bandwidth='1 GB/s' needs op='allreduce' or op='reducescatter' (got op='allgather')"),
    (lambda: hybridsim.collective("dgx1-v100", op="x"), hybridsim.ScenarioError, "op='x': unknown collective"),
    (lambda: hybridsim.collective("dgx1-v100", gpus="x"), hybridsim.ScenarioError, "gpus='x': GPU list"),
    (lambda: hybridsim.collective("dgx1-v100", op="allgather", algorithm="tree"), hybridsim.ScenarioError,
     "algorithm='tree' applies only to all-reduce (op='allreduce')"),
    (lambda: hybridsim.collective("dgx1-v100", max_events=10, fast_path="off", max_bytes="8 B"),
     hybridsim.BudgetError, "the all-reduce of 8 B"),
    (lambda: hybridsim.collective("dgx1-v100", channels="x"), TypeError,
     "collective(): channels='x': expected"),
    (lambda: hybridsim.collective("dgx1-v100", nodes=None), TypeError, "collective(): nodes=None: expected"),
    (lambda: hybridsim.collective(""), hybridsim.ScenarioError, "topology='' is empty"),
    (lambda: hybridsim.collective("dgx1-v100", gpus="3"), hybridsim.ScenarioError,
     "gpus='3': 1 GPU; a collective needs at least 2 GPUs, such as gpus='0-1'"),
    (lambda: hybridsim.plan("gnmt", 16, memory="lots"), hybridsim.ScenarioError, "memory='lots': bad size"),
    (lambda: hybridsim.plan("gnmt", 16, memory=""), hybridsim.ScenarioError, "memory='' is empty"),
    (lambda: hybridsim.plan("gnmt", "x"), TypeError, "plan(): gpus='x': expected a whole number of GPUs"),
    (lambda: hybridsim.plan("gnmt", 100000000), hybridsim.ScenarioError, "gpus=100000000: more than 8192"),
    (lambda: hybridsim.plan("nope"), hybridsim.ScenarioError, "model='nope': unknown"),
    (lambda: hybridsim.plan("gnmt", 16, ib_bandwidth="x"), hybridsim.ScenarioError, "ib_bandwidth='x': bad"),
    (lambda: hybridsim.plan("gnmt", 8, ib_bandwidth="100 Gb/s"), hybridsim.ScenarioError,
     "ib_bandwidth='100 Gb/s': gpus=8 fit one dgx1-v100 machine"),
    (lambda: hybridsim.plan("gnmt", threads=-1), hybridsim.ScenarioError, "threads=-1: expected"),
    (lambda: hybridsim.plan("gnmt", top=0), hybridsim.ScenarioError, "top=0: expected at least 1"),
    (lambda: hybridsim.plan("gnmt", max_events="x"), hybridsim.ScenarioError, "max_events='x': expected"),
    (lambda: hybridsim.plan("gnmt", max_sim_memory="x"), hybridsim.ScenarioError, "max_sim_memory='x': bad"),
    (lambda: hybridsim.plan(None), TypeError, "plan(): model=None: expected"),
    (lambda: hybridsim.study(_STUDY, memory="lots"), hybridsim.ScenarioError, "memory='lots': bad size"),
    (lambda: hybridsim.study(_STUDY, max_events="x"), hybridsim.ScenarioError, "max_events='x': expected"),
    (lambda: hybridsim.study(_STUDY, max_sim_memory="x"), hybridsim.ScenarioError, "max_sim_memory='x': bad"),
    (lambda: hybridsim.study(_STUDY, threads=-1), hybridsim.ScenarioError, "threads=-1: expected"),
    (lambda: hybridsim.study(_STUDY, threads="x"), TypeError, "study(): threads='x': expected"),
    (lambda: hybridsim.study(None), TypeError, "study(): study_file=None: expected"),
    (lambda: hybridsim.run(GNMT_DP8, trace="t.json", trace_detail="x"), hybridsim.ScenarioError,
     "trace_detail: trace detail \"x\""),
    (lambda: hybridsim.run(GNMT_DP8, trace="t.json", trace_window="x"), hybridsim.ScenarioError,
     "trace_window: time window \"x\""),
    (lambda: hybridsim.run(GNMT_DP8, trace="t.json", trace_gpus="x"), hybridsim.ScenarioError,
     "trace_gpus: GPU list \"x\""),
    (lambda: hybridsim.run(GNMT_DP8, trace="t.json", trace_step="x"), hybridsim.ScenarioError,
     "trace_step: trace step \"x\""),
    (lambda: hybridsim.run(GNMT_DP8, trace=""), hybridsim.ScenarioError, "trace='' is empty"),
    (lambda: hybridsim.run(GNMT_DP8, out=""), hybridsim.ScenarioError, "out='' is empty"),
    (lambda: hybridsim.run(GNMT_DP8, trace_gzip="yes"), TypeError, "run(): trace_gzip='yes': expected True"),
    (lambda: hybridsim.run(GNMT_DP8, set={"simulation.max_events": 1000, "communication.fast_path": "off"}),
     hybridsim.BudgetError, "scenarios/dgx1/gnmt-dp8.yaml: the step would simulate"),
    (lambda: hybridsim.sweep(NVLINK_SWEEP, jobs=-1), hybridsim.ScenarioError,
     "jobs=-1: expected 0 (all cores) or positive"),
    (lambda: hybridsim.sweep(NVLINK_SWEEP, jobs="x"), TypeError, "sweep(): jobs='x': expected"),
    (lambda: hybridsim.sweep(NVLINK_SWEEP, set={"simulation.max_events": 1000}), hybridsim.BudgetError,
     "sweep point 0"),
    (lambda: hybridsim.plan("gnmt", objective="fast"), hybridsim.ScenarioError,
     "objective='fast': unknown objective \"fast\": expected time-to-train or throughput"),
    (lambda: hybridsim.plan("gnmt", variant="nope"), hybridsim.ScenarioError,
     "variant='nope': unknown statistical-efficiency curve \"gnmt/nope\""),
    (lambda: hybridsim.plan("gnmt", cluster="nope"), hybridsim.ScenarioError,
     "cluster='nope': unknown topology preset \"nope\""),
    (lambda: hybridsim.topology("nope"), hybridsim.ScenarioError,
     "preset_or_file='nope': unknown topology preset \"nope\""),
    (lambda: hybridsim.topology("dgx1-v100", nodes=2, fabric="nope"), hybridsim.ScenarioError,
     "fabric='nope': unknown fabric \"nope\""),
    (lambda: hybridsim.topology("my-box.yaml", nodes=2), hybridsim.ScenarioError,
     "nodes and gpus_per_node apply to presets, not to topology files"),
    (lambda: hybridsim.collective("nope"), hybridsim.ScenarioError, "topology='nope': unknown topology preset"),
    (lambda: hybridsim.collective("dgx1-v100", nodes=2, gpus="0,1,2,3"), hybridsim.ScenarioError,
     "gpus='0-3': all on machine 0 of the nodes=2 machines, so the collective never leaves it and the other "
     "machine changes nothing; expected GPUs on two machines or more (machine 1 holds GPUs 8-15), or nodes=1"),
    (lambda: hybridsim.topology("dgx1-v100", route=(0, 99)), hybridsim.ScenarioError,
     "route=(0, 99): GPU 99 does not exist: the topology has 8 GPUs; expected two GPU ranks from 0 to 7"),
    (lambda: hybridsim.topology("dgx1-v100", route=(3, 3)), hybridsim.ScenarioError,
     "route=(3, 3): both ends are the same GPU"),
    (lambda: hybridsim.topology("dgx1-v100", route=(0, 2**40)), hybridsim.ScenarioError,
     "route=(0, 1099511627776): far beyond any GPU"),
    (lambda: hybridsim.topology("dgx1-v100", nodes=2**40), hybridsim.ScenarioError,
     "nodes=1099511627776: far beyond any limit; expected machines"),
    (lambda: hybridsim.collective("dgx1-v100", nodes=2**40), hybridsim.ScenarioError, "nodes=1099511627776: far"),
    (lambda: hybridsim.plan("gnmt", 2**40), hybridsim.ScenarioError, "gpus=1099511627776: far beyond any limit"),
    (lambda: hybridsim.study(_STUDY, threads=2**40), hybridsim.ScenarioError, "threads=1099511627776: far"),
    (lambda: hybridsim.sweep(NVLINK_SWEEP, jobs=-2**40), hybridsim.ScenarioError, "jobs=-1099511627776: far"),
    (lambda: hybridsim.run(GNMT_DP8, trace="t.json", trace_step=5), hybridsim.ScenarioError,
     "trace_step=5: the run has 1 step (scenarios/dgx1/gnmt-dp8.yaml: variability.steps); expected first, "
     "slowest or 1 to 1"),
    (lambda: hybridsim.run(GNMT_DP8, trace="t.json", trace_gpus="0-99"), hybridsim.ScenarioError,
     "trace_gpus='0-99': GPU 8 does not exist (the topology dgx1-v100 has GPUs 0-7)"),
    (lambda: hybridsim.topology("dgx1-v100", nodes=2, oversubscription=0.5), hybridsim.ScenarioError,
     "oversubscription=0.5: expected a ratio of 1 or more"),
    (lambda: hybridsim.topology("dgx1-v100", nodes=2, oversubscription=float("inf")), hybridsim.ScenarioError,
     "oversubscription=inf: expected a ratio of 1 or more"),
    (lambda: hybridsim.run(GNMT_DP8, trace="t.json", trace_window="100 s:"), hybridsim.ScenarioError,
     "trace_window='100 s:' starts after the step, which ends at"),
    (lambda: hybridsim.plan("gnmt", 0), hybridsim.ScenarioError, "gpus=0: expected 1 GPU or more"),
    (lambda: hybridsim.collective("dgx1-v100", nodes=0), hybridsim.ScenarioError,
     "nodes=0: got 0 machines; expected a whole number from 1 to 8192"),
    (lambda: hybridsim.topology("dgx1-v100", gpus_per_node=4), hybridsim.ScenarioError,
     "gpus_per_node=4: preset dgx1-v100 has exactly 8 GPUs"),
    (lambda: hybridsim.run(GNMT_DP8, set={"parallelism.dp": 4}, trace="t.json", trace_gpus="6-7"),
     hybridsim.ScenarioError, "trace_gpus='6-7': none of these GPUs runs anything in this step (it uses GPUs 0-3)"),
    (lambda: hybridsim.topology("dgx1-v100", route="x"), TypeError, "topology(): route='x': expected"),
    (lambda: hybridsim.topology("dgx1-v100", nodes="2"), TypeError, "topology(): nodes='2': expected"),
])
def test_each_refusal_names_the_python_keyword_not_an_option(call, error, starts):
    # Each is refused before anything is simulated or written (the trace file "t.json" included).
    with pytest.raises(error) as caught:
        call()
    message = str(caught.value)
    assert starts in message, message
    assert "--" not in message, message


def test_sweep_resume_of_another_sweep_names_the_python_keywords(tmp_path):
    # A points.partial.csv of another sweep (another fingerprint) is refused before any point runs;
    # the refusal says what changed as Python spells it (set=, out=), not the command line's --set.
    (tmp_path / "points.partial.csv").write_text("# hybridsim sweep 0000000000000000, 6 points\nindex\n")
    with pytest.raises(hybridsim.ScenarioError) as caught:
        hybridsim.sweep(NVLINK_SWEEP, out=str(tmp_path), resume=True)
    message = str(caught.value)
    assert "written by another sweep" in message, message
    assert "its overlays (set=, workload=, training=, parallelism=, pipeline=)" in message, message
    assert "use another out=" in message, message
    assert "--" not in message, message


def test_sweep_points_that_fail_once_run_are_rows_and_resume_says_so_as_python_does(tmp_path):
    # A window from 250 ms: the points whose steps end before it (GNMT at dp 4 x mp 2: 225-232 ms)
    # fail once run. The first of them stopped the sweep ("sweep point 1 (...)", "rerun with
    # resume=True)"); now each is a row that says why and the others' figures are returned. A resume
    # runs them again, and its note says so as Python spells it.
    window = {"outputs.trace": {"file": "t.json", "window": "250 ms:"}}
    rows = hybridsim.sweep(NVLINK_SWEEP, window, jobs=1, out=str(tmp_path))
    why = list(rows["not_simulated"]) if hasattr(rows, "columns") else [row["not_simulated"] for row in rows]
    failed = [w.startswith("failed once run: ") and "starts after the step" in w for w in why]
    assert failed == [False, True, False, True, False, True], why
    notes = rows.attrs["notes"]
    assert [n.split(" (")[0] for n in notes] == ["sweep point 1", "sweep point 3", "sweep point 5"], notes
    again = hybridsim.sweep(NVLINK_SWEEP, window, jobs=1, out=str(tmp_path), resume=True)
    assert again.attrs["notes"][0] == "resume=True: points 1, 3, 5 failed once run before: run again"
    assert all("--" not in n for n in again.attrs["notes"])
    assert (tmp_path / "results.csv").read_text().count("\n") == 7


def test_destinations_are_checked_before_the_run_and_named_as_python_gives_them(tmp_path):
    # An out= that is a file, and a trace= that the run's own summary.json would overwrite, are
    # refused before anything is simulated or written, naming the keyword.
    (tmp_path / "file").write_text("")
    with pytest.raises(hybridsim.ScenarioError) as caught:
        hybridsim.run(GNMT_DP8, out=str(tmp_path / "file"))
    assert str(caught.value).startswith(f"out='{tmp_path / 'file'}': {tmp_path / 'file'} is a file, not a folder")
    with pytest.raises(hybridsim.ScenarioError) as caught:
        hybridsim.run(GNMT_DP8, out=str(tmp_path / "o"), trace=str(tmp_path / "o" / "summary.json"))
    assert "': the run writes its summary.json there (outputs.formats)" in str(caught.value)
    assert str(caught.value).startswith("trace='"), str(caught.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]
    # A folder where a summary goes failed after the step, leaving the trace and summary.txt.
    (tmp_path / "o" / "summary.json").mkdir(parents=True)
    with pytest.raises(hybridsim.ScenarioError) as caught:
        hybridsim.run(GNMT_DP8, out=str(tmp_path / "o"), trace=str(tmp_path / "t" / "t.json"))
    assert str(caught.value).startswith(f"out='{tmp_path / 'o'}': {tmp_path / 'o' / 'summary.json'} is a folder, "
                                        "where the run writes its summary.json"), str(caught.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file", "o"]
    assert [p.name for p in (tmp_path / "o").iterdir()] == ["summary.json"]


def test_hints_name_the_python_keywords(cli, source_dir, tmp_path):
    # plan's refusal when nothing fits, its "left out" line and study's "were memory no limit" line
    # pointed Python callers to --memory and --show-unfit, options they cannot pass.
    with pytest.raises(hybridsim.ScenarioError) as caught:
        hybridsim.plan("gnmt", 8, memory="1 GiB")
    message = str(caught.value)
    assert message.endswith("; expected a larger memory or more gpus (show_unfit=True ranks them anyway)"), message
    assert message.startswith("memory: none of the 23 configurations of gnmt on 8 GPUs"), message
    assert "--" not in message, message
    # At 4 GiB DP's 4.96 GiB does not fit; the hybrids do. (5 GiB left out only the hierarchical
    # all-reduce's extra buffers, 5.02 GiB, on one machine where it runs as the ring: the plan now
    # leaves those out as the ring's steps.)
    printed = hybridsim.plan("gnmt", 8, memory="4 GiB").printed
    assert "do not fit in memory (left out; show_unfit=True ranks them)" in printed, printed
    assert "--" not in printed, printed
    # ci.yaml's BigLSTM fits no DP configuration in 16 GiB (tests/golden/study/ci.txt).
    printed = hybridsim.study(os.path.join(source_dir, _STUDY), out=tmp_path / "s", plots=False).printed
    assert "(memory='32 GiB' checks it on GPUs of that size)" in printed, printed
    assert "memory='32 GiB' checks it" in (tmp_path / "s" / "README.md").read_text()
    # The command line keeps its own words.
    r = cli("plan", "-m", "gnmt", "--memory", "1 GiB", "-q")
    assert r.stderr.rstrip().endswith("expected a larger --memory or more --gpus (--show-unfit ranks them anyway)")


def test_a_resume_with_nothing_to_resume_says_so(cli, tmp_path):
    # A mistyped folder looked resumed: every point ran without a word.
    rows = hybridsim.sweep(NVLINK_SWEEP, out=str(tmp_path / "py"), resume=True, jobs=1)
    assert len(rows) == 6
    note = f"resume=True: nothing to resume in {tmp_path / 'py'} (no results.csv or points.partial.csv there): " \
           "every point runs"
    assert rows.attrs["notes"] == [note]
    # Resumed again, the six rows are there: no such note, and no point runs.
    assert hybridsim.sweep(NVLINK_SWEEP, out=str(tmp_path / "py"), resume=True).attrs["notes"] == []
    r = cli("sweep", NVLINK_SWEEP, "--out", str(tmp_path / "cli"), "--resume", "-q")
    assert r.returncode == 0, r.stderr
    assert f"  note: --resume: nothing to resume in {tmp_path / 'cli'} (no results.csv" in r.stdout, r.stdout


def test_a_message_size_above_every_size_says_no_chunk_is_cut(cli):
    # The title said "1 GiB messages" over sizes up to 1 MiB, as if a message were that large. No
    # chunk is cut then: the times are those of a message size of 1 MiB, the largest size.
    title = "all-reduce over 8 GPUs of dgx1-v100, auto/auto, 6 channels, 1 GiB messages (above the largest " \
            "size, 1 MiB: no chunk is cut)"
    r = cli("collective", "-t", "dgx1-v100", "--message-size", "1 GiB", "-e", "1 MiB", "-q")
    assert r.stdout.splitlines()[0] == "# hybridsim collective: " + title, r.stdout
    whole = hybridsim.collective("dgx1-v100", message_size="1 GiB", max_bytes="1 MiB")
    at_largest = hybridsim.collective("dgx1-v100", message_size="1 MiB", max_bytes="1 MiB")
    assert whole.attrs["title"] == title
    assert "no chunk is cut" not in at_largest.attrs["title"]
    assert whole.attrs["csv"].count("\n") == 19  # header and 18 sizes, 8 B to 1 MiB
    # Row by row the same but for the title (a DataFrame or, without pandas, a list of dicts).
    assert whole.attrs["csv"] == at_largest.attrs["csv"]


def test_a_name_the_overrides_made_untrue_says_what_they_set(cli):
    # cluster-hybrid-vs-dp.yaml at 16,384 GPUs printed "hybrid vs DP on 8 DGX-1 nodes".
    r = hybridsim.run(GNMT_DP8, set={"cluster.nodes": 2, "parallelism.dp": 16})
    assert r.table.splitlines()[0].endswith(" gnmt, DGX-1, dp 8 (cluster.nodes set to 2, parallelism.dp set to 16)")
    # What is written (outputs.*) and the caps (simulation.*) leave the name true; a name set is the user's.
    printed = cli("run", GNMT_DP8, "--set", "outputs.formats=[table]", "--max-events", "100000000", "-q").stdout
    assert printed.splitlines()[0].endswith(" gnmt, DGX-1, dp 8"), printed
    printed = cli("run", GNMT_DP8, "--set", "cluster.nodes=2", "--set", "name=mine", "-q").stdout
    assert printed.splitlines()[0].endswith(" mine"), printed


def test_plan_prices_a_built_in_network_for_the_presets_gpu_as_run_does():
    # plan -m gnmt -c dgx-h100 ran the V100's kernel times (304.6 ms a step) on H100 machines and
    # checked them against 80 GiB, where run (gpu: auto, the preset's GPU) says 35.6 ms. Now the
    # best 8 x 1 is run's step, within the bucket and algorithm it picks (0.1%), and says how its
    # kernel times are known.
    plan = hybridsim.plan("gnmt", 8, cluster="dgx-h100", objective="throughput")
    run = hybridsim.run(GNMT_DP8, set={"cluster.preset": "dgx-h100"})
    assert plan.ranked[0]["step_time_ps"] < 100e9, plan.printed
    assert abs(plan.ranked[0]["step_time_ps"] / run.step_time_ps - 1) < 1e-3
    assert "\nGPU, precision H100 (H100-SXM5-80GB), fp32: kernel times are an ESTIMATE" in plan.printed
    # On the calibrated V100 no such line (the plans printed before are unchanged).
    assert "GPU, precision" not in hybridsim.plan("gnmt", 8, objective="throughput").printed


def test_an_empty_overlay_value_is_refused_and_default_removes_the_key(cli):
    # An empty value removed the key without a word (the command line's --set k=$UNSET ran the
    # default); hybridsim.DEFAULT says it out loud, as null does on the command line.
    with pytest.raises(hybridsim.ScenarioError) as caught:
        hybridsim.run(GNMT_DP8, set={"cluster.nodes": ""})
    assert str(caught.value) == ("set={'cluster.nodes': ''}: the value is empty; expected a value, or "
                                 "set={'cluster.nodes': hybridsim.DEFAULT} to remove the key (its default again)")
    # The file's dp is 8; the key removed, its default 1, as the command line's =null.
    assert hybridsim.run(GNMT_DP8, set={"parallelism.dp": hybridsim.DEFAULT}).dp == 1
    assert hybridsim.run(GNMT_DP8, parallelism=hybridsim.Parallelism(dp=hybridsim.DEFAULT)).dp == 1
    assert cli("run", GNMT_DP8, "--set", "parallelism.dp=null", "-q").returncode == 0


def test_none_in_set_is_refused_where_a_sections_none_keeps_the_files_value():
    # Main took set={'parallelism.dp': None} as null (dp 1), where Parallelism(dp=None) is "not
    # given" (the file's dp 8): a script passing an unset option's None got dp 1 without a word.
    assert hybridsim.run(GNMT_DP8, parallelism=hybridsim.Parallelism(dp=None)).dp == 8
    with pytest.raises(hybridsim.ScenarioError) as caught:
        hybridsim.run(GNMT_DP8, set={"parallelism.dp": None})
    assert str(caught.value) == (
        "set={'parallelism.dp': None}: parallelism.dp: None could mean the scenario's value (a section's "
        "field None leaves it) or the key's default (--set parallelism.dp=null); expected "
        "set={'parallelism.dp': hybridsim.DEFAULT} to remove the key (its default again), or the key "
        "left out to keep the scenario's value")
    assert caught.value.given == "set={'parallelism.dp': None}"
    assert caught.value.field == "parallelism.dp"
    # Inside a mapping, which replaces the whole section, None is YAML's null (nothing is kept):
    # {dp: null} is the key absent, dp 1, and DEFAULT there says the same.
    assert hybridsim.run(GNMT_DP8, set={"parallelism": {"dp": None}}).dp == 1
    assert hybridsim.run(GNMT_DP8, set={"parallelism": {"dp": hybridsim.DEFAULT, "mp": 2}}).mp == 2
    assert repr(hybridsim.DEFAULT) == "hybridsim.DEFAULT"
    assert hybridsim.Parallelism(dp=hybridsim.DEFAULT).overlays() == ["parallelism.dp=null"]


def test_an_empty_option_is_refused_as_the_command_lines(tmp_path):
    # `--trace-gpus ""`, `--max-events ""`, `collective --gpus ""` and the like (an unset shell
    # variable) are refused by the command line; main's Python took each '' as "not given" and ran
    # (every class of GPUs traced, the default cap, every GPU in the collective), exit 0.
    trace = tmp_path / "t.json"
    cases = [
        (lambda: hybridsim.run(GNMT_DP8, trace=trace, trace_gpus=""), "trace_gpus='' is empty"),
        (lambda: hybridsim.run(GNMT_DP8, trace=trace, trace_window=""), "trace_window='' is empty"),
        (lambda: hybridsim.run(GNMT_DP8, trace=trace, trace_step=""), "trace_step='' is empty"),
        (lambda: hybridsim.collective("dgx1-v100", gpus="", max_bytes="8 B"), "gpus='' is empty"),
        (lambda: hybridsim.plan("gnmt", 8, max_events=""), "max_events='' is empty"),
        (lambda: hybridsim.plan("gnmt", 8, max_sim_memory=""), "max_sim_memory='' is empty"),
        (lambda: hybridsim.study(_STUDY, out=tmp_path / "s", plots=False, max_events=""), "max_events='' is empty"),
        (lambda: hybridsim.study(_STUDY, out=tmp_path / "s", plots=False, max_sim_memory=""),
         "max_sim_memory='' is empty"),
    ]
    for call, starts in cases:
        with pytest.raises(hybridsim.ScenarioError) as e:
            call()
        assert str(e.value).startswith(starts)
    assert not trace.exists() and not (tmp_path / "s").exists()
    # Left out (None), each is the default, as an option left out is.
    assert len(hybridsim.collective("dgx1-v100", max_bytes="8 B")) == 1
    r = hybridsim.run(GNMT_DP8)
    with pytest.raises(hybridsim.ScenarioError, match="^gpus='' is empty"):
        r.trace(trace, gpus="")
    assert r.trace(trace, gpus="0-1") == str(trace)


def test_run_and_sweep_take_the_command_lines_shorthands(tmp_path):
    # `run --memory`, `--max-events`, `--max-sim-memory`, `--model-threads` (and sweep's) are
    # `--set cluster.gpu_memory=...` and the simulation caps; main's run() and sweep() had none of
    # them (TypeError), though study() and plan() take memory= and max_events= by these names.
    shorthand = hybridsim.run(GNMT_DP8, memory="3 GiB", max_events=10**9, model_threads=1)
    plain = hybridsim.run(GNMT_DP8, set={"cluster.gpu_memory": "3 GiB", "simulation.max_events": 10**9,
                                         "simulation.model_threads": 1})
    assert shorthand.json == plain.json
    # GNMT dp 8 needs about 5 GiB a GPU: 3 GiB does not hold it.
    assert shorthand.memory_capacity_bytes == 3 * 2**30 and not shorthand.fits_memory
    with pytest.raises(hybridsim.ScenarioError, match=r"^memory='lots': cluster.gpu_memory: got \"lots\""):
        hybridsim.run(GNMT_DP8, memory="lots")
    with pytest.raises(hybridsim.ScenarioError, match=r"^max_events=1000: simulation.max_events is set twice"):
        hybridsim.run(GNMT_DP8, set={"simulation.max_events": 5}, max_events=1000)
    with pytest.raises(hybridsim.BudgetError, match="over the limit simulation.max_memory = 1 KiB"):
        hybridsim.run(GNMT_DP8, max_sim_memory="1 KiB")
    with pytest.raises(hybridsim.ScenarioError, match="^memory='' is empty"):
        hybridsim.run(GNMT_DP8, memory="")
    import csv
    import io
    rows = list(csv.DictReader(io.StringIO(hybridsim.sweep(NVLINK_SWEEP, memory="3 GiB",
                                                           out=tmp_path / "s").attrs["csv"])))
    assert len(rows) > 1 and {int(r["memory_capacity_bytes"]) for r in rows} == {3 * 2**30}


# The command line's options that Python spells otherwise or has no use for, each with its reason.
_CLI_ONLY = {
    "*": {"help": "Python's help()", "quiet": "progress=", "format": "RunResult.table and .json, collective's attrs"},
    "run": {"scenario": "the first argument"},
    "sweep": {"scenario": "the first argument", "shard": "an MPI or job-array split; merge joins the shards",
              "plot-metric": "the DataFrame is the plot's data"},
    "study": {"study": "the first argument, study_file", "no-plots": "plots=False",
              "no-ib-sensitivity": "ib_sensitivity=False"},
    # A named transformer is the command line's plan only (plan() refuses it, saying so).
    "plan": {"gpu": "transformers", "global-batch": "transformers", "critical-batch": "transformers",
             "simulate": "transformers"},
    "collective": {},
}


@pytest.mark.parametrize("command", ["run", "sweep", "study", "plan", "collective"])
def test_every_option_of_the_command_line_is_a_keyword_by_its_name(cli, command):
    # Main's run() and sweep() lacked --memory, --max-events, --max-sim-memory and --model-threads,
    # and collective() called --reduction-bandwidth `reduction`.
    import inspect
    options = set(re.findall(r"^\s+(?:-\w \[ )?--([a-z][a-z-]*)", cli(command, "--help").stdout, re.M))
    assert len(options) >= 5, options
    function = getattr(hybridsim, command)
    keywords = set(inspect.signature(function).parameters)
    if command == "collective":
        keywords |= set(hybridsim._COLLECTIVE_KEYWORDS)
    skipped = dict(_CLI_ONLY["*"], **_CLI_ONLY[command])
    missing = sorted(o for o in options - set(skipped) if o.replace("-", "_") not in keywords)
    assert missing == []


def test_study_help_gives_the_llm_study_its_own_events_default(cli):
    # hunt6: `study --help` said "default 2000000000" for --max-events, but an LLM study's candidates
    # run under the transformer planner's 2e7 (its table's rows say "over the limit --max-events =
    # 2e7"): the help gave a default a hundred times too large for that kind of file.
    text = " ".join(cli("study", "--help").stdout.split())
    assert "default 2000000000" in text
    assert "an LLM study's candidates: 20000000" in text


# A dict scenario (or a set= value that is a dict) holding a value YAML has no word for was refused
# by json.dumps ("Object of type Decimal is not JSON serializable"), naming neither the key nor what
# was expected; a path (pathlib.Path, as for workload.profile) is its text, as in a file.
@pytest.mark.parametrize("call, names", [
    (lambda: hybridsim.run({"cluster": {"preset": "dgx1-v100"}, "workload": {"network": "gnmt"},
                            "parallelism": {"dp": decimal.Decimal(8)}}),
     "run(): scenario['parallelism']['dp']: a Decimal"),
    (lambda: hybridsim.sweep({"cluster": {"preset": "dgx1-v100"}, "workload": {"network": "gnmt"},
                              "sweep": {"parameters": [{"path": "parallelism.dp", "values": [1, {2}]}]}}),
     "sweep(): scenario['sweep']['parameters'][0]['values'][1]: a set"),
    (lambda: hybridsim.run(GNMT_DP8, set={"parallelism": {"dp": 4, "mp": fractions.Fraction(2)}}),
     "run(): set={'parallelism': {'dp': 4, 'mp': Fraction(2, 1)}}: ['mp']: a Fraction"),
])
def test_a_dict_value_yaml_cannot_hold_is_a_type_error_naming_its_key(call, names):
    with pytest.raises(TypeError) as caught:
        call()
    assert str(caught.value).startswith(names + " is not a value a scenario holds; expected a str")


def test_a_path_in_a_dict_scenario_is_its_text(source_dir):
    profile = pathlib.Path(source_dir) / "workloads" / "profiles" / "v100" / "inception_v3.yaml"
    scenario = {"cluster": {"preset": "dgx1-v100"}, "workload": {"profile": profile}, "parallelism": {"dp": 2}}
    by_path = hybridsim.run(scenario)
    by_text = hybridsim.run({**scenario, "workload": {"profile": str(profile)}})
    assert by_path.step_time_ps == by_text.step_time_ps > 0


# A path with a NUL character reached the library as a C string, cut at the NUL: the file before it
# ran (exit 0, another file's answer) where Python's own open() raises "embedded null byte".
@pytest.mark.parametrize("call, keyword", [
    (lambda: hybridsim.run(GNMT_DP8 + "\0.bak"), "scenario"),
    (lambda: hybridsim.sweep("scenarios/examples/dgx1-nvlink-sweep.yaml\0x"), "scenario"),
    (lambda: hybridsim.run(GNMT_DP8, out="out/x\0y"), "out"),
    (lambda: hybridsim.study("scenarios/study/ci.yaml\0x"), "study_file"),
])
def test_a_path_with_a_nul_character_is_refused(call, keyword):
    with pytest.raises(hybridsim.ScenarioError, match=f"^{keyword}=.*: a path with a NUL character"):
        call()


def test_a_sweep_with_a_point_the_loader_refuses_returns_the_others_and_names_it(tmp_path):
    # GNMT at dp 8: global batch 1024 is one micro-batch, so last-micro-batch is refused there; the
    # whole sweep was refused. Python returns the table (the command line exits 1 after writing it).
    grid = {"sweep": {"parameters": [
        {"path": "training.global_batch", "values": [1024, 2048]},
        {"path": "communication.exchange", "values": ["every-micro-batch", "last-micro-batch"]}]}}
    rows = hybridsim.sweep(GNMT_DP8, grid, jobs=1, out=str(tmp_path))
    why = list(rows["not_simulated"]) if hasattr(rows, "columns") else [row["not_simulated"] for row in rows]
    assert [w.startswith("refused: sweep value communication.exchange=last-micro-batch") for w in why] == \
        [False, True, False, False], why
    assert any(n.startswith("sweep point 1 (") and "refused" in n for n in rows.attrs["notes"])
    assert (tmp_path / "results.csv").read_text().count("\n") == 5
