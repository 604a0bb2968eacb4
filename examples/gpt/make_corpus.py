#!/usr/bin/env python3
"""Writes a small English text corpus as byte-level tokens for examples/gpt.

    python3 make_corpus.py [OUT_DIR]     (default: data/ beside this script)

The text is the data-set descriptions that scikit-learn ships (about 43 KB),
one token per byte (vocabulary 256), as flat uint16 files in nanoGPT's
layout: train.bin (the first 90%) and val.bin (the rest).
"""
import glob
import os
import sys

import numpy as np
import sklearn.datasets


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "data")
    os.makedirs(out, exist_ok=True)
    descr = os.path.join(os.path.dirname(sklearn.datasets.__file__), "descr")
    text = b"".join(open(p, "rb").read() for p in sorted(glob.glob(descr + "/*.rst")))
    tokens = np.frombuffer(text, dtype=np.uint8).astype(np.uint16)
    split = len(tokens) * 9 // 10
    tokens[:split].tofile(os.path.join(out, "train.bin"))
    tokens[split:].tofile(os.path.join(out, "val.bin"))
    print(f"wrote {split} training and {len(tokens) - split} validation tokens to {out}")


if __name__ == "__main__":
    main()
