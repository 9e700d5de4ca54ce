#!/usr/bin/env python3
"""Writes the small Kineto traces the importer's tests read (tests/unit/import_kineto_test.cpp).

They follow what torch.profiler (PyTorch 2.x, Kineto) exports: a top-level object with
deviceProperties, distributedInfo (DDP only), baseTimeNanoseconds and traceEvents, where ts and dur
are microseconds with nanosecond decimals. The model is Linear(1024→512) → ReLU → Linear(512→256) →
MSE loss, trained with SGD; every time below is chosen by hand so that the tests can derive their
expected values (see the comments there). Also three bad traces the importer must reject with a
located error: a kernel of "dur": -100, one of "dur": 9.3e12 (107 days), and an iteration with its
time reversed. Run from this folder: python3 make_traces.py
"""
import json

PID, MAIN, AUTOGRAD = 4242, 4242, 4250
COMPUTE, SIDE, NCCL = 7, 20, 30


class Trace:
    def __init__(self):
        self.events = []
        self.correlation = 100
        self.external = 1
        self.flow = 1

    def x(self, cat, name, tid, ts, dur, pid=PID, **args):
        event = {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid,
                 "ts": us(ts), "dur": us(dur)}
        if cat in ("cpu_op", "user_annotation"):
            args = {"External id": self.external, **args}
            self.external += 1
        if args:
            event["args"] = args
        self.events.append(event)
        return event

    def launch(self, tid, ts, gpu_ts, gpu_dur, kernel, cat="kernel", stream=COMPUTE, **gpu_args):
        """A runtime launch on a CPU thread and the GPU activity it starts (with its ac2g flow)."""
        corr = self.correlation
        self.correlation += 1
        call = {"kernel": "cudaLaunchKernel", "gpu_memcpy": "cudaMemcpyAsync",
                "gpu_memset": "cudaMemsetAsync"}[cat]
        self.x("cuda_runtime", call, tid, ts, 2, correlation=corr, cbid=211)
        args = {"External id": self.external - 1, "device": 0, "context": 1, "stream": stream,
                "correlation": corr, **gpu_args}
        self.events.append({"ph": "X", "cat": cat, "name": kernel, "pid": 0, "tid": stream,
                            "ts": us(gpu_ts), "dur": us(gpu_dur), "args": args})
        self.events.append({"ph": "s", "id": corr, "pid": PID, "tid": tid, "ts": us(ts),
                            "cat": "ac2g", "name": "ac2g"})
        self.events.append({"ph": "f", "id": corr, "pid": 0, "tid": stream, "ts": us(gpu_ts),
                            "cat": "ac2g", "name": "ac2g", "bp": "e"})

    def fwdbwd(self, fwd_ts, bwd_ts):
        self.events.append({"ph": "s", "id": self.flow, "pid": PID, "tid": MAIN, "ts": us(fwd_ts),
                            "cat": "fwdbwd", "name": "fwdbwd"})
        self.events.append({"ph": "f", "id": self.flow, "pid": PID, "tid": AUTOGRAD,
                            "ts": us(bwd_ts), "cat": "fwdbwd", "name": "fwdbwd", "bp": "e"})
        self.flow += 1


def us(value):
    """Microseconds with nanosecond decimals, as Kineto writes them (a JSON number)."""
    return RawNumber("%.3f" % value)


class RawNumber(float):
    def __new__(cls, text):
        obj = super().__new__(cls, float(text))
        obj.text = text
        return obj


SGEMM_TN = "ampere_sgemm_128x64_tn"
ELEMENTWISE = "void at::native::vectorized_elementwise_kernel<4, {}>(int, {}, at::detail::Array<char*, 2>)"
FOREACH = ("void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous "
           "namespace)::TensorListMetadata<2>, at::native::(anonymous namespace)::BinaryOpListAlphaFunctor"
           "<float, 2, 2, 0>, std::plus<float>, float>(at::native::(anonymous namespace)::TensorListMetadata<2>)")


def iteration(t, step, T, last_optimizer_us, ddp=None):
    """One training iteration starting at T (µs). ddp: None, or 'kernel-args' / 'cpu-args' (where
    the all-reduces' collective arguments are recorded)."""
    t.x("user_annotation", "ProfilerStep#%d" % step, MAIN, T, 1000)
    t.x("user_annotation", "Optimizer.zero_grad#SGD.zero_grad", MAIN, T + 2, 2)
    t.x("python_function", "torch/nn/modules/module.py(1511): _call_impl", MAIN, T + 5, 100)
    # forward: copy the batch in on the side stream, then the layers on the compute stream
    t.x("cpu_op", "aten::to", MAIN, T + 10, 10)
    t.x("cpu_op", "aten::_to_copy", MAIN, T + 10.5, 9)
    t.x("cpu_op", "aten::copy_", MAIN, T + 11, 8)
    t.launch(MAIN, T + 12, T + 15, 20, "Memcpy HtoD (Pageable -> Device)", cat="gpu_memcpy",
             stream=SIDE, bytes=4194304)
    if ddp:
        comm(t, ddp, "broadcast", 4, T + 21, T + 40, 2)
    t.x("cpu_op", "aten::linear", MAIN, T + 25, 20, **{"Sequence number": 0})
    t.x("cpu_op", "aten::t", MAIN, T + 25.5, 1)
    t.x("cpu_op", "aten::addmm", MAIN, T + 27, 17, **{"Sequence number": 2})
    t.launch(MAIN, T + 30, T + 37, 100, SGEMM_TN)
    t.x("cpu_op", "aten::relu", MAIN, T + 50, 10)
    t.x("cpu_op", "aten::clamp_min", MAIN, T + 50.5, 9, **{"Sequence number": 3})
    t.launch(MAIN, T + 52, T + 137, 20, ELEMENTWISE.format("at::native::launch_clamp_scalar", "float"))
    t.x("cpu_op", "aten::linear", MAIN, T + 65, 20)
    t.x("cpu_op", "aten::t", MAIN, T + 65.5, 1)
    t.x("cpu_op", "aten::addmm", MAIN, T + 67, 17, **{"Sequence number": 5})
    t.launch(MAIN, T + 70, T + 157, 80, "ampere_sgemm_64x32_sliced1x4_tn")
    t.x("cpu_op", "aten::mse_loss", MAIN, T + 90, 20, **{"Sequence number": 6})
    t.launch(MAIN, T + 95, T + 237, 10, ELEMENTWISE.format("at::native::sub_kernel", "float"))
    t.launch(MAIN, T + 100, T + 247, 6.5, "void at::native::reduce_kernel<512, 1>(at::native::ReduceOp)")
    if not ddp:  # a memset inside the iteration (zeroing the loss's accumulator), in the 0.5 us gap
        t.launch(MAIN, T + 103, T + 253.5, 0.5, "Memset (Device)", cat="gpu_memset")
    t.x("cpu_op", "aten::ones_like", MAIN, T + 115, 5)
    t.launch(MAIN, T + 116, T + 254, 2, ELEMENTWISE.format("at::native::FillFunctor<float>", "float"))
    # backward on the autograd thread
    evaluate(t, "MseLossBackward0", T + 130, 10)
    t.fwdbwd(T + 90, T + 130.5)
    t.launch(AUTOGRAD, T + 132, T + 259, 15, ELEMENTWISE.format("at::native::mse_backward", "float"))
    evaluate(t, "AddmmBackward0", T + 145, 25)
    t.fwdbwd(T + 67, T + 145.5)
    t.launch(AUTOGRAD, T + 150, T + 274, 160, "ampere_sgemm_64x32_sliced1x4_nn")
    t.launch(AUTOGRAD, T + 160, T + 400, 80, "ampere_sgemm_128x64_nt", stream=SIDE)
    accumulate(t, T + 172, [256, 512])
    accumulate(t, T + 179, [256])
    if ddp:  # DDP's hook on the last gradient of bucket 0 launches its all-reduce
        comm(t, ddp, "allreduce", 256 * 512 + 256, T + 180, T + 485, 50)
    evaluate(t, "ReluBackward0", T + 185, 10)
    t.fwdbwd(T + 50.5, T + 185.5)
    t.launch(AUTOGRAD, T + 188, T + 480, 20, ELEMENTWISE.format("at::native::threshold_backward", "float"))
    evaluate(t, "AddmmBackward0", T + 200, 20)
    t.fwdbwd(T + 27, T + 200.5)
    t.launch(AUTOGRAD, T + 205, T + 504, 100, "ampere_sgemm_128x64_nt")
    accumulate(t, T + 222, [512, 1024])
    accumulate(t, T + 227, [512])
    if ddp:
        comm(t, ddp, "allreduce", 512 * 1024 + 512, T + 228, T + 606, 100)
    # optimizer (after DDP's all-reduces when there are any)
    start = T + 709 if ddp else T + 609
    t.x("user_annotation", "Optimizer.step#SGD.step", MAIN, T + 300, 40)
    t.x("cpu_op", "aten::_foreach_add_", MAIN, T + 305, 25)
    t.launch(MAIN, T + 310, start, 30, FOREACH)
    t.x("cpu_op", "aten::_foreach_add_", MAIN, T + 331, 7)
    t.launch(MAIN, T + 333, start + 30, last_optimizer_us, FOREACH)


def evaluate(t, node, ts, dur):
    t.x("cpu_op", "autograd::engine::evaluate_function: " + node, AUTOGRAD, ts, dur)
    t.x("cpu_op", node, AUTOGRAD, ts + 0.5, dur - 1)


def accumulate(t, ts, dims):
    t.x("cpu_op", "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad", AUTOGRAD, ts, 3)
    t.x("cpu_op", "torch::autograd::AccumulateGrad", AUTOGRAD, ts + 0.5, 2,
        **{"Input Dims": [dims], "Input type": ["float"]})


def comm(t, ddp, collective, elements, ts, gpu_ts, gpu_dur):
    args = {"Collective name": collective, "In msg nelems": elements, "Out msg nelems": elements,
            "Group size": 2, "dtype": "Float", "In split size": "[]", "Out split size": "[]",
            "Process Group Name": "0", "Process Group Description": "default_pg",
            "Process Group Ranks": "[0, 1]"}
    thread = AUTOGRAD if collective == "allreduce" else MAIN
    t.x("cpu_op", "record_param_comms", thread, ts, 1.5, **args)
    kernel = ("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)"
              if collective == "allreduce" else
              "ncclDevKernel_Broadcast_RING_LL(ncclDevComm*, unsigned long, ncclWork*)")
    t.launch(thread, ts + 0.5, gpu_ts, gpu_dur, kernel, stream=NCCL,
             **(args if ddp == "kernel-args" else {}))


def write(path, t, distributed=None):
    doc = {"schemaVersion": 1,
           "deviceProperties": [{"id": 0, "name": "NVIDIA A100-SXM4-40GB", "totalGlobalMem": 42505273344,
                                 "computeMajor": 8, "computeMinor": 0, "numSms": 108}],
           "cupti_version": 18, "cuda_runtime_version": 12010}
    if distributed:
        doc["distributedInfo"] = distributed
    doc["record_shapes"] = 1
    doc["displayTimeUnit"] = "ms"
    doc["baseTimeNanoseconds"] = 1700000000000000000
    meta = [{"name": "process_name", "ph": "M", "ts": 0, "pid": PID, "tid": 0, "args": {"name": "python"}},
            {"name": "thread_name", "ph": "M", "ts": 0, "pid": PID, "tid": AUTOGRAD,
             "args": {"name": "autograd thread"}}]
    events = meta + t.events + [{"name": "Record Window End", "ph": "i", "s": "g", "pid": "", "tid": "",
                                 "ts": us(3200)}]
    lines = ",\n  ".join(dump(e) for e in events)
    head = json.dumps(doc, indent=2)[:-2]
    with open(path, "w") as f:
        f.write(head + ',\n  "traceEvents": [\n  ' + lines + '\n  ],\n  "traceName": "' + path + '"\n}\n')


def dump(value):
    if isinstance(value, RawNumber):
        return value.text
    if isinstance(value, dict):
        return "{" + ", ".join(json.dumps(k) + ": " + dump(v) for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(dump(v) for v in value) + "]"
    return json.dumps(value)


def one_kernel(dur):
    """One iteration of one CPU op that launches two kernels, the first of duration `dur` (a RawNumber)."""
    t = Trace()
    t.x("user_annotation", "ProfilerStep#1", MAIN, 1000, 100)
    t.x("cpu_op", "aten::relu", MAIN, 1010, 10)
    t.launch(MAIN, 1012, 1020, 5, ELEMENTWISE.format("at::native::launch_clamp_scalar", "float"))
    t.events[-3]["dur"] = dur  # the kernel (followed by its two ac2g flow ends)
    t.launch(MAIN, 1014, 1030, 5, "void at::native::reduce_kernel<512, 1>(at::native::ReduceOp)")
    return t


def time_reversed():
    """ProfilerStep#1 of single_gpu.json played backwards: every event's [ts, ts + dur] mirrored
    around 2500 µs, so that GPU work starts before the launches that started it."""
    t = Trace()
    iteration(t, 1, 1000, 12.345)
    for e in t.events:
        end = float(e["ts"]) + float(e.get("dur", 0))
        e["ts"] = us(2500 * 2 - end)
    return t


def main():
    t = Trace()
    t.x("cpu_op", "aten::zeros", MAIN, 900, 5)  # before profiling's first step: left out
    t.launch(MAIN, 901, 905, 1, "Memset (Device)", cat="gpu_memset")
    iteration(t, 1, 1000, 12.345)
    iteration(t, 2, 2000, 16.345)
    t.x("user_annotation", "ProfilerStep#3", MAIN, 3000, 100)  # profiling stopped: no GPU work
    t.x("cpu_op", "aten::empty", MAIN, 3010, 1)
    write("single_gpu.json", t)

    for rank, where in ((0, "kernel-args"), (1, "cpu-args")):
        t = Trace()
        iteration(t, 5, 1000, 12.345, ddp=where)
        write("ddp_rank%d.json" % rank, t, {"backend": "nccl", "rank": rank, "world_size": 2,
                                            "pg_count": 1, "nccl_version": "2.18.1"})

    write("negative_dur.json", one_kernel(RawNumber("-100")))
    write("huge_dur.json", one_kernel(RawNumber("9.3e12")))
    write("time_reversed.json", time_reversed())


if __name__ == "__main__":
    main()
