"""Small conv nets of the shapes people start with, Sinter's CPU training
step against PyTorch eager's (and torch.compile's with --compile), measured
in one run. The suite (bench/train_vs_peers.py) holds ResNet-18, a small
CNN and a MobileNet; these add what it lacks: 1-channel 28x28 images and a
dropout (PyTorch's MNIST example), 5x5 convolutions of 6 and 16 channels
(PyTorch's CIFAR-10 tutorial), batch norm after every convolution of a
VGG-style net, and stride-2 convolutions with a global average pool.

    scripts/bench.sh conv-nets [STEPS] [--models mnist,lenet,...] [--compile]

Sinter reads `synthetic {}` data, which its loader makes while the step
runs (as a benchmark written without a data set would); PyTorch steps on
one batch held in memory. Both use SGD with momentum and every core. Per
net: the median milliseconds per step from step 3 on, and the ratio (below
1: Sinter is faster). Timings are never asserted; run on an idle machine.
"""
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from sinter_build import idle_warning, sinterc_of, take_build_dir, take_models  # noqa: E402
from train_vs_peers import STEP_TIME  # noqa: E402

# name: (channels, image size, batch, the model's body in Sinter, the same
# as a PyTorch module's __init__ and forward).
NETS = {
    "mnist": (1, 28, 64, """
  h = relu(conv2d(x, 32, 3, name="conv1"))
  h = relu(conv2d(h, 64, 3, name="conv2"))
  h = dropout(max_pool2d(h, 2, 2), 0.25)
  h = dropout(relu(linear(reshape(h, [B, 9216]), 128, name="fc1")), 0.5)
  logits = linear(h, 10, name="fc2")""", """
  def __init__(s):
    super().__init__()
    s.conv1, s.conv2 = nn.Conv2d(1, 32, 3), nn.Conv2d(32, 64, 3)
    s.fc1, s.fc2 = nn.Linear(9216, 128), nn.Linear(128, 10)
  def forward(s, x):
    h = F.dropout(F.max_pool2d(F.relu(s.conv2(F.relu(s.conv1(x)))), 2), 0.25, s.training)
    return s.fc2(F.dropout(F.relu(s.fc1(h.flatten(1))), 0.5, s.training))"""),
    "lenet": (3, 32, 64, """
  h = max_pool2d(relu(conv2d(x, 6, 5, name="conv1")), 2, 2)
  h = max_pool2d(relu(conv2d(h, 16, 5, name="conv2")), 2, 2)
  h = relu(linear(reshape(h, [B, 400]), 120, name="fc1"))
  logits = linear(relu(linear(h, 84, name="fc2")), 10, name="fc3")""", """
  def __init__(s):
    super().__init__()
    s.conv1, s.conv2 = nn.Conv2d(3, 6, 5), nn.Conv2d(6, 16, 5)
    s.fc1, s.fc2, s.fc3 = nn.Linear(400, 120), nn.Linear(120, 84), nn.Linear(84, 10)
  def forward(s, x):
    h = F.max_pool2d(F.relu(s.conv2(F.max_pool2d(F.relu(s.conv1(x)), 2))), 2)
    return s.fc3(F.relu(s.fc2(F.relu(s.fc1(h.flatten(1))))))"""),
    "vgg-bn": (3, 32, 128, "".join(
        f'\n  h = relu(batch_norm(conv2d(h, {c}, 3, padding=1, bias=false, name="c{i}"),'
        f' name="b{i}"))' + ("\n  h = max_pool2d(h, 2, 2)" if i % 2 == 0 else "")
        for i, c in enumerate([32, 32, 64, 64, 128, 128], 1)).replace("(h,", "(x,", 1)
        + '\n  logits = linear(reshape(h, [B, 2048]), 10, name="fc")', """
  def __init__(s):
    super().__init__()
    layers, c = [], 3
    for i, o in enumerate([32, 32, 64, 64, 128, 128]):
      layers += [nn.Conv2d(c, o, 3, padding=1, bias=False), nn.BatchNorm2d(o), nn.ReLU()]
      layers += [nn.MaxPool2d(2)] if i % 2 else []
      c = o
    s.features, s.fc = nn.Sequential(*layers), nn.Linear(2048, 10)
  def forward(s, x):
    return s.fc(s.features(x).flatten(1))"""),
    "strided": (3, 64, 32, """
  h = relu(conv2d(x, 32, 3, stride=2, padding=1, name="c1"))
  h = relu(conv2d(h, 64, 3, stride=2, padding=1, name="c2"))
  h = relu(conv2d(h, 128, 3, stride=2, padding=1, name="c3"))
  h = relu(conv2d(h, 256, 3, stride=2, padding=1, name="c4"))
  logits = linear(global_avg_pool2d(h), 10, name="fc")""", """
  def __init__(s):
    super().__init__()
    s.convs = nn.ModuleList(nn.Conv2d(i, o, 3, 2, 1) for i, o in
                            [(3, 32), (32, 64), (64, 128), (128, 256)])
    s.fc = nn.Linear(256, 10)
  def forward(s, x):
    for conv in s.convs:
      x = F.relu(conv(x))
    return s.fc(x.mean((2, 3)))"""),
}


def sinter_step_ms(sinterc, name, steps, work):
    channels, size, batch, body, _ = NETS[name]
    with open(os.path.join(work, f"{name}.sn"), "w") as f:
        f.write(f'import "std/nn.sn"\n\nmodel net {{\n'
                f'  input x: f32[B, {channels}, {size}, {size}]\n  input y: i32[B]\n'
                f'{body}\n\n  loss cross_entropy(logits, y, reduction="mean")\n}}\n')
    config = os.path.join(work, f"{name}.pbtxt")
    with open(config, "w") as f:
        f.write(f'model: "{name}.sn"\nbatch {{ global: {batch} micro: {batch} }}\n'
                'optimizer { sgd { lr: 0.01 momentum: 0.9 } }\n'
                f'data {{ train {{ synthetic {{ }} }} }}\nsteps: {steps}\nlog {{ every: 1 }}\n')
    program = os.path.join(work, name)
    subprocess.run([sinterc, "--config", config, "-o", program], check=True)
    log = subprocess.run([program], capture_output=True, text=True, check=True).stdout
    times = [float(v) * (1 if unit == "ms" else 1000) for v, unit in STEP_TIME.findall(log)]
    return statistics.median(times[2:])


def torch_step_ms(name, steps, compiled):
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    torch.set_num_threads(os.cpu_count())
    channels, size, batch, _, module = NETS[name]
    scope = {"nn": nn, "F": F}
    exec("class Net(nn.Module):" + module, scope)
    model = scope["Net"]()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x, y = torch.randn(batch, channels, size, size), torch.randint(0, 10, (batch,))

    def step():
        opt.zero_grad(set_to_none=True)
        F.cross_entropy(model(x), y).backward()
        opt.step()
    if compiled:
        step = torch.compile(step)
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        step()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times[2:])


def main():
    args = sys.argv[1:]
    build = take_build_dir(args)
    compiled = "--compile" in args
    args = [a for a in args if a != "--compile"]
    names = take_models(args, list(NETS), NETS)
    steps = int(args[0]) if args else 20
    sinterc = sinterc_of(build)
    idle_warning()
    print(f"CPU training steps, {os.cpu_count()} threads, median of steps 3 to {steps} (ms)")
    header = f"{'net':10s} {'Sinter':>9s} {'eager':>9s} {'ratio':>6s}"
    print(header + (f" {'compile':>9s} {'ratio':>6s}" if compiled else ""))
    with tempfile.TemporaryDirectory() as work:
        for name in names:
            ours = sinter_step_ms(sinterc, name, steps, work)
            eager = torch_step_ms(name, steps, False)
            line = f"{name:10s} {ours:9.2f} {eager:9.2f} {ours / eager:6.2f}"
            if compiled:
                theirs = torch_step_ms(name, steps, True)
                line += f" {theirs:9.2f} {ours / theirs:6.2f}"
            print(line, flush=True)


if __name__ == "__main__":
    main()
