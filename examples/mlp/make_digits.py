#!/usr/bin/env python3
"""Writes scikit-learn's 8x8 digit images as .npy files for examples/mlp.

    python3 make_digits.py [OUT_DIR]     (default: data/ beside this script)

1797 images of 64 pixels scaled to [0, 1] and their labels 0-9, shuffled
with a fixed seed and split 1437 for training, 360 for evaluation.
"""
import os
import sys

import numpy as np
from sklearn.datasets import load_digits


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "data")
    os.makedirs(out, exist_ok=True)
    digits = load_digits()
    x = (digits.data / 16.0).astype(np.float32)
    y = digits.target.astype(np.int32)
    order = np.random.default_rng(0).permutation(len(x))
    x, y = x[order], y[order]
    split = 1437
    np.save(os.path.join(out, "x_train.npy"), x[:split])
    np.save(os.path.join(out, "y_train.npy"), y[:split])
    np.save(os.path.join(out, "x_test.npy"), x[split:])
    np.save(os.path.join(out, "y_test.npy"), y[split:])
    print(f"wrote {split} training and {len(x) - split} test digits to {out}")


if __name__ == "__main__":
    main()
