"""Random ops (include/ember/random.h) from Python: signatures as torch 1.13's,
shapes, dtypes, ranges and moments of the draws, determinism under
manual_seed and Generator. Values are not compared with torch (different
generators); argument errors are."""
import math
import statistics

import pytest
import torch

import ember
from helpers import check_raises

N = 20000


def values(t):
    return t.flatten().tolist()


def lo(t):
    return min(values(t))


def hi(t):
    return max(values(t))


def mean(t):
    return statistics.fmean(values(t))


def moments(t):
    v = values(t)
    return statistics.fmean(v), statistics.stdev(v)


def same_draws(make):
    """make(generator_or_None) draws the same numbers after the same seed,
    from the default generator and from a Generator, and different ones from
    another seed."""
    ember.manual_seed(7)
    a = make(None)
    ember.manual_seed(7)
    b = make(None)
    assert a.tolist() == b.tolist()
    g = ember.Generator().manual_seed(7)
    c = make(g)
    assert c.tolist() == a.tolist()  # a Generator seeded alike draws alike
    ember.manual_seed(8)
    assert make(None).tolist() != a.tolist()
    g.manual_seed(7)
    ember.manual_seed(99)
    assert make(g).tolist() == a.tolist()  # independent of the default generator


# ---- in-place samplers ---------------------------------------------------------------------
@pytest.mark.parametrize('dtype', ['float32', 'float64'])
def test_uniform_(dtype):
    x = ember.empty(N, dtype=getattr(ember, dtype))
    assert x.uniform_() is x
    assert 0 <= lo(x) and hi(x) < 1
    x.uniform_(-2, 4)
    m, std = moments(x)
    assert -2 <= lo(x) and hi(x) < 4
    assert abs(m - 1) < 0.1 and abs(std - 6 / math.sqrt(12)) < 0.1
    x.uniform_(**{'from': 3, 'to': 3.5})
    assert 3 <= lo(x) and hi(x) < 3.5
    same_draws(lambda g: ember.empty(50).uniform_(generator=g))
    check_raises(lambda m: m.empty(3).uniform_(2, 1))


def test_normal_and_exponential_():
    x = ember.empty(N, dtype=ember.float64)
    assert x.normal_() is x
    mu, sd = moments(x)
    assert abs(mu) < 0.05 and abs(sd - 1) < 0.05
    mu, sd = moments(x.normal_(3, std=0.5))
    assert abs(mu - 3) < 0.05 and abs(sd - 0.5) < 0.05
    mu, sd = moments(x.exponential_(2))
    assert lo(x) >= 0 and abs(mu - 0.5) < 0.05 and abs(sd - 0.5) < 0.05
    same_draws(lambda g: ember.empty(50).normal_(1, 2, generator=g))
    same_draws(lambda g: ember.empty(50).exponential_(lambd=3, generator=g))
    check_raises(lambda m: m.empty(3).normal_(0, -1))
    check_raises(lambda m: m.empty(3).exponential_(-1))


@pytest.mark.parametrize('dtype', ['float32', 'int64', 'int32', 'uint8', 'int8', 'bool'])
def test_random_(dtype):
    x = ember.empty(N, dtype=getattr(ember, dtype))
    top = 2 if dtype == 'bool' else 5
    assert x.random_(top) is x and x.dtype is getattr(ember, dtype)
    assert set(values(x)) == set(range(top))
    if dtype != 'bool':
        x.random_(2, 4)
        assert set(values(x)) == {2, 3}
        x.random_(1, None)
        assert lo(x) >= 1 and hi(x) > 4
    else:
        x.random_(0, 2)
        assert set(values(x)) == {False, True}
        check_raises(lambda m: m.empty(3, dtype=m.bool).random_(5))
    x.random_()
    assert lo(x) >= 0
    same_draws(lambda g: ember.empty(50, dtype=ember.int64).random_(10, generator=g))
    same_draws(lambda g: ember.empty(50).random_(-3, 3, generator=g))


def test_random_errors():
    check_raises(lambda m: m.empty(3).random_(5, 2))
    check_raises(lambda m: m.empty(3, dtype=m.uint8).random_(0, 300))
    check_raises(lambda m: m.empty(3).random_(1.5))


def test_bernoulli_():
    x = ember.empty(N)
    assert x.bernoulli_() is x
    assert set(x.tolist()) == {0.0, 1.0} and abs(mean(x) - 0.5) < 0.03
    assert abs(mean(x.bernoulli_(0.2)) - 0.2) < 0.03
    p = ember.tensor([0.0, 1.0]).repeat(N // 2)
    assert x.bernoulli_(p).tolist() == p.tolist()
    y = ember.empty(N, dtype=ember.int64).bernoulli_(p=0.7)
    assert y.dtype is ember.int64 and abs(mean(y) - 0.7) < 0.03
    same_draws(lambda g: ember.empty(50).bernoulli_(0.3, generator=g))
    check_raises(lambda m: m.empty(3).bernoulli_(1.5))


# ---- sampled tensors -----------------------------------------------------------------------
def test_bernoulli():
    p = ember.full((N,), 0.3, dtype=ember.float64)
    x = ember.bernoulli(p)
    assert x.dtype is ember.float64 and x.shape == (N,) and abs(mean(x) - 0.3) < 0.03
    y = p.bernoulli(0.8)
    assert y.dtype is ember.float64 and abs(mean(y) - 0.8) < 0.03
    assert abs(mean(ember.bernoulli(p, p=0.1)) - 0.1) < 0.03
    out = ember.empty(0)
    assert ember.bernoulli(p, out=out) is out and out.shape == (N,)
    same_draws(lambda g: ember.bernoulli(ember.full((50,), 0.5), generator=g))
    check_raises(lambda m: m.bernoulli(m.tensor([1.5])))
    check_raises(lambda m: m.bernoulli(m.tensor([1, 0])))


def test_normal_overloads():
    mu, sd = ember.zeros(2, N // 2, dtype=ember.float64) + 3, ember.full((N // 2,), 2.0, dtype=ember.float64)
    for x in (ember.normal(mu, sd), ember.normal(mu, 2.0), ember.normal(3.0, sd.expand(2, N // 2)),
              ember.normal(3, 2, size=(2, N // 2), dtype=ember.float64), ember.normal(mean=mu, std=2)):
        assert x.shape == (2, N // 2) and x.dtype is ember.float64
        m, s = moments(x)
        assert abs(m - 3) < 0.1 and abs(s - 2) < 0.1
    x = ember.normal(mean=mu)
    assert abs(moments(x)[1] - 1) < 0.05
    assert ember.normal(0.0, 1.0, (3, 4)).dtype is ember.float32
    assert ember.normal(0.0, 1.0, [2], requires_grad=True).requires_grad
    for out_args in ((mu, sd), (mu, 2.0), (3.0, sd), (3.0, 2.0, (4, 5))):
        out = ember.empty(0, dtype=ember.float64)
        assert ember.normal(*out_args, out=out) is out and out.shape in ((2, N // 2), (N // 2,), (4, 5))
    same_draws(lambda g: ember.normal(ember.zeros(50), ember.ones(50), generator=g))
    same_draws(lambda g: ember.normal(0.0, 1.0, (50,), generator=g))


def test_normal_errors():
    check_raises(lambda m: m.normal(m.zeros(3), m.tensor([1.0, -1.0, 1.0])))
    check_raises(lambda m: m.normal(0.0, -1.0, (3,)))
    check_raises(lambda m: m.normal(0, 1, 3))
    check_raises(lambda m: m.normal(0.0, 1.0))
    check_raises(lambda m: m.normal(m.zeros(3), m.ones(3), generator=1))


def test_randint():
    x = ember.randint(5, (N,))
    assert x.dtype is ember.int64 and x.shape == (N,) and set(x.tolist()) == {0, 1, 2, 3, 4}
    y = ember.randint(-3, 3, size=(2, N // 2), dtype=ember.float32)
    assert y.dtype is ember.float32 and y.shape == (2, N // 2) and set(y.flatten().tolist()) == set(range(-3, 3))
    assert abs(moments(ember.randint(0, 1000, (N,)))[0] - 499.5) < 10
    assert ember.randint(high=3, size=[2]).shape == (2,)
    out = ember.empty(0, dtype=ember.int32)
    assert ember.randint(2, 4, (3, 3), out=out) is out and out.dtype is ember.int32 and out.shape == (3, 3)
    same_draws(lambda g: ember.randint(100, (50,), generator=g))
    same_draws(lambda g: ember.randint(-10, 10, (50,), generator=g))
    check_raises(lambda m: m.randint(5, 2, (3,)))
    check_raises(lambda m: m.randint(2, 5))
    check_raises(lambda m: m.randint(0, 300, (2,), dtype=m.uint8))
    check_raises(lambda m: m.randint(5, (2,), requires_grad=True))


def test_randint_like():
    x = ember.zeros(4, 5, dtype=ember.int32)
    y = ember.randint_like(x, 7)
    assert y.shape == (4, 5) and y.dtype is ember.int32 and set(y.flatten().tolist()) <= set(range(7))
    z = ember.randint_like(x, 3, 6, dtype=ember.float64)
    assert z.dtype is ember.float64 and set(z.flatten().tolist()) <= {3.0, 4.0, 5.0}
    ember.manual_seed(3)
    a = ember.randint_like(x, 100)
    ember.manual_seed(3)
    assert ember.randint_like(x, 100).tolist() == a.tolist()
    check_raises(lambda m: m.randint_like(m.zeros(2), 3, 1))


def test_randperm():
    p = ember.randperm(1000)
    assert p.dtype is ember.int64 and sorted(p.tolist()) == list(range(1000)) and p.tolist() != list(range(1000))
    assert ember.randperm(0).shape == (0,)
    q = ember.randperm(10, dtype=ember.float32)
    assert q.dtype is ember.float32 and sorted(q.tolist()) == list(range(10))
    out = ember.empty(0, dtype=ember.int32)
    assert ember.randperm(5, out=out) is out and sorted(out.tolist()) == list(range(5))
    same_draws(lambda g: ember.randperm(50, generator=g))
    check_raises(lambda m: m.randperm(-1))
    check_raises(lambda m: m.randperm(300, dtype=m.uint8))


def test_multinomial():
    probs = ember.tensor([[0.1, 0.0, 0.6, 0.3], [1.0, 1.0, 1.0, 1.0]], dtype=ember.float64)
    x = ember.multinomial(probs, N, replacement=True)
    assert x.dtype is ember.int64 and x.shape == (2, N)
    freq = [x.tolist()[0].count(k) / N for k in range(4)]
    assert all(abs(f - p) < 0.03 for f, p in zip(freq, [0.1, 0.0, 0.6, 0.3]))
    y = probs.multinomial(4)
    assert sorted(y.tolist()[1]) == [0, 1, 2, 3]
    assert 1 not in probs.multinomial(3).tolist()[0]
    assert ember.multinomial(probs.select(0, 0), 2).shape == (2,)
    out = ember.empty(0, dtype=ember.int64)
    assert ember.multinomial(probs, 3, out=out) is out and out.shape == (2, 3)
    same_draws(lambda g: ember.multinomial(ember.ones(50), 50, generator=g))
    check_raises(lambda m: m.multinomial(m.tensor([1.0, 0.0]), 3))
    check_raises(lambda m: m.multinomial(m.tensor([-1.0, 1.0]), 1))
    check_raises(lambda m: m.multinomial(m.ones(2, 2, 2), 1))


def test_rand_randn_generator():
    same_draws(lambda g: ember.rand(50, generator=g))
    same_draws(lambda g: ember.randn(5, 10, generator=g))


def test_signature_errors():
    x = ember.empty(3)
    for f in (lambda: x.uniform_('a'), lambda: x.normal_(generator=torch.Generator()), lambda: x.random_(1, 2, 3),
              lambda: ember.randint(5), lambda: ember.randperm(3.5), lambda: ember.multinomial(x, 1, 2),
              lambda: ember.bernoulli(x, 'a'), lambda: x.exponential_(lambd=1, foo=2)):
        with pytest.raises(TypeError):
            f()
