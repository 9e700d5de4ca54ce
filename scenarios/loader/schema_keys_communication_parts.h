// The scenario table's part for the `communication` and `training` sections (gradient collectives and the
// network model; what training to a target costs): a slice of the one declaration of every key, in table
// order. schema_table.cpp assembles the table from the parts; they are files of their own only to keep each a
// readable size. Internal to scenarios/loader.
#pragma once
#include "scenarios/loader/efficiency_points.h"
#include "scenarios/loader/schema_keys_common_parts.h"

namespace hybridsim::scenarios::schema_keys {

inline constexpr ScenarioKey kCommunication[] = {
    {{.path = "communication", .kind = K::Section, .help = "Gradient collectives and the network model."}},
    {shared_keys::kAlgorithm, bind<Member<&Scenario::communication, &CommunicationSettings::algorithm>>()},
    {{.path = "communication.protocol",
      .kind = K::Choice,
      .default_text = "auto",
      .choices = "auto|ll|ll128|simple|ideal",
      .help = "NCCL protocol of the gradient collectives: auto, NCCL's choice per call; ll, ll128, "
              "simple: fixed (their bandwidth factors and latencies from NCCL's model; ll128 only where "
              "NCCL enables it, NVLink inside the machine, else refused); ideal: "
              "links at line rate with only their own latencies (the alpha-beta model). "
              "Model-parallel copies always move at line rate; expert all-to-alls run Simple under "
              "ll and ll128 (NCCL's point-to-point sends; the run says so)."},
     bind<Member<&Scenario::communication, &CommunicationSettings::protocol>>()},
    {{.path = "communication.channels",
      .kind = K::Integer,
      .default_text = "auto",
      .words = "auto",
      .min = 1,
      .max = sim::limits::kChannels.value,
      .help = "Rings per collective; auto: as NCCL would (DGX-1: 6 on one machine, one per NIC "
              "across machines)."},
     bind<Member<&Scenario::communication, &CommunicationSettings::channels>>()},
    {shared_keys::kMessageSize,
     bind<Member<&Scenario::communication, &CommunicationSettings::message_size>>()},
    {shared_keys::kBucketSize, bind<Member<&Scenario::communication, &CommunicationSettings::bucket_size>>()},
    {{.path = "communication.reduction_bandwidth",
      .kind = K::Rate,
      .default_text = "auto",
      .words = "auto|off",
      .min = 0,
      .min_exclusive = true,
      .help = "A receiving rank reduces bytes at this rate; auto: a quarter of the simulated GPU's HBM "
              "peak, as the add reads two buffers and writes one (V100 900 GB/s: 225 GB/s; A100 80GB "
              "2,039: 509.75; A100 40GB 1,555: 388.75; H100 3,350: 837.5; H200 4,800: 1,200; a GPU not "
              "in the table: the V100's); off: free."},
     bind<Member<&Scenario::communication, &CommunicationSettings::reduction_bandwidth>,
          ReductionBandwidthCodec>()},
    {{.path = "communication.switching",
      .kind = K::Choice,
      .default_text = "cut-through",
      .choices = "cut-through|store-and-forward",
      .help = "cut-through: a message's head moves on after one link latency; store-and-forward: "
              "each hop waits for the whole message."},
     bind<Member<&Scenario::communication, &CommunicationSettings::switching>>()},
    {shared_keys::kFastPath,
     bind_unless_default<Member<&Scenario::communication, &CommunicationSettings::fast_path>>()},
    {{.path = "communication.compute_contention",
      .kind = K::Choice,
      .default_text = "on",
      .choices = "on|off",
      .help = "on: while a collective runs on a GPU, its kernels hold one SM per channel (compute-bound "
              "kernels get the rest) and its memory traffic shares HBM with memory-bound kernels "
              "(sim/README.md); off: kernels never slow down beside communication."},
     bind<Member<&Scenario::communication, &CommunicationSettings::compute_contention>>()},
    {{.path = "communication.gradient_copies",
      .kind = K::Choice,
      .default_text = "on",
      .choices = "on|off",
      .help = "on: each data-parallel gradient bucket (or sparse gather) is copied into a flat buffer "
              "before its collective and back after it, as PyTorch DDP and Horovod do: 2 passes over "
              "its bytes each way at the GPU's memory-bound kernel bandwidth (workloads/README.md); "
              "off: gradients are the buckets (DDP's gradient_as_bucket_view; refused with "
              "communication.ddp: apex, which always copies)."},
     bind<Member<&Scenario::communication, &CommunicationSettings::gradient_copies>>()},
    {shared_keys::kDdp, bind<Member<&Scenario::communication, &CommunicationSettings::ddp>>()},
    {{.path = "communication.exchange",
      .kind = K::Choice,
      .default_text = "every-micro-batch",
      .choices = "every-micro-batch|last-micro-batch",
      .help = "With gradient accumulation (training.global_batch): all-reduce after every "
              "micro-batch (apex DDP; PyTorch DDP by default) or only after the last one (PyTorch "
              "DDP's no_sync on the others). last-micro-batch without accumulation (one micro-batch, "
              "the last) is refused; so is every-micro-batch written with parallelism.pp > 1 or zero 1, "
              "which exchange once after the last (a pipeline's flush; ZeRO-1's one reduce-scatter), "
              "and last-micro-batch with zero 2 or 3, which reduce-scatter every micro-batch's."},
     bind<Member<&Scenario::communication, &CommunicationSettings::exchange_every_micro_batch>>()},
    {{.path = "communication.pcie_only",
      .kind = K::Boolean,
      .default_text = "false",
      .help = "Keep collectives and model-parallel transfers off NVLink (PCIe and the network only)."},
     bind<Member<&Scenario::communication, &CommunicationSettings::pcie_only>>()},

    {{.path = "training",
      .kind = K::Section,
      .help = "Statistical efficiency, for time-to-train projections."}},
    {{.path = "training.network",
      .kind = K::Text,
      .default_text = "auto",
      .words = "auto",
      .help = "Whose built-in efficiency curve and dataset to use (gnmt, inception-v3, biglstm; inception_v3 "
              "is read as inception-v3); "
              "auto: the workload's network. A network of another family than the workload (a 2017 network's "
              "curve on a transformer, or the reverse) is refused."},
     bind<Member<&Scenario::training, &TrainingSettings::network>>()},
    {{.path = "training.efficiency",
      .kind = K::NameOrSection,
      .default_text = "default",
      .type_doc = "a curve variant name or a mapping",
      .help = "Epochs to the quality target as a function of the global batch: a built-in variant "
              "(default, optimistic, pessimistic, or a network's extra such as measured or "
              "lars_v06), or {e_min, b_noise} (McCandlish et al.: epochs = e_min × (1 + B / "
              "b_noise)), or {table: [[B, epochs], ...]}. A curve the network does not have, or a training "
              "key written for a network without one, is refused (no time to train); left at default, such "
              "a network has no time to train."},
     bind<Member<&Scenario::training, &TrainingSettings::efficiency>, EfficiencyCodec>()},
    {{.path = "training.efficiency.e_min",
      .kind = K::Number,
      .min = 0,
      .max = kMaxEpochs,
      .min_exclusive = true,
      .help = "Parametric form: epochs at a small batch."}},
    {{.path = "training.efficiency.b_noise",
      .kind = K::Number,
      .min = 0,
      .min_exclusive = true,
      .help = "Parametric form: the gradient noise scale, in samples."}},
    {{.path = "training.efficiency.table",
      .kind = K::List,
      .type_doc = "a list of [global batch, epochs]",
      .help = "Measured points, batches strictly increasing (at least two); interpolated in log-log."}},
    {{.path = "training.efficiency.table[]",
      .kind = K::Any,
      .type_doc = "[global batch, epochs]",
      .help = "One measured point: a whole batch >= 1 and epochs > 0, at most 1,000,000."}},
    {{.path = "training.efficiency.min_batch",
      .kind = K::Integer,
      .default_doc = "table: its first batch",
      .min = 1,
      .max = 1e15,
      .help = "The smallest global batch the curve is supported on (outside: flagged as "
              "extrapolated)."}},
    {{.path = "training.efficiency.max_batch",
      .kind = K::Integer,
      .default_doc = "table: its last batch",
      .min = 1,
      .max = 1e15,
      .help = "The largest supported global batch."}},
    {{.path = "training.dataset_samples",
      .kind = K::Integer,
      .default_text = "auto",
      .words = "auto",
      .min = 1,
      .max = 1e15,
      .help = "Samples per epoch; auto: the built-in dataset of training.network."},
     bind<Member<&Scenario::training, &TrainingSettings::dataset_samples>>()},
    {{.path = "training.global_batch",
      .kind = K::Integer,
      .default_text = "auto",
      .words = "auto",
      .min = 1,
      .max = static_cast<double>(kMaxGlobalBatch),
      .help = "Samples per optimizer update over all workers; a multiple of batch per worker x dp: "
              "the quotient is the micro-batches each worker runs per step (gradient accumulation, "
              "mp = 1 only); auto: batch per worker x dp (no accumulation)."},
     bind<Member<&Scenario::training, &TrainingSettings::global_batch>>()},
    {{.path = "training.micro_batch",
      .kind = K::Integer,
      .default_text = "1",
      .min = 1,
      .max = 1e6,
      .help = "Transformers: sequences per micro-batch per data-parallel replica (training.global_batch "
              "sets the micro-batches per step). The 2017 networks: workload.batch_per_worker."},
     bind_unless_default<Member<&Scenario::training, &TrainingSettings::micro_batch>>()},
    {{.path = "training.recompute",
      .kind = K::Choice,
      .default_text = "none",
      .choices = "none|selective|full",
      .help = "Transformers' activation recomputation: selective (attention's softmax and dropout; "
              "nothing under workload.model.attention: flash, which never stores them: the run says so "
              "in a note) or full (each layer's forward again in backward)."},
     bind_unless_default<Member<&Scenario::training, &TrainingSettings::recompute>>()},
};

}  // namespace hybridsim::scenarios::schema_keys
