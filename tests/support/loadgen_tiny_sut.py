"""A tiny MLPerf LoadGen SUT that answers at once: real LoadGen logs in about two seconds.

Usage: ``python tests/support/loadgen_tiny_sut.py OUTDIR`` writes ``OUTDIR/Offline/`` and
``OUTDIR/Server_tokens/`` (LLM-style: a first token, then 16 "tokens"). Modelled
on ``shared/tools/loadgen_sut.py``, with shorter runs; the verdict (VALID or
not) and every figure depend on the machine, so tests compare what the logs say
with what the tracker stored, never with fixed numbers.
"""

from __future__ import annotations

import array
import sys
import threading
from pathlib import Path

import mlperf_loadgen as lg

TOTAL_SAMPLES = 256
TOKENS = 16
_BUFFER = array.array("B", b"tiny-output")
_POINTER, _LENGTH = _BUFFER.buffer_info()


def _noop(_indices: object) -> None:
    pass


def _instant_sut() -> object:
    def issue(queries: list) -> None:
        lg.QuerySamplesComplete([lg.QuerySampleResponse(q.id, _POINTER, _LENGTH) for q in queries])

    return lg.ConstructSUT(issue, lambda: None)


def _token_sut() -> tuple[object, threading.Thread, list]:
    pending: list = []
    ready = threading.Condition()
    state = {"stop": False}

    def work() -> None:
        while True:
            with ready:
                while not pending and not state["stop"]:
                    ready.wait()
                if state["stop"] and not pending:
                    return
                batch = pending[:]
                pending.clear()
            for q in batch:
                lg.FirstTokenComplete([lg.QuerySampleResponse(q.id, _POINTER, _LENGTH)])
                lg.QuerySamplesComplete([lg.QuerySampleResponse(q.id, _POINTER, _LENGTH, TOKENS)])

    def issue(queries: list) -> None:
        with ready:
            pending.extend(queries)
            ready.notify()

    worker = threading.Thread(target=work, daemon=True)
    worker.start()
    stop = [ready, state]
    return lg.ConstructSUT(issue, lambda: None), worker, stop


def _settings(name: str) -> object:
    settings = lg.TestSettings()
    settings.mode = lg.TestMode.PerformanceOnly
    settings.min_duration_ms = 300
    settings.max_duration_ms = 3000
    if name == "Offline":
        settings.scenario = lg.TestScenario.Offline
        settings.offline_expected_qps = 20_000
        settings.min_query_count = 1
    else:
        settings.scenario = lg.TestScenario.Server
        settings.server_target_qps = 400
        settings.server_target_latency_ns = 100_000_000
        settings.min_query_count = 300
        settings.use_token_latencies = True
        settings.ttft_latency = 2_000_000_000
        settings.tpot_latency = 200_000_000
    return settings


def run(out: Path, name: str) -> None:
    folder = out / name
    folder.mkdir(parents=True, exist_ok=True)
    log = lg.LogSettings()
    log.log_output.outdir = str(folder)
    log.log_output.copy_summary_to_stdout = False
    log.enable_trace = False
    qsl = lg.ConstructQSL(TOTAL_SAMPLES, TOTAL_SAMPLES, _noop, _noop)
    worker = None
    if name == "Offline":
        sut = _instant_sut()
    else:
        sut, worker, (ready, state) = _token_sut()
    lg.StartTestWithLogSettings(sut, qsl, _settings(name), log)
    if worker is not None:
        with ready:
            state["stop"] = True
            ready.notify()
        worker.join()
    lg.DestroySUT(sut)
    lg.DestroyQSL(qsl)


if __name__ == "__main__":
    for run_name in ("Offline", "Server_tokens"):
        run(Path(sys.argv[1]), run_name)
