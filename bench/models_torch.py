"""PyTorch versions of the examples, for the forward benchmark only."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class MLP(nn.Module):
    def __init__(self, hidden=256):
        super().__init__()
        self.fc1 = nn.Linear(64, hidden)
        self.fc2 = nn.Linear(hidden, 10)

    def forward(self, x, y):
        logits = self.fc2(F.relu(self.fc1(x)))
        return F.cross_entropy(logits, y)


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                      nn.BatchNorm2d(cout))

    def forward(self, x):
        h = F.relu(self.bn1(self.conv1(x)))
        h = self.bn2(self.conv2(h))
        return F.relu(h + (self.down(x) if self.down is not None else x))


class ResNet18(nn.Module):
    """examples/resnet/resnet.sn: CIFAR's 3x3 stem for 32x32 images,
    torchvision's 7x7 stride-2 stem and max-pooling for larger ones."""

    def __init__(self, width=64, classes=10, image=32):
        super().__init__()
        self.pooled_stem = image > 32
        self.conv1 = (nn.Conv2d(3, width, 7, 2, 3, bias=False) if self.pooled_stem else
                      nn.Conv2d(3, width, 3, 1, 1, bias=False))
        self.bn1 = nn.BatchNorm2d(width)
        layers, cin = [], width
        for stage, cout in enumerate([width, 2 * width, 4 * width, 8 * width]):
            for i in range(2):
                layers.append(BasicBlock(cin, cout, 2 if stage and i == 0 else 1))
                cin = cout
        self.layers = nn.Sequential(*layers)
        self.fc = nn.Linear(cin, classes)

    def forward(self, x, y):
        h = F.relu(self.bn1(self.conv1(x)))
        if self.pooled_stem:
            h = F.max_pool2d(h, 3, 2, 1)
        h = self.layers(h)
        return F.cross_entropy(self.fc(h.mean((2, 3))), y)


class MobileNet(nn.Module):
    """bench/models/mobilenet.sn: a 3x3 stem, depthwise-separable `blocks`
    ((input channels, output channels, stride): a depthwise 3x3 and a
    pointwise 1x1 convolution, each with batch norm and ReLU), a
    classifier."""

    def __init__(self, blocks, classes=10):
        super().__init__()

        def unit(conv, c):
            return [conv, nn.BatchNorm2d(c), nn.ReLU()]
        layers = unit(nn.Conv2d(3, 32, 3, padding=1, bias=False), 32)
        for cin, cout, stride in blocks:
            layers += unit(nn.Conv2d(cin, cin, 3, stride, 1, groups=cin, bias=False), cin)
            layers += unit(nn.Conv2d(cin, cout, 1, bias=False), cout)
        self.layers = nn.Sequential(*layers)
        self.fc = nn.Linear(blocks[-1][1], classes)

    def forward(self, x, y):
        return F.cross_entropy(self.fc(self.layers(x).mean((2, 3))), y)


class SmallCNN(nn.Module):
    """bench/models/cnn.sn: three conv-ReLU-max-pool stages, a classifier."""

    def __init__(self, classes=10):
        super().__init__()
        self.convs = nn.ModuleList([nn.Conv2d(3, 64, 3, padding=1),
                                    nn.Conv2d(64, 128, 3, padding=1),
                                    nn.Conv2d(128, 256, 3, padding=1)])
        self.fc = nn.Linear(4096, classes)

    def forward(self, x, y):
        for conv in self.convs:
            x = F.max_pool2d(F.relu(conv(x)), 2, 2)
        return F.cross_entropy(self.fc(x.flatten(1)), y)


class Block(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.ln_1 = nn.LayerNorm(dim)
        self.c_attn = nn.Linear(dim, 3 * dim)
        self.c_proj = nn.Linear(dim, dim)
        self.ln_2 = nn.LayerNorm(dim)
        self.c_fc = nn.Linear(dim, 4 * dim)
        self.mlp_proj = nn.Linear(4 * dim, dim)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.c_attn(self.ln_1(x)).split(c, dim=2)
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2)
                   for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.c_proj(y.transpose(1, 2).reshape(b, t, c))
        return x + self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))


class GPT(nn.Module):
    def __init__(self, vocab, ctx, dim, heads, layers):
        super().__init__()
        self.wte = nn.Embedding(vocab, dim)
        self.wpe = nn.Embedding(ctx, dim)
        # examples/gpt/gpt.sn's initialisers (its linears take PyTorch's
        # defaults). nn.Embedding's N(0, 1), read by the tied output layer
        # too, gives logits in the hundreds; the steps after them ran 4.6x
        # slower on subnormal floats (bench/NOTES.md 23).
        for table in (self.wte, self.wpe):
            nn.init.normal_(table.weight, 0.0, 0.02)
        self.h = nn.Sequential(*[Block(dim, heads) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(dim)

    def forward(self, idx, targets):
        t = idx.shape[1]
        x = self.wte(idx) + self.wpe(torch.arange(t, device=idx.device))
        logits = self.ln_f(self.h(x)) @ self.wte.weight.T
        return F.cross_entropy(logits.flatten(0, 1), targets.flatten(), ignore_index=-1)
