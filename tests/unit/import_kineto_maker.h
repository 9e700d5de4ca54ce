// Hand-made KinetoTrace values for the tests of the Kineto importer's steps: CPU events, launches
// and GPU activities added one by one, times in whole or fractional µs from 0.
//   TraceMaker m;
//   const auto op = m.cpu(KinetoCpuKind::Op, "aten::linear", 0, 10, 20);
//   m.launch(0, 12, /*gpu start*/ 15, /*dur*/ 5, "gemm");   m.trace.gpu.size() == 1
#pragma once
#include <cstdint>
#include <string>

#include "workloads/import/import_kineto_trace.h"

namespace hybridsim::testing {

struct TraceMaker {
  workloads::KinetoTrace trace;
  std::int64_t next_correlation = 1;

  TraceMaker() { trace.source = "made.json"; }

  static sim::Time us(double v) {
    return sim::Time::ps(static_cast<std::int64_t>(v * 1e6 + (v >= 0 ? 0.5 : -0.5)));
  }

  std::uint32_t name(const std::string& n) {
    for (std::uint32_t i = 0; i < trace.names.size(); ++i)
      if (trace.names[i] == n) return i;
    trace.names.push_back(n);
    return static_cast<std::uint32_t>(trace.names.size() - 1);
  }
  std::uint32_t thread(std::uint32_t t) {
    while (trace.threads.size() <= t) trace.threads.push_back("1/" + std::to_string(trace.threads.size()));
    return t;
  }
  // A CPU event; returns its index into trace.cpu.
  std::uint32_t cpu(workloads::KinetoCpuKind kind, const std::string& n, std::uint32_t th, double start_us,
                    double dur_us) {
    workloads::KinetoCpuEvent e;
    e.kind = kind;
    e.name = name(n);
    e.thread = thread(th);
    e.start = us(start_us);
    e.duration = us(dur_us);
    trace.cpu.push_back(e);
    return static_cast<std::uint32_t>(trace.cpu.size() - 1);
  }
  std::uint32_t op(const std::string& n, std::uint32_t th, double start_us, double dur_us) {
    return cpu(workloads::KinetoCpuKind::Op, n, th, start_us, dur_us);
  }
  std::uint32_t annotation(const std::string& n, double start_us, double dur_us) {
    return cpu(workloads::KinetoCpuKind::Annotation, n, 0, start_us, dur_us);
  }
  // A GPU activity without a launch record; returns its index into trace.gpu.
  std::uint32_t gpu(const std::string& n, double start_us, double dur_us, std::int64_t stream = 7,
                    int device = 0) {
    workloads::KinetoGpuActivity a;
    a.name = name(n);
    a.device = device;
    a.stream = stream;
    a.start = us(start_us);
    a.duration = us(dur_us);
    trace.gpu.push_back(a);
    return static_cast<std::uint32_t>(trace.gpu.size() - 1);
  }
  // A runtime launch on thread `th` at `launch_us` (2 µs long) and the GPU activity it starts.
  std::uint32_t launch(std::uint32_t th, double launch_us, double gpu_us, double dur_us, const std::string& n,
                       std::int64_t stream = 7, int device = 0) {
    const std::uint32_t r = cpu(workloads::KinetoCpuKind::Runtime, "cudaLaunchKernel", th, launch_us, 2);
    trace.cpu[r].correlation = next_correlation;
    const std::uint32_t g = gpu(n, gpu_us, dur_us, stream, device);
    trace.gpu[g].correlation = next_correlation++;
    return g;
  }
  // A fwdbwd flow from (thread, time) of the forward op to that of the backward op.
  void flow(std::int64_t id, std::uint32_t fwd_thread, double fwd_us, std::uint32_t bwd_thread,
            double bwd_us) {
    trace.fwdbwd.push_back({id, thread(fwd_thread), us(fwd_us), true});
    trace.fwdbwd.push_back({id, thread(bwd_thread), us(bwd_us), false});
  }
  // Collective arguments on the GPU activity `g`.
  void collective(std::uint32_t g, const std::string& name, std::int64_t elements,
                  const std::string& dtype = "Float", int group_size = 2, const std::string& ranks = "") {
    workloads::KinetoCollective c;
    c.name = name;
    c.in_elements = elements;
    c.out_elements = elements;
    c.group_size = group_size;
    c.dtype = dtype;
    c.group_ranks = ranks;
    trace.collectives.push_back(c);
    trace.gpu[g].collective = static_cast<int>(trace.collectives.size() - 1);
  }
};

}  // namespace hybridsim::testing
