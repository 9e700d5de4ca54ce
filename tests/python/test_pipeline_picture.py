"""scenarios/examples/pipeline_picture.py, the README's picture of a pipelined step: a row per traced
GPU, named with the stage its slices say, in stage order, whatever order the trace wrote them in."""
import importlib.util
import json
import pathlib
import subprocess

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "scenarios" / "examples" / "pipeline_picture.py"


def load_script():
    spec = importlib.util.spec_from_file_location("pipeline_picture", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def slice_events(pid, name, cat, start, end, args):
    return [{"ph": "B", "pid": pid, "tid": 1, "ts": start, "name": name, "cat": cat, "args": args},
            {"ph": "E", "pid": pid, "tid": 1, "ts": end}]


def test_rows_follow_the_stages_the_slices_name_not_the_order_they_were_written(tmp_path, monkeypatch):
    # An interleaved step's trace wrote stage 1's GPU 8 first (its leading bubble is written at once,
    # stage 0's first forward only once it ends): the picture named GPU 8 "stage 0" and GPU 0
    # "stage 1". Here GPU 8 (pid 9) is stage 1 and written first, GPU 0 (pid 1) stage 0.
    events = [{"ph": "M", "pid": 9, "name": "process_name", "args": {"name": "GPU 8 · node 1"}},
              {"ph": "M", "pid": 1, "name": "process_name", "args": {"name": "GPU 0 · node 0"}}]
    events += slice_events(9, "bubble", "bubble", 0, 10, {"stage": 1})
    events += slice_events(9, "forward · micro-batch 0 · chunk 1", "micro-batch", 10, 20,
                           {"micro_batch": 0, "stage": 1, "chunk": 1})
    events += slice_events(1, "forward · micro-batch 0 · chunk 0", "micro-batch", 0, 10,
                           {"micro_batch": 0, "stage": 0, "chunk": 0})
    trace = tmp_path / "step.json"
    trace.write_text(json.dumps({"traceEvents": events}), encoding="utf-8")
    scripts = []
    monkeypatch.setattr(subprocess, "run",
                        lambda args, check: scripts.append(pathlib.Path(args[1]).read_text(encoding="utf-8")))
    load_script().main(str(trace), str(tmp_path / "picture.png"))
    assert len(scripts) == 1
    assert 'set ytics ("GPU 0 (stage 0)" 0, "GPU 8 (stage 1)" 1)' in scripts[0]
    # Each box is labelled with its micro-batch, not the chunk the name ends with: GPU 8's forward,
    # from 10 to 20 us, on row 1 (y 0.6 to 1.4), reads "0".
    assert "0.0100 0.0200 0.60 1.40 0\n" in scripts[0]
