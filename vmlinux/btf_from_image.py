#!/usr/bin/env python3
"""Copies the kernel's BTF out of an uncompressed kernel image (arm64's Image).

usage: btf_from_image.py IMAGE OUT.btf

The image holds the .BTF section's bytes as they are: a btf_header (magic 0xeB9F, version 1,
hdr_len 24, type_off 0, type_len, str_off == type_len, str_len) followed by the types and the
strings. The one header that fits those rules, with a string section of at least 1 MB (the
modules' split BTF is not in the image), is the kernel's; OUT gets hdr_len + str_off + str_len
bytes from it, which `bpftool btf dump file OUT format c` reads.
"""
import struct
import sys


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: btf_from_image.py IMAGE OUT.btf")
    data = open(sys.argv[1], "rb").read()
    if data[:2] == b"\x1f\x8b":
        sys.exit(f"{sys.argv[1]} is gzip-compressed: gunzip it first")
    found = []
    at = data.find(b"\x9f\xeb\x01\x00")
    while at >= 0:
        hdr_len, type_off, type_len, str_off, str_len = struct.unpack_from("<5I", data, at + 4)
        if hdr_len == 24 and type_off == 0 and str_off == type_len and str_len >= 1 << 20:
            found.append((at, hdr_len + str_off + str_len))
        at = data.find(b"\x9f\xeb\x01\x00", at + 1)
    if len(found) != 1:
        sys.exit(f"{sys.argv[1]}: {len(found)} BTF blobs found, expected one (is it a kernel Image built with BTF?)")
    start, size = found[0]
    with open(sys.argv[2], "wb") as out:
        out.write(data[start:start + size])
    print(f"{sys.argv[2]}: {size} bytes of BTF from offset {start} of {sys.argv[1]}")


if __name__ == "__main__":
    main()
