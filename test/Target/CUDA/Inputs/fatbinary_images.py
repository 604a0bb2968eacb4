"""Lists the images of the fatbinary a CUDA program's object embeds as
`sinter_cuda_module`: each as KIND sm_NN, a cubin's check that it is ELF.

    python3 fatbinary_images.py STEPS.o

The fatbinary is a 16-byte header (magic 0xBA55ED50, version, header size,
images' bytes) and its images, each a header (kind: 1 PTX, 2 cubin; its
header size; its payload's size; the chip at byte 28) and the payload.
"""
import struct
import subprocess
import sys


def symbol_bytes(obj, name):
    """The bytes of symbol `name` of the relocatable object `obj`."""
    sections = {}
    for line in subprocess.run(["readelf", "-SW", obj], capture_output=True,
                               text=True, check=True).stdout.splitlines():
        fields = line.replace("[ ", "[").split()
        if fields and fields[0].startswith("[") and fields[0].strip("[]").isdigit():
            # [Nr] Name Type Address Off ...; the null section has no name.
            offset = fields[4] if len(fields) > 5 and fields[1] != "NULL" else "0"
            sections[int(fields[0].strip("[]"))] = int(offset, 16)
    for line in subprocess.run(["readelf", "-sW", obj], capture_output=True,
                               text=True, check=True).stdout.splitlines():
        fields = line.split()
        if len(fields) == 8 and fields[7] == name:
            value, size, section = int(fields[1], 16), int(fields[2], 0), int(fields[6])
            with open(obj, "rb") as f:
                f.seek(sections[section] + value)
                return f.read(size)
    sys.exit(f"FAIL: {obj} has no symbol {name}")


def main():
    data = symbol_bytes(sys.argv[1], "sinter_cuda_module")
    magic, _, header, size = struct.unpack_from("<IHHQ", data, 0)
    if magic != 0xBA55ED50 or header + size > len(data):
        sys.exit(f"FAIL: not a fatbinary (magic {magic:#x}, {len(data)} bytes)")
    images, at = [], header
    while at < header + size:
        kind, _, image_header, payload = struct.unpack_from("<HHIQ", data, at)
        chip = struct.unpack_from("<I", data, at + 28)[0]
        body = data[at + image_header:at + image_header + payload]
        if kind == 2:
            images.append(f"cubin sm_{chip}" + (" (ELF)" if body[:4] == b"\x7fELF" else " (not ELF)"))
        else:
            images.append(f"{'ptx' if kind == 1 else f'kind {kind}'} sm_{chip}")
        at += image_header + payload
    print(", ".join(images))


if __name__ == "__main__":
    main()
