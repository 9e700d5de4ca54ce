#!/usr/bin/env python3
"""Profiles training iterations of hybridsim's three networks with torch.profiler on one GPU and
writes Kineto Chrome traces that `hybridsim import kineto` reads.

  python3 workloads/profiling/profile_torch.py --model all --out-dir traces/
  hybridsim import kineto traces/inception_v3.json --batch 64 --unit images --out inception_v3.yaml

Networks, with the shapes of hybridsim's built-in profiles (workloads/profile_gen*.cpp):
  inception_v3  torchvision's Inception-V3 with the auxiliary head, 299x299, 1000 classes, batch 64,
                SGD with momentum
  gnmt          GNMT v2-like: 4 + 4 LSTM layers of 1024, bidirectional first encoder layer, residual
                connections from the third layer, normalized Bahdanau attention after the first
                decoder layer (its context fed to the layers above), shared 32,320-word embedding,
                classifier 1024 -> 32,320, batch 128, 24 source + 24 target tokens, Adam
  biglstm       BigLSTM-like: 2 LSTM layers of 8,192 cells projected to 1,024 (nn.LSTM proj_size),
                embedding and softmax of 793,470 words, 20 steps, batch 128, sampled softmax with
                8,192 candidates shared by the batch, Adagrad; --vocab reduces the vocabulary when the
                GPU's memory does not hold it (the full one needs about 14 GB in FP32 for the two
                tables and Adagrad's state)

The profiler runs `--wait` + `--warmup` untraced iterations, then records `--steps` iterations, each
marked ProfilerStep#N (the importer averages them), with record_shapes=True so that AccumulateGrad
ops carry the parameter shapes the importer turns into gradient sizes. Data are random tensors made
on the GPU once: the traces measure compute, not input pipelines.
Requires: torch (CUDA build), torchvision for inception_v3.
"""
import argparse
import os
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


# ---------------------------------------------------------------------------------------------
# Inception-V3

def inception_v3(args, device):
    import torchvision
    model = torchvision.models.inception_v3(weights=None, aux_logits=True, init_weights=False).to(device)
    images = torch.randn(args.batch or 64, 3, 299, 299, device=device)
    labels = torch.randint(0, 1000, (images.shape[0],), device=device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)

    def step():
        out = model(images)
        loss = F.cross_entropy(out.logits, labels) + 0.4 * F.cross_entropy(out.aux_logits, labels)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    return step, images.shape[0], "images", images.shape[0]


# ---------------------------------------------------------------------------------------------
# GNMT v2-like

class Gnmt(nn.Module):
    def __init__(self, vocab, hidden, layers, dropout=0.2):
        super().__init__()
        self.embedding = nn.Embedding(vocab, hidden, padding_idx=0)  # shared by encoder and decoder
        self.dropout = nn.Dropout(dropout)
        self.enc0 = nn.LSTM(hidden, hidden, bidirectional=True)
        self.enc1 = nn.LSTM(2 * hidden, hidden)
        self.enc_rest = nn.ModuleList(nn.LSTM(hidden, hidden) for _ in range(layers - 2))
        self.dec0 = nn.LSTM(hidden, hidden)
        self.dec_rest = nn.ModuleList(nn.LSTM(2 * hidden, hidden) for _ in range(layers - 1))
        # normalized Bahdanau attention
        self.linear_q = nn.Linear(hidden, hidden, bias=False)
        self.linear_k = nn.Linear(hidden, hidden, bias=False)
        self.linear_att = nn.Parameter(torch.empty(hidden).uniform_(-0.1, 0.1))
        self.normalize_bias = nn.Parameter(torch.zeros(hidden))
        self.normalize_scalar = nn.Parameter(torch.tensor(1.0 / hidden ** 0.5))
        self.classifier = nn.Linear(hidden, vocab)

    def attention(self, query, keys, values):
        # query: T_tgt x B x H, keys/values: T_src x B x H
        q = self.linear_q(query).transpose(0, 1).unsqueeze(2)       # B x T_tgt x 1 x H
        k = self.linear_k(keys).transpose(0, 1).unsqueeze(1)        # B x 1 x T_src x H
        v = self.linear_att / self.linear_att.norm() * self.normalize_scalar
        scores = torch.tanh(q + k + self.normalize_bias).matmul(v)  # B x T_tgt x T_src
        weights = torch.softmax(scores, dim=-1)
        return weights.bmm(values.transpose(0, 1)).transpose(0, 1)  # T_tgt x B x H

    def forward(self, src, tgt):
        x = self.dropout(self.embedding(src))
        x, _ = self.enc0(x)
        x, _ = self.enc1(self.dropout(x))
        for lstm in self.enc_rest:  # the third layer on, with residual connections
            y, _ = lstm(self.dropout(x))
            x = y + x
        memory = x
        y = self.dropout(self.embedding(tgt))
        y, _ = self.dec0(y)
        context = self.attention(y, memory, memory)
        for i, lstm in enumerate(self.dec_rest):
            z, _ = lstm(torch.cat((self.dropout(y), context), dim=2))
            y = z + y if i >= 1 else z
        return self.classifier(self.dropout(y))


def gnmt(args, device):
    vocab = args.vocab or 32320
    batch = args.batch or 128
    src_len, tgt_len = 24, 24
    model = Gnmt(vocab, 1024, 4).to(device)
    src = torch.randint(1, vocab, (src_len, batch), device=device)
    tgt = torch.randint(1, vocab, (tgt_len + 1, batch), device=device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

    def step():
        logits = model(src, tgt[:-1])
        loss = F.cross_entropy(logits.reshape(-1, vocab), tgt[1:].reshape(-1))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        optimizer.step()
    return step, batch, "tokens", batch * (src_len + tgt_len)


# ---------------------------------------------------------------------------------------------
# BigLSTM-like

class BigLstm(nn.Module):
    def __init__(self, vocab, cells, projection, layers):
        super().__init__()
        self.embedding = nn.Embedding(vocab, projection, sparse=True)
        self.lstm = nn.LSTM(projection, cells, num_layers=layers, proj_size=projection)
        self.softmax_w = nn.Embedding(vocab, projection, sparse=True)  # rows gathered per candidate
        self.softmax_b = nn.Embedding(vocab, 1, sparse=True)

    def forward(self, words, targets, samples):
        h, _ = self.lstm(self.embedding(words))                    # T x B x P
        h = h.reshape(-1, h.shape[-1])
        candidates = torch.cat((targets.reshape(-1), samples))      # true words first, then samples
        logits = h.matmul(self.softmax_w(candidates).t()) + self.softmax_b(candidates).t()
        labels = torch.arange(h.shape[0], device=h.device)         # each row's own target column
        return F.cross_entropy(logits, labels)


def biglstm(args, device):
    vocab = args.vocab or 793470
    batch = args.batch or 128
    steps, samples = 20, 8192
    model = BigLstm(vocab, 8192, 1024, 2).to(device)
    words = torch.randint(0, vocab, (steps, batch), device=device)
    targets = torch.randint(0, vocab, (steps, batch), device=device)
    optimizer = torch.optim.Adagrad(model.parameters(), lr=0.2)

    def step():
        sampled = torch.randint(0, vocab, (samples,), device=words.device)
        loss = model(words, targets, sampled)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    return step, batch, "words", batch * steps


# ---------------------------------------------------------------------------------------------

MODELS = {"inception_v3": inception_v3, "gnmt": gnmt, "biglstm": biglstm}


def profile(name, args):
    device = torch.device("cuda", args.device)
    torch.backends.cudnn.benchmark = True
    step, batch, unit, units = MODELS[name](args, device)
    path = os.path.join(args.out_dir, name + ".json")
    schedule = torch.profiler.schedule(wait=args.wait, warmup=args.warmup, active=args.steps, repeat=1)
    activities = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    torch.cuda.synchronize()
    start = time.perf_counter()
    with torch.profiler.profile(activities=activities, schedule=schedule, record_shapes=True,
                                on_trace_ready=lambda p: p.export_chrome_trace(path)) as prof:
        for _ in range(args.wait + args.warmup + args.steps):
            step()
            prof.step()
    torch.cuda.synchronize()
    seconds = (time.perf_counter() - start) / (args.wait + args.warmup + args.steps)
    print("%s: %s, %.1f ms per iteration while profiling (%.0f %s/s); trace: %s"
          % (name, torch.cuda.get_device_name(device), seconds * 1e3, units / seconds, unit, path))
    print("  hybridsim import kineto %s --batch %d --unit %s --units-per-step %d --out %s"
          % (path, batch, unit, units, os.path.join(args.out_dir, name + ".yaml")))
    del step
    torch.cuda.empty_cache()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", choices=sorted(MODELS) + ["all"], default="all")
    parser.add_argument("--out-dir", default="traces")
    parser.add_argument("--batch", type=int, default=0, help="per-GPU batch; 0: the built-in profile's")
    parser.add_argument("--vocab", type=int, default=0, help="vocabulary (gnmt, biglstm); 0: the built-in one")
    parser.add_argument("--wait", type=int, default=2, help="untraced iterations first")
    parser.add_argument("--warmup", type=int, default=2, help="iterations traced but discarded")
    parser.add_argument("--steps", type=int, default=3, help="iterations recorded (ProfilerStep#N)")
    parser.add_argument("--device", type=int, default=0)
    args = parser.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("profile_torch.py needs a CUDA GPU")
    os.makedirs(args.out_dir, exist_ok=True)
    for name in sorted(MODELS) if args.model == "all" else [args.model]:
        profile(name, args)


if __name__ == "__main__":
    main()
