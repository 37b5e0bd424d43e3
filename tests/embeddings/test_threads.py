"""The bundled embedder's threads: one BLAS thread for every product (the process-wide limit set
while any embedding runs and restored after the last), a batch shared among worker threads, the
same vectors at any thread count."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

from mnemoclaw.embeddings import local
from mnemoclaw.embeddings.base import cpu_count
from mnemoclaw.embeddings.blas import BlasLimit

TEXTS = ["the courier code is QX-5521", "我们下周三在杭州开会", "Melanie painted a sunrise by the lake"] * 20


def _blas_threads() -> set[int]:
    return {lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"}


def test_workers_default_to_the_cores_and_a_batch_is_split_in_order():
    assert local.LocalUSE().threads == cpu_count()
    assert local.LocalUSE(threads=64).threads == cpu_count()
    assert local.LocalUSE(threads=1).threads == 1
    texts = [f"text {i} " * (i % 7 + 1) for i in range(100)]
    parts = local._split(texts, 3)
    assert len(parts) == 3 and [t for p in parts for t in p] == texts
    sizes = [sum(map(len, p)) for p in parts]
    assert max(sizes) - min(sizes) <= max(map(len, texts)) * 2
    assert local._split(texts[:1], 4) == [texts[:1]]


def test_the_limit_holds_while_any_call_runs_and_is_restored_after_the_last():
    if not _blas_threads():
        pytest.skip("numpy has no BLAS library threadpoolctl can see")
    limit = BlasLimit()
    with threadpool_limits(limits=2, user_api="blas"):  # what the process had before
        before = _blas_threads()
        inside, release = threading.Event(), threading.Event()
        seen = []

        def long_call():
            with limit(1):
                inside.set()
                release.wait(10)
                seen.append(_blas_threads())

        t = threading.Thread(target=long_call)
        t.start()
        assert inside.wait(10)
        with limit(1):  # a query beside a batch
            seen.append(_blas_threads())
        seen.append(_blas_threads())  # the batch still runs: still limited
        release.set()
        t.join(10)
        assert seen == [{1}, {1}, {1}], (threadpool_info(), limit._active)
        assert _blas_threads() == before


def test_vectors_do_not_depend_on_threads_or_on_calls_running_at_once(tmp_path):
    one = local.LocalUSE(threads=1, cache_dir=str(tmp_path))
    alone = one.embed(TEXTS)
    many = local.LocalUSE(threads=cpu_count(), cache_dir=str(tmp_path))
    np.testing.assert_allclose(many.embed(TEXTS), alone, atol=1e-5)
    got: dict[int, np.ndarray] = {}

    def run(i):
        got[i] = one.embed(TEXTS[i:] + TEXTS[:i])

    workers = [threading.Thread(target=run, args=(i,)) for i in range(3)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(60)
    for i, vecs in got.items():
        np.testing.assert_allclose(vecs, np.concatenate([alone[i:], alone[:i]]), atol=1e-5)
    assert len(got) == 3
