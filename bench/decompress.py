"""Benchmark: gzip decompression of TREC-8's 129 run files, one core, by library.

irscale reads gzip runs as a stream of 16 MB pieces (``irscale.io.trec._decompressed``:
a ``decompressobj`` fed 4 MB of compressed data at a time). This times that same loop
with each zlib-compatible library installed, each in a fresh process, best and median of
``--repeat``, with versions, how each was installed and the load average:

* ``zlib``: Python's (the default);
* ``isal``: ``isal.isal_zlib`` (Intel ISA-L, ``pip install isal``);
* ``zlib_ng``: ``zlib_ng.zlib_ng`` (zlib-ng, ``pip install zlib-ng``);
* ``deflate``: libdeflate (``pip install deflate``), whole files only (no streaming): for
  comparison.

    python bench/decompress.py [--data ../shared/data] [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import textwrap
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from evaluate import BUSY, installed, load, machine  # noqa: E402  (the shared reporting of bench/)

ROOT = Path(__file__).resolve().parents[1]

STREAM = """
import json, sys, time
files = json.loads(sys.argv[1])
{imp}
def run():
    total = 0
    for path in files:
        with open(path, "rb") as f:
            d = lib.decompressobj(wbits=47)
            while raw := f.read(1 << 22):
                while raw:
                    out = d.decompress(raw, 1 << 24)
                    total += len(out)
                    if d.eof:
                        raw = d.unused_data
                        d = lib.decompressobj(wbits=47)
                    else:
                        raw = d.unconsumed_tail
            while not d.eof and (out := d.decompress(b"", 1 << 24)):
                total += len(out)
    return total
t = time.perf_counter()
n = run()
print("RESULT " + json.dumps({{"seconds": time.perf_counter() - t, "bytes": n}}))
"""

LIBRARIES = {
    "zlib": ("zlib", "import zlib as lib"),
    "isal": ("isal", "from isal import isal_zlib as lib"),
    "zlib_ng": ("zlib-ng", "from zlib_ng import zlib_ng as lib"),
}

WHOLE = """
import gzip, json, sys, time
import deflate
files = json.loads(sys.argv[1])
t = time.perf_counter()
n = sum(len(deflate.gzip_decompress(open(p, "rb").read())) for p in files)
print("RESULT " + json.dumps({"seconds": time.perf_counter() - t, "bytes": n}))
"""


def once(code: str, files: list[str]) -> dict | None:
    p = subprocess.run([sys.executable, "-c", code, json.dumps(files)], capture_output=True, text=True)
    for line in p.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    print(f"  failed: {(p.stderr.strip().splitlines() or ['?'])[-1]}")
    return None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    files = [str(f) for f in sorted((args.data / "trec8" / "runs").glob("*.gz"))]
    if not files:
        sys.exit(f"no TREC-8 runs under {args.data / 'trec8' / 'runs'} (pass --data)")
    mb = sum(os.path.getsize(f) for f in files) / 2**20
    print(f"machine: {machine()}")
    codes = {name: textwrap.dedent(STREAM.format(imp=imp)) for name, (_, imp) in LIBRARIES.items()}
    codes["deflate (whole file)"] = textwrap.dedent(WHOLE)
    dists = {**{n: d for n, (d, _) in LIBRARIES.items()}, "deflate (whole file)": "deflate"}
    for name, dist in dists.items():
        print(f"{name:22s} {'Python ' + sys.version.split()[0] if dist == 'zlib' else installed(dist)}")
    times: dict[str, list[float]] = {name: [] for name in codes}
    out_bytes = {}
    loads = [load()]
    for _ in range(args.repeat):  # the libraries take turns
        for name, code in codes.items():
            if name not in times:
                continue
            r = once(code, files)
            if r is None:
                del times[name]
                continue
            times[name].append(r["seconds"])
            out_bytes[name] = r["bytes"]
            loads.append(load())
    base = min(times["zlib"])
    print(f"\n{len(files)} files, {mb:.0f} MB gzip -> {out_bytes['zlib'] / 2**20:.0f} MB text; one core")
    print(f"{'library':22s} {'best s':>7s} {'median s':>8s} {'MB/s':>6s} {'x zlib':>7s}  runs (s)")
    for name, ts in times.items():
        assert out_bytes[name] == out_bytes["zlib"], name
        best = min(ts)
        print(
            f"{name:22s} {best:7.3f} {statistics.median(ts):8.3f} {out_bytes[name] / 2**20 / best:6.0f} "
            f"{base / best:6.2f}x  {[round(t, 3) for t in ts]}"
        )
    print(f"\nload average: before {loads[0]:.2f}, highest {max(loads):.2f}, after {loads[-1]:.2f}")
    if loads[0] > BUSY:
        print(f"WARNING: the machine was busy (load {loads[0]:.2f} > {BUSY}): these times are not results")


if __name__ == "__main__":
    main()
