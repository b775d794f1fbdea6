"""LLM-serving benchmarks: NVIDIA AIPerf and GenAI-Perf, ``vllm bench serve`` and InferenceX.

:mod:`~tracker.formats.serving.parse` is the one vocabulary every serving point is
normalised to; :mod:`~.parse_aiperf` and :mod:`~.parse_vllm` read each tool's files
(AIPerf and its predecessor GenAI-Perf; vLLM and InferenceX, which writes vLLM's
spellings); :mod:`~.read` finds the points of a folder, labels them and ties sweeps together.
"""
