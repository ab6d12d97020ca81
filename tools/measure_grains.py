"""Measures where splitting an op family over two threads starts to pay on
this machine: for each family of src/core/parallel.h's grain table, one
representative op timed at 1 and at 2 threads over sizes in powers of two,
printing the speedup per size and the smallest size at which 2 threads are
at least 10% faster. The 2-thread runs lower every grain to 1
(ember._C._set_grain_divisor), so that each size really is split. The grain
that size implies is half of it (a loop is split when it holds two grains).
Run it on a quiet machine: under load the second thread's figures mean
nothing.

    PYTHONPATH=python /usr/bin/python3 tools/measure_grains.py [--quick]"""
import argparse
import time

import ember

F = ember.nn.functional


def best(fn, budget):
    """Best time of fn in seconds over about `budget` seconds (at least 5 runs)."""
    fn()
    times, end = [], time.perf_counter() + budget
    while len(times) < 5 or time.perf_counter() < end:
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def families():
    """(family, grain name, unit, make) where make(n) returns a closure doing about n units of work."""
    def elementwise(n):
        a, b = ember.randn(n), ember.randn(n)
        return lambda: a + b

    def reduce(n):
        a = ember.randn(n)
        return lambda: a.sum()

    def rows(n):
        a = ember.randn(n // 256, 256)
        return lambda: a.softmax(1)

    def gather(n):
        table, idx = ember.randn(4096, 64), ember.randint(0, 4096, (max(n // 64, 1),))
        return lambda: table.index_select(0, idx)

    def window(n):
        side = max(int((n // 16) ** 0.5), 2)
        x = ember.randn(1, 16, side, side)
        return lambda: F.max_pool2d(x, 3, 1, 1)

    def store(n):
        a = ember.empty(n)
        return lambda: a.fill_(1.5)

    return [('elementwise (a + b)', 'EM_GRAIN', 'elements', elementwise),
            ('reduction (sum)', 'EM_GRAIN_REDUCE', 'elements', reduce),
            ('rows (softmax, rows of 256)', 'EM_GRAIN_ROWS', 'elements', rows),
            ('gather (index_select, rows of 64)', 'EM_GRAIN_GATHER', 'elements', gather),
            ('window (max_pool2d 3x3, 16 channels)', 'EM_GRAIN_WINDOW', 'outputs', window),
            ('contiguous fill', 'EM_GRAIN_STORE', 'elements', store)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--quick', action='store_true', help='few sizes, tiny budgets: checks the script only')
    args = ap.parse_args()
    sizes = [1 << k for k in (range(14, 17) if args.quick else range(12, 23))]
    budget = 0.01 if args.quick else 0.15
    saved = ember.get_num_threads()
    try:
        for name, grain, unit, make in families():
            print(f'{name}  [{grain}]')
            pays = None
            for n in sizes:
                fn = make(n)
                ember.set_num_threads(1)
                one = best(fn, budget)
                ember.set_num_threads(2)
                ember._C._set_grain_divisor(1 << 40)
                two = best(fn, budget)
                ember._C._set_grain_divisor(1)
                print(f'  {n:>9} {unit}: 1 thread {one * 1e6:9.1f} us, 2 threads {two * 1e6:9.1f} us, '
                      f'speedup {one / two:5.2f}')
                if pays is None and two < one / 1.1:
                    pays = n
            print(f'  -> 2 threads pay from {pays} {unit}: grain about {pays // 2 if pays else "n/a"}\n')
    finally:
        ember._C._set_grain_divisor(1)
        ember.set_num_threads(saved)


if __name__ == '__main__':
    main()
