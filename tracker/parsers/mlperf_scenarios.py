"""The scenarios the submission checker accepts per model and system type, round by round.

``MODEL_CONFIG[version]`` of ``mlcommons/inference`` lists, per system type
(``datacenter``, ``edge``, ``datacenter,edge``), the required and optional
scenarios of each model: ``tools/submission/submission_checker.py`` for
v4.0/v4.1, ``tools/submission/submission_checker/constants.py`` for
v5.0-v6.0 (``Config.set_type``, ``get_required``, ``get_optional``). In the
closed and network divisions the checker rejects a result whose scenario is
neither required nor optional for its model ("ignoring scenario ... (neither
required nor optional)"; ``Loader.check_scenarios``' unknown scenarios), and
a model the system type does not run at all ("has an invalid model ...,
system_type=..."). The open division is not held to the table, and rounds
whose table is not known here (v6.1 on) are not checked.
"""

from __future__ import annotations

from collections.abc import Mapping

from tracker.parsers.mlperf_rules import round_key

__all__ = ["scenario_reasons"]

_NAMES = {
    "O": "Offline",
    "S": "Server",
    "SS": "SingleStream",
    "MS": "MultiStream",
    "I": "Interactive",
}
_Table = Mapping[str, str]
"""Model → its required then optional scenarios, abbreviated (``"SS MS O"``)."""

_V40_DATACENTER: _Table = {
    **dict.fromkeys(("resnet", "retinanet", "rnnt", "bert-99", "bert-99.9"), "S O"),
    **dict.fromkeys(("dlrm-v2-99", "dlrm-v2-99.9", "gptj-99", "gptj-99.9"), "S O"),
    **dict.fromkeys(("llama2-70b-99", "llama2-70b-99.9", "stable-diffusion-xl"), "S O"),
    **dict.fromkeys(("3d-unet-99", "3d-unet-99.9"), "O"),
}
_V40_EDGE: _Table = {
    **dict.fromkeys(("resnet", "retinanet"), "SS MS O"),
    **dict.fromkeys(("rnnt", "bert-99", "3d-unet-99", "3d-unet-99.9"), "SS O"),
    **dict.fromkeys(("gptj-99", "gptj-99.9", "stable-diffusion-xl"), "SS O"),
}
_V40_BOTH: _Table = {
    **dict.fromkeys(("resnet", "retinanet"), "SS O MS S"),
    **dict.fromkeys(("rnnt", "bert-99", "gptj-99", "gptj-99.9"), "SS O S"),
    **dict.fromkeys(("bert-99.9", "dlrm-v2-99", "dlrm-v2-99.9"), "O S"),
    **dict.fromkeys(("3d-unet-99", "3d-unet-99.9"), "SS O"),
    **dict.fromkeys(("llama2-70b-99", "llama2-70b-99.9"), "S O"),
    "stable-diffusion-xl": "SS O S",
}
_V41_DATACENTER: _Table = {
    **{k: v for k, v in _V40_DATACENTER.items() if k != "rnnt"},
    "mixtral-8x7b": "S O",
}
_V41_EDGE: _Table = {k: v for k, v in _V40_EDGE.items() if k != "rnnt"}
_V41_BOTH: _Table = {
    **{k: v for k, v in _V40_BOTH.items() if k != "rnnt"},
    "mixtral-8x7b": "SS S O",
}
_V50_DATACENTER: _Table = {
    **{k: v for k, v in _V41_DATACENTER.items() if not k.startswith("bert")},
    **dict.fromkeys(("llama2-70b-interactive-99", "llama2-70b-interactive-99.9"), "S O"),
    "llama3.1-405b": "S O",
    "rgat": "O",
}
_V50_EDGE: _Table = {**_V41_EDGE, "bert-99.9": "SS O", "pointpainting": "SS"}
_V50_BOTH: _Table = {
    **{k: v for k, v in _V41_BOTH.items() if k != "mixtral-8x7b"},
    **dict.fromkeys(("bert-99", "bert-99.9"), "SS O"),
    **dict.fromkeys(("llama2-70b-interactive-99", "llama2-70b-interactive-99.9"), "S O"),
    **dict.fromkeys(("mixtral-8x7b", "llama3.1-405b"), "S O"),
    "rgat": "O",
    "pointpainting": "SS",
}
_V51_LLM_OPTIONAL: _Table = dict.fromkeys(
    ("llama2-70b-99", "llama2-70b-99.9", "llama3.1-405b", "llama3.1-8b"), "O I S"
)
_V51_DATACENTER: _Table = {
    **dict.fromkeys(("retinanet", "dlrm-v2-99", "dlrm-v2-99.9"), "S O"),
    **dict.fromkeys(("stable-diffusion-xl", "mixtral-8x7b", "deepseek-r1"), "S O"),
    **dict.fromkeys(("3d-unet-99", "3d-unet-99.9", "rgat", "whisper"), "O"),
    **_V51_LLM_OPTIONAL,
}
_V51_EDGE: _Table = {
    **dict.fromkeys(("resnet", "retinanet"), "SS MS O"),
    **dict.fromkeys(("bert-99", "bert-99.9", "3d-unet-99", "3d-unet-99.9"), "SS O"),
    **dict.fromkeys(("llama3.1-8b-edge", "stable-diffusion-xl"), "SS O"),
    "pointpainting": "SS",
    "whisper": "O",
}
_V51_BOTH: _Table = {
    "resnet": "SS MS O S",
    "retinanet": "SS O MS S",
    **dict.fromkeys(("bert-99", "bert-99.9", "3d-unet-99", "3d-unet-99.9"), "SS O"),
    **dict.fromkeys(("dlrm-v2-99", "dlrm-v2-99.9"), "O S"),
    "llama3.1-8b-edge": "SS O",
    "stable-diffusion-xl": "SS O S",
    "mixtral-8x7b": "S O",
    **dict.fromkeys(("rgat", "whisper"), "O"),
    "pointpainting": "SS",
    "deepseek-r1": "SS S O",
    **_V51_LLM_OPTIONAL,
}
_V60_LLM_OPTIONAL: _Table = {
    **_V51_LLM_OPTIONAL,
    **dict.fromkeys(("deepseek-r1", "gpt-oss-120b"), "O I S"),
}
_V60_DATACENTER: _Table = {
    **dict.fromkeys(("dlrm-v3", "mixtral-8x7b", "qwen3-vl-235b-a22b"), "S O"),
    **dict.fromkeys(("3d-unet-99", "3d-unet-99.9", "rgat", "whisper"), "O"),
    "wan-2.2-t2v-a14b": "O SS",
    **_V60_LLM_OPTIONAL,
}
_V60_EDGE: _Table = {
    **dict.fromkeys(("resnet", "yolo-95", "yolo-99"), "SS MS O"),
    **dict.fromkeys(("bert-99", "bert-99.9", "3d-unet-99", "3d-unet-99.9"), "SS O"),
    **dict.fromkeys(("llama3.1-8b-edge", "stable-diffusion-xl"), "SS O"),
    "pointpainting": "SS",
    "whisper": "O",
}
_V60_BOTH: _Table = {
    "resnet": "SS MS O S",
    "retinanet": "SS O MS S",
    **dict.fromkeys(("bert-99", "bert-99.9", "3d-unet-99", "3d-unet-99.9"), "SS O"),
    "llama3.1-8b-edge": "SS O",
    "stable-diffusion-xl": "SS O S",
    "mixtral-8x7b": "S O",
    **dict.fromkeys(("rgat", "whisper"), "O"),
    "pointpainting": "SS",
    "dlrm-v3": "O S",
    **dict.fromkeys(("yolo-95", "yolo-99"), "SS MS O"),
    **_V60_LLM_OPTIONAL,
    "qwen3-vl-235b-a22b": "O I S",
}
_TABLES: Mapping[tuple[int, int], Mapping[str, _Table]] = {
    (4, 0): {"datacenter": _V40_DATACENTER, "edge": _V40_EDGE, "datacenter,edge": _V40_BOTH},
    (4, 1): {"datacenter": _V41_DATACENTER, "edge": _V41_EDGE, "datacenter,edge": _V41_BOTH},
    (5, 0): {"datacenter": _V50_DATACENTER, "edge": _V50_EDGE, "datacenter,edge": _V50_BOTH},
    (5, 1): {"datacenter": _V51_DATACENTER, "edge": _V51_EDGE, "datacenter,edge": _V51_BOTH},
    (6, 0): {"datacenter": _V60_DATACENTER, "edge": _V60_EDGE, "datacenter,edge": _V60_BOTH},
}
_CHECKED_DIVISIONS = frozenset({"closed", "network"})


def scenario_reasons(
    model: str, scenario: str, *, round_label: str, system_type: str, division: str
) -> list[str]:
    """Why the checker rejects a ``scenario`` result of ``model`` (empty when it does not).

    ``model`` is the official model (:func:`tracker.parsers.mlperf_rules.mlperf_model`),
    ``scenario`` the canonical folder scenario (``Interactive`` included) and
    ``system_type`` the system JSON's field (``"datacenter,edge"`` in either order).
    A model the round's table does not name for any system type is not checked.
    """
    tables = _TABLES.get(round_key(round_label))
    kind = _system_kind(system_type)
    if division.strip().lower() not in _CHECKED_DIVISIONS or tables is None or kind is None:
        return []
    allowed = tables[kind].get(model)
    if allowed is None:
        if not any(model in table for table in tables.values()):
            return []  # not a model of the round's table at all (e.g. example data): unchecked
        return [f"{model} is not a {round_label} benchmark for {kind} systems (checker)"]
    names = [_NAMES[s] for s in allowed.split()]
    if scenario in names:
        return []
    return [
        f"scenario {scenario} is not allowed for {model} on {kind} systems "
        f"(checker: allowed {', '.join(names)})"
    ]


def _system_kind(system_type: str) -> str | None:
    """``"datacenter"``, ``"edge"`` or ``"datacenter,edge"``; ``None`` for anything else."""
    parts = frozenset(p.strip().lower() for p in system_type.split(","))
    if parts == {"datacenter", "edge"}:
        return "datacenter,edge"
    return next(iter(parts)) if parts in ({"datacenter"}, {"edge"}) else None
