#!/usr/bin/env python3
"""Draws one pipelined step from its hybridsim trace: a row per traced GPU (one per stage), each
micro-batch's forward and backward as a box numbered with the micro-batch, the recomputed forward
inside a backward (the lower boxes), the optimizer, and the "bubble" slices (analysis/README.md,
"What the tracks mean") as grey boxes; then runs gnuplot (pngcairo) on the script it writes.

    build/hybridsim run SCENARIO --trace step.json --trace-gpus 0,8,16,24
    python3 scenarios/examples/pipeline_picture.py step.json picture.png
"""
import json
import subprocess
import sys
import tempfile

KINDS = {  # slice category on the compute thread -> (datablock, colour)
    "micro-batch/forward": ("forward", "#4c72b0"),
    "micro-batch/backward": ("backward", "#55a868"),
    "recompute": ("recompute", "#dd8452"),
    "optimizer": ("optimizer", "#8172b3"),
    "bubble": ("bubble", "#d9d9d9"),
}


def slices(doc):
    """(pid, name, cat, start_us, end_us, depth, args) of the compute thread's (tid 1) slices."""
    open_slices, out = {}, []
    for e in doc["traceEvents"]:
        if e.get("tid") != 1 or e.get("ph") not in ("B", "E"):
            continue
        stack = open_slices.setdefault(e["pid"], [])
        if e["ph"] == "B":
            stack.append(e)
        else:
            b = stack.pop()
            out.append((e["pid"], b["name"], b.get("cat", ""), b["ts"], e["ts"], len(stack), b.get("args", {})))
    return out


def main(trace, picture):
    with open(trace, encoding="utf-8") as f:
        doc = json.load(f)
    names = {e["pid"]: e["args"]["name"] for e in doc["traceEvents"]
             if e.get("ph") == "M" and e.get("name") == "process_name"}
    found = slices(doc)
    # A row per GPU in stage order, each named with the stage its slices say (rows in the order the
    # GPUs' first slices were written put GPU 8 first as "stage 0" of an interleaved step).
    stage_of = {pid: args["stage"] for pid, _, cat, _, _, _, args in found if cat == "micro-batch"}
    traced = sorted({pid for pid, *_ in found if pid in names and names[pid].startswith("GPU")},
                    key=lambda pid: (stage_of.get(pid, len(names)), pid))
    rows = {pid: row for row, pid in enumerate(traced)}
    blocks = {kind: [] for kind, _ in KINDS.values()}
    for pid, name, cat, start, end, depth, _ in found:
        key = cat + "/" + name.split(" ")[0] if cat == "micro-batch" else cat
        if key not in KINDS or (cat == "optimizer" and depth > 0):
            continue
        if pid not in rows:
            continue
        y = rows[pid]
        # "forward · micro-batch 3" (interleaved: "... · micro-batch 3 · chunk 5"): the micro-batch
        label = name.split("micro-batch ")[1].split(" ")[0] if cat == "micro-batch" else ""
        low, high = (y + 0.05, y + 0.36) if cat == "recompute" else (y - 0.4, y + 0.4)
        blocks[KINDS[key][0]].append(f"{start / 1000:.4f} {end / 1000:.4f} {low:.2f} {high:.2f} {label}")
    ticks = ", ".join(f'"{names[pid].split(" ·")[0]} (stage {stage_of.get(pid, "?")})" {row}'
                      for pid, row in rows.items())
    script = ["set xlabel 'time in the step (ms)'",
              f"set ytics ({ticks})", f"set yrange [{len(rows) - 0.4}:-0.6]",
              "set key outside top center horizontal", "set autoscale xfix", "set style fill solid 1.0 border lc rgb '#404040'",
              "unset grid"]
    for kind, rows_of in blocks.items():
        script.append(f"${kind} << EOD\n" + "\n".join(rows_of or ["0 0 0 0 -"]) + "\nEOD")
    plots = [f"${kind} using 1:($3+$4)/2:1:2:3:4 with boxxyerror lc rgb '{colour}' title '{kind}'"
             for kind, colour in KINDS.values()]
    plots += [f"${kind} using (($1+$2)/2):($3+0.2):5 with labels font ',8' notitle"
              for kind in ("forward", "backward")]
    script.append("plot " + ", \\\n     ".join(plots))
    body = "\n".join(line for line in script if line) + "\n"
    with tempfile.NamedTemporaryFile("w", suffix=".gp", encoding="utf-8") as f:
        f.write(f"set terminal pngcairo size 1400,360 font 'DejaVu Sans,10'\nset output '{picture}'\n" + body)
        f.flush()
        subprocess.run(["gnuplot", f.name], check=True)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: pipeline_picture.py TRACE.json PICTURE.png")
    main(sys.argv[1], sys.argv[2])
