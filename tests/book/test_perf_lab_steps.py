"""The performance chapter's step timing: torch.compile steps with the fastest eager optimizer,
and the summary names it."""

from minidl_book import perf_lab


def test_compile_runs_with_the_fastest_eager_optimizer(monkeypatch):
    cpu = {"torch default": 2.0, "torch foreach": 1.0, "torch fused": 1.5}
    ran = []

    def fake(workload, contender, threads, impl="fused", **timing):
        ran.append((contender, impl))
        if contender == "torch.compile":
            return {"cpu": 1.2, "impl": impl}
        return {"cpu": cpu.get(contender, 3.0)}

    monkeypatch.setattr(perf_lab, "step_time", fake)
    results = perf_lab.step_times("cnn", contenders=("torch.compile",) + tuple(cpu))
    assert ran[-1] == ("torch.compile", "foreach")  # last, after the eager ones
    table = perf_lab.summarize(results)
    assert table["torch.compile"]["impl"] == "foreach"
    assert table["best torch"]["name"] == "torch foreach"
    assert perf_lab.fastest_impl({}) == "fused"
