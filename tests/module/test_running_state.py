"""RunningState: per-thread updates folded at the next update or value_sync; value() can be one
update stale; clones share it; two threads average."""

from __future__ import annotations

import threading

import numpy as np

from minidl.dispatch import Device
from minidl.module import RunningState
from minidl.tensor import Tensor

from .support import T, arr

DEV = Device.ndarray()


def test_value_is_one_update_stale_until_synced():
    state = RunningState.new(T([0.0, 0.0], DEV))
    state.update(T([1.0, 2.0], DEV))
    np.testing.assert_array_equal(arr(state.value()), [0.0, 0.0])  # not folded yet
    np.testing.assert_array_equal(arr(state.value_sync()), [1.0, 2.0])
    np.testing.assert_array_equal(arr(state.value()), [1.0, 2.0])


def test_a_second_update_on_the_same_thread_folds_the_first():
    state = RunningState.new(T([0.0], DEV))
    state.update(T([1.0], DEV))
    state.update(T([5.0], DEV))
    np.testing.assert_array_equal(arr(state.value()), [1.0])  # the first one, folded
    np.testing.assert_array_equal(arr(state.value_sync()), [5.0])


def test_value_sync_on_a_thread_without_pending_update_does_not_fold():
    state = RunningState.new(T([0.0], DEV))
    worker = threading.Thread(target=state.update, args=(T([3.0], DEV),))
    worker.start()
    worker.join()
    np.testing.assert_array_equal(arr(state.value_sync()), [0.0])  # this thread had nothing pending
    state.sync()
    np.testing.assert_array_equal(arr(state.value()), [3.0])


def test_updates_from_two_threads_are_averaged():
    state = RunningState.new(T([0.0, 0.0], DEV))
    barrier = threading.Barrier(2)

    def work(values):
        state.update(T(values, DEV))
        barrier.wait()  # both pending before either folds

    threads = [threading.Thread(target=work, args=(v,)) for v in ([2.0, 4.0], [4.0, 8.0])]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert state.has_pending()
    state.sync()
    np.testing.assert_allclose(arr(state.value()), [3.0, 6.0])


def test_the_next_update_on_a_thread_averages_the_other_threads_in():
    state = RunningState.new(T([0.0], DEV))
    state.update(T([1.0], DEV))
    other = threading.Thread(target=state.update, args=(T([3.0], DEV),))
    other.start()
    other.join()
    state.update(T([10.0], DEV))  # folds (1 + 3) / 2, then holds 10 for this thread
    np.testing.assert_allclose(arr(state.value()), [2.0])
    np.testing.assert_allclose(arr(state.value_sync()), [10.0])


def test_clone_is_the_same_state_and_fresh_is_not():
    state = RunningState.new(Tensor.zeros((2,), device=DEV))
    assert state.clone() is state
    state.update(T([1.0, 1.0], DEV))
    fresh = state.fresh()
    assert fresh is not state and fresh.id == state.id
    np.testing.assert_array_equal(arr(fresh.value()), [1.0, 1.0])
    state.update(T([7.0, 7.0], DEV))
    state.sync()
    np.testing.assert_array_equal(arr(fresh.value()), [1.0, 1.0])


def test_train_gives_a_fresh_state_and_the_map_based_modes_share_it():
    # burn: train() is AutodiffModule::from_inner, and RunningState::from_inner syncs, then
    # builds one with_id (running.rs:227-232 at v0.22.0-pre.2 and on main); the mappers
    # (no_grad, set_require_grad, freeze...) write into the same Arc and return self.
    from minidl.nn.batch_norm import BatchNormConfig

    ad = DEV.autodiff()
    bn = BatchNormConfig(2).init(ad)
    bn.forward(T(np.arange(8.0).reshape(4, 2), ad))  # one update, pending
    trained = bn.train()
    assert trained.running_mean is not bn.running_mean
    assert trained.running_mean.id == bn.running_mean.id
    np.testing.assert_allclose(arr(trained.running_mean.value()), [0.3, 0.4], rtol=1e-6)
    trained.forward(T(np.full((4, 2), 10.0), ad))
    trained.running_mean.sync()
    np.testing.assert_allclose(arr(bn.running_mean.value_sync()), [0.3, 0.4], rtol=1e-6)
    for copy in (bn.no_grad(), bn.set_require_grad(True), bn.freeze(), bn.unfreeze()):
        assert copy.running_mean is bn.running_mean and copy.running_var is bn.running_var


def test_threads_started_one_after_another_never_share_a_pending_slot():
    # CPython hands a new thread the ident of one that exited; burn's ThreadId is never reused.
    # Three threads updating 1, 3, 10 in turn leave three pending values: their mean.
    state = RunningState(T([0.0], DEV))
    for v in (1.0, 3.0, 10.0):
        worker = threading.Thread(target=state.update, args=(T([v], DEV),))
        worker.start()
        worker.join()
    state.sync()
    np.testing.assert_allclose(arr(state.value()), [14.0 / 3.0], rtol=1e-6)


def test_a_batch_norm_trained_by_a_fresh_thread_each_step_averages_every_step():
    from minidl.nn.batch_norm import BatchNormConfig

    ad = DEV.autodiff()
    bn = BatchNormConfig(2).init(ad)
    batches = [np.full((4, 2), float(k), dtype=np.float32) for k in (1, 2, 3)]
    for batch in batches:
        worker = threading.Thread(target=lambda b=batch: bn.forward(Tensor.from_numpy(b, ad)))
        worker.start()
        worker.join()
    # three pending per-thread updates from the same stale value 0, averaged when folded
    # (with reused idents each thread would fold the last one's update as its own: 0.561)
    bn.running_mean.sync()
    expected = 0.9 * 0.0 + 0.1 * np.mean([1.0, 2.0, 3.0])
    np.testing.assert_allclose(arr(bn.running_mean.value()), [expected, expected], rtol=1e-6)


def test_current_thread_id_is_stable_within_a_thread_and_unique_across_threads():
    from minidl.module.running import current_thread_id

    here = current_thread_id()
    assert current_thread_id() == here
    seen = []
    for _ in range(5):
        worker = threading.Thread(target=lambda: seen.append(current_thread_id()))
        worker.start()
        worker.join()
    assert len(set(seen + [here])) == 6
