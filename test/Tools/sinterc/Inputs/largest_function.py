"""Prints the largest function of an LLVM IR file, in instructions, and
whether it is within the bound given as the second argument."""
import re
import sys

sizes = {}
name = None
for line in open(sys.argv[1]):
    if line.startswith("define "):
        name = re.search(r"@([\w.$]+)\(", line).group(1)
        sizes[name] = 0
    elif line.startswith("}"):
        name = None
    elif name and re.match(r"  \S", line) and not line.lstrip().startswith(";"):
        sizes[name] += 1

largest = max(sizes, key=sizes.get)
print(f"largest function: {largest} {sizes[largest]}")
print(f"within {sys.argv[2]}: {sizes[largest] <= int(sys.argv[2])}")
