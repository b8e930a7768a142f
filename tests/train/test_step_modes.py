"""How a step runs, not what it computes: the compiled step (``compile_mode``), cuDNN's
autotuner and the memory format chosen per device and precision."""

from __future__ import annotations

import os
import shutil

import pytest
import torch

from nasrescale.errors import ConfigError
from nasrescale.train import RunOptions
from nasrescale.train.fused_sgd import CapturedUpdate, FusedSGD, sgd_update, update_for
from nasrescale.train.run_setup import RunSetup

from .test_engine import make_data, make_model, proto, run


def _cpu_setup(**options) -> RunSetup:
    return RunSetup(torch.device("cpu"), make_data(), proto(precision="fp32"), options=RunOptions(**options))


@pytest.mark.parametrize("fmt, expected", [("auto", "channels_last"), ("contiguous", "contiguous"),
                                           ("channels_last", "channels_last")])
def test_auto_memory_format_on_the_cpu_is_channels_last_and_a_named_one_is_kept(fmt: str, expected: str) -> None:
    setup = _cpu_setup(memory_format=fmt)
    assert setup.layout == expected
    assert setup.channels_last is (expected == "channels_last")


def test_unknown_memory_format_and_compile_mode_are_refused() -> None:
    with pytest.raises(ConfigError, match="memory_format 'nhwc' is unknown"):
        RunOptions(memory_format="nhwc")
    with pytest.raises(ConfigError, match="compile_mode 'max' is unknown"):
        RunOptions(compile_mode="max")


@pytest.mark.parametrize("wanted", [True, False])
def test_cudnn_autotuner_is_set_for_a_cuda_run_only_and_restored(wanted: bool) -> None:
    """The scope of a CUDA setup (faked on a CPU setup: the flag is a plain Python setting) turns
    the autotuner on only with ``cudnn_benchmark``; a CPU setup leaves it alone."""
    before = torch.backends.cudnn.benchmark
    torch.backends.cudnn.benchmark = False
    try:
        setup = _cpu_setup(cudnn_benchmark=wanted)
        with setup.precision_scope():
            assert torch.backends.cudnn.benchmark is False  # the CPU: untouched
        setup.cuda = True
        with setup.precision_scope():
            assert torch.backends.cudnn.benchmark is wanted
        assert torch.backends.cudnn.benchmark is False
    finally:
        torch.backends.cudnn.benchmark = before


def _compiler_missing() -> str | None:
    if shutil.which(os.environ.get("CXX", "g++")) is None:
        return "inductor needs a C++ compiler on the CPU and none was found"
    return None


@pytest.mark.skipif(_compiler_missing() is not None, reason=str(_compiler_missing()))
def test_the_reduce_overhead_compiled_step_gives_the_eager_update() -> None:
    """Two steps of a run compiled with ``reduce-overhead`` (CUDA graphs on CUDA; on the CPU
    inductor's compiled kernels without graphs) move the weights as the eager steps do, up to
    float rounding (a fused kernel may sum in another order)."""
    data, protocol = make_data(n_train=32, n_test=16), proto(epochs=1, batch_size=16, precision="fp32")
    eager, compiled = make_model(), make_model()
    start = [p.detach().clone() for p in eager.parameters()]
    run(eager, data, protocol)
    try:
        run(compiled, data, protocol, compile=True, compile_mode="reduce-overhead")
    except Exception as err:  # noqa: BLE001 - a backend that cannot compile here is a skip, said why
        pytest.skip(f"torch.compile failed on this machine's backend: {type(err).__name__}: {err}"[:300])
    for before, a, b in zip(start, eager.parameters(), compiled.parameters()):
        assert not torch.equal(before, a)  # the steps moved the weights
        torch.testing.assert_close(b.detach(), a.detach(), rtol=1e-4, atol=1e-5)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_cuda_auto_layout_is_nchw_in_exact_fp32_and_channels_last_in_bf16() -> None:
    data, options = make_data(), RunOptions(device="cuda")
    fp32 = RunSetup(torch.device("cuda"), data, proto(precision="fp32"), options=options)
    bf16 = RunSetup(torch.device("cuda"), data, proto(precision="bf16"), options=options)
    assert (fp32.layout, bf16.layout) == ("contiguous", "channels_last")
    with fp32.precision_scope():
        assert torch.backends.cudnn.benchmark is True
        assert torch.backends.cudnn.allow_tf32 is False


@pytest.mark.skipif(_compiler_missing() is not None, reason=str(_compiler_missing()))
@pytest.mark.parametrize("mode", ["default", "reduce-overhead"])
def test_the_captured_fused_sgd_update_gives_the_eager_update(mode: str) -> None:
    """Three members at their own LRs and weight decays, Nesterov, a schedule factor changed between
    steps (written into the LR tensors in place: the captured update is not recompiled for it), the
    first step (buffer = d) and the later ones: float64, equal to the eager update to 1e-12 (a fused
    kernel may round a multiply-add once instead of twice)."""
    g = torch.Generator().manual_seed(0)
    shapes, k = [(6, 3, 3, 3), (6,), (3, 5)], 3
    lrs, wds = [[0.1, 0.03, 0.5]] * len(shapes), [[5e-4, 0.0, 1e-3]] * len(shapes)
    start = [torch.randn(s, generator=g, dtype=torch.float64) for s in shapes]
    grads = [[torch.randn(s, generator=g, dtype=torch.float64) for s in shapes] for _ in range(4)]
    captured = CapturedUpdate(mode)
    runs = []
    for update in (sgd_update, captured):
        params = [torch.nn.Parameter(t.clone()) for t in start]
        opt = FusedSGD(params, lrs, wds, members=k, momentum=0.9, nesterov=True, update=update)
        for step, step_grads in enumerate(grads):
            opt.set_factor(0.5 ** step)
            for p, grad in zip(params, step_grads):
                p.grad = grad.clone()
            opt.step()
        runs.append(params)
    if captured.error is not None:
        pytest.skip(f"torch.compile failed on this machine's backend: {captured.error}")
    for before, eager, compiled in zip(start, *runs):
        assert not torch.equal(before, eager.detach())  # the steps moved the weights
        torch.testing.assert_close(compiled.detach(), eager.detach(), rtol=1e-12, atol=1e-12)


def test_the_captured_update_falls_back_to_eager_when_compiling_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args, **kwargs):  # noqa: ANN002, ANN003 - stands for a backend that cannot compile
        raise RuntimeError("no backend here")

    captured = CapturedUpdate()
    monkeypatch.setattr(captured, "compiled", broken)
    p, q = torch.nn.Parameter(torch.ones(4)), torch.nn.Parameter(torch.ones(4))
    eager = FusedSGD([p], [[0.1, 0.2]], [[0.0, 0.0]], members=2, momentum=0.9, nesterov=False)
    fallback = FusedSGD([q], [[0.1, 0.2]], [[0.0, 0.0]], members=2, momentum=0.9, nesterov=False, update=captured)
    p.grad, q.grad = torch.ones(4), torch.ones(4)
    eager.step()
    with pytest.warns(UserWarning, match="runs eagerly: compiling it failed"):
        fallback.step()
    assert torch.equal(q.detach(), p.detach())
    assert captured.error == "RuntimeError: no backend here" and captured.compiled is None
    assert update_for(False) is sgd_update and isinstance(update_for(True, "reduce-overhead"), CapturedUpdate)


@pytest.mark.skipif(_compiler_missing() is not None, reason=str(_compiler_missing()))
def test_a_compiled_fused_group_gives_the_eager_group(recwarn: pytest.WarningsRecorder) -> None:
    """The whole step of a fused NB201 pair at different LRs compiled (``reduce-overhead``: network
    and SGD update; CUDA graphs on CUDA, inductor's kernels on the CPU) moves every member's weights
    as the eager group does, up to float rounding (fp32, one epoch of 3 steps: the comparison stays tame)."""
    from nasrescale.train import train_fused
    from nasrescale.train.members import FusedMember

    from .test_fused import make_run, toy_data

    data = toy_data(n_train=40, n_test=16)

    def group() -> list[FusedMember]:
        runs = [make_run("nb201", ["epochs=1", f"lr={lr}", "precision=fp32"], seed) for lr, seed in ((0.05, 0), (0.2, 1))]
        return [FusedMember(model, protocol, groups, seed) for (model, protocol, groups), seed in zip(runs, (0, 1))]

    eager, compiled = group(), group()
    start = [[p.detach().clone() for p in m.model.parameters()] for m in eager]
    train_fused(eager, data, RunOptions())
    try:
        train_fused(compiled, data, RunOptions(compile=True, compile_mode="reduce-overhead"))
    except Exception as err:  # noqa: BLE001 - a backend that cannot compile here is a skip, said why
        pytest.skip(f"torch.compile failed on this machine's backend: {type(err).__name__}: {err}"[:300])
    assert not [w for w in recwarn if "runs eagerly" in str(w.message)]  # the update was compiled, not fallen back
    for before, a, b in zip(start, eager, compiled):
        assert sum(not torch.equal(p0, pa.detach()) for p0, pa in zip(before, a.model.parameters())) > 10  # moved
        for pa, pb in zip(a.model.parameters(), b.model.parameters()):
            torch.testing.assert_close(pb.detach(), pa.detach(), rtol=1e-4, atol=1e-5)
