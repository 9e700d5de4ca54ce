#!/usr/bin/env python3
"""Writes a Kineto trace of N one-kernel iterations (a ProfilerStep#k annotation, an aten::linear op,
its cudaLaunchKernel and a gemm kernel each, 100 us apart), event by event, for measuring what the
importer holds per iteration (analysis/README.md, "Kineto import memory"):
  python3 tests/bench/make_kineto_iterations.py 400000 /tmp/kineto-400k.json
  /usr/bin/time -v build/hybridsim import kineto /tmp/kineto-400k.json -q -o /tmp/p.yaml
"""
import sys


def main():
    n, path = int(sys.argv[1]), sys.argv[2]
    with open(path, "w") as f:
        f.write('{"deviceProperties": [{"id": 0, "name": "NVIDIA A100-SXM4-40GB"}],\n"traceEvents": [\n')
        for k in range(1, n + 1):
            t = 1_000_000 + 100 * k
            f.write(("" if k == 1 else ",\n") +
                    '{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d", "pid": 1, "tid": 1, '
                    '"ts": %d, "dur": 90},\n' % (k, t))
            f.write('{"ph": "X", "cat": "cpu_op", "name": "aten::linear", "pid": 1, "tid": 1, "ts": %d, '
                    '"dur": 20},\n' % (t + 10))
            f.write('{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, '
                    '"ts": %d, "dur": 2, "args": {"correlation": %d}},\n' % (t + 12, k))
            f.write('{"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": %d, "dur": 30, '
                    '"args": {"device": 0, "stream": 7, "correlation": %d}}' % (t + 15, k))
        f.write("\n]}\n")


if __name__ == "__main__":
    main()
