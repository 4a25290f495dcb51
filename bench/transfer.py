"""Benchmark: what a page's result costs to cross back from a normaliser worker, per page.

    python -m bench.transfer --records 20000 --page-size 100 --repeat 3

Normalises synthetic reservation details (`bench.normalise`, ~13 lake rows a record) into
`PageResult`s, then times, in CPU seconds of this process, pickling them as the worker pool
does (`ForkingPickler.dumps`, in the worker) and unpickling them (`pickle.loads`, in the run's
process): the result as it is (Arrow tables pickled one by one) against `workers.shipped` (its
tables as Arrow IPC streams). The two alternate within each repeat.
"""

from __future__ import annotations

import argparse
import pickle
import random
import time
from multiprocessing.reduction import ForkingPickler

from assets import workers
from assets.catalogue import SPECS
from assets.normalise import Normaliser
from bench.normalise import POOL, Pages, synthetic_record
from lake.parts import new_batch_id


def _time(results: list[workers.PageResult]) -> tuple[float, float, int]:
    """CPU ms per page to pickle and to unpickle, and bytes per page."""
    t0 = time.process_time()
    blobs = [bytes(ForkingPickler.dumps(r)) for r in results]
    dumps = time.process_time() - t0
    t0 = time.process_time()
    for blob in blobs:
        pickle.loads(blob)
    loads = time.process_time() - t0
    n = len(results)
    return dumps * 1000 / n, loads * 1000 / n, sum(map(len, blobs)) // n


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--page-size", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    spec = next(s for s in SPECS if s.name == "reservations")
    rng = random.Random(7)
    pool = [synthetic_record(rng, i) for i in range(POOL)]
    normaliser = Normaliser(spec, batch_id=new_batch_id())
    pages = Pages(pool, args.records, page_size=args.page_size)
    plain = [workers.PageResult(None, normaliser.normalise(p, at)) for p, at in pages]
    shipped = [workers.shipped(r) for r in plain]
    print(f"{len(plain)} pages of {args.page_size} reservation details (CPU ms a page)")
    for _ in range(args.repeat):
        for label, results in (("pickled tables", plain), ("IPC streams", shipped)):
            dumps, loads, size = _time(results)
            print(
                f"  {label:<15} worker pickles {dumps:.3f}  run's process unpickles "
                f"{loads:.3f}  ({size:,} bytes a page)"
            )


if __name__ == "__main__":
    main()
