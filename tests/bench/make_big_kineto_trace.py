#!/usr/bin/env python3
"""Writes a Kineto trace of about SIZE megabytes (10^6 bytes) for measuring the importer's memory:
the iteration of tests/data/kineto/make_traces.py (single GPU) repeated ProfilerStep#1, #2, ...
1 ms apart until the file reaches the size, written event by event (never whole in memory).
  python3 tests/bench/make_big_kineto_trace.py 200 /tmp/kineto-200mb.json
  /usr/bin/time -v build/hybridsim import kineto /tmp/kineto-200mb.json -o /tmp/p.yaml
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "kineto"))
import make_traces as mt  # noqa: E402


def main():
    megabytes, path = int(sys.argv[1]), sys.argv[2]
    target = megabytes * 1000 * 1000
    with open(path, "w") as f:
        f.write('{\n  "schemaVersion": 1,\n  "deviceProperties": [{"id": 0, "name": "NVIDIA A100-SXM4-40GB",'
                ' "totalGlobalMem": 42505273344}],\n  "traceEvents": [\n  ')
        t, step, first = mt.Trace(), 1, True
        while f.tell() < target:
            t.events = []
            mt.iteration(t, step, 1000 * step, 12.345)
            for e in t.events:
                f.write(("" if first else ",\n  ") + mt.dump(e))
                first = False
            step += 1
        f.write('\n  ]\n}\n')
    print("%s: %d iterations, %d bytes" % (path, step - 1, os.path.getsize(path)))


if __name__ == "__main__":
    main()
