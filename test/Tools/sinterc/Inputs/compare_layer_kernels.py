"""Compares the LLVM dialect of one model compiled at two depths.

Prints how many functions each defines and how many calls the steps make,
and whether the deeper one defines the same functions: a repeated block's
loop nests are shared by every layer, so depth adds calls, not functions.
"""
import re
import sys


def functions_and_calls(path):
    text = open(path).read()
    defined = sorted(set(re.findall(r"llvm\.func @([\w.]+)\(", text)))
    calls = len(re.findall(r"llvm\.call @[\w.]+_loop(?:_\d+)?\(", text))
    return defined, calls


shallow, deep = (functions_and_calls(p) for p in sys.argv[1:3])
print(f"functions: {len(shallow[0])} {len(deep[0])}")
print(f"same functions: {shallow[0] == deep[0]}")
print(f"more calls when deeper: {deep[1] > shallow[1]}")
