"""The explicit order of software versions: sort keys and :func:`order_versions`."""

from __future__ import annotations

from datetime import date

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from packaging.version import Version

from tracker.records.results import LABEL_MAX, VersionInfo
from tracker.versions import SORT_KEY_MAX, order_versions, version_place_key, version_sort_key

LABEL_CHARACTERS = "0123456789.-_+!abcdevnightlyrcpostABCRV~ "


@st.composite
def pep440_versions(draw: st.DrawFn) -> str:
    """A valid PEP 440 label built from its parts, in one of its accepted spellings."""
    epoch = draw(st.integers(0, 3))
    release = draw(st.lists(st.integers(0, 30), min_size=1, max_size=4))
    pre = draw(st.none() | st.tuples(st.sampled_from(["a", "b", "rc"]), st.integers(0, 5)))
    post = draw(st.none() | st.integers(0, 5))
    dev = draw(st.none() | st.integers(0, 5))
    label = draw(st.sampled_from(["", "v"]))
    if epoch:
        label += f"{epoch}!"
    label += ".".join(str(n) for n in release)
    if pre is not None:
        label += draw(st.sampled_from(["", "-", "."])) + pre[0]
        label += draw(st.sampled_from(["", "."])) + str(pre[1])
    if post is not None:
        label += draw(st.sampled_from([".post", "-post", "post"])) + str(post)
    if dev is not None:
        label += draw(st.sampled_from([".dev", "-dev", "dev"])) + str(dev)
    Version(label)  # the strategy only yields valid labels
    return label


def _strictly_increasing(items: list[Version] | list[str]) -> bool:
    return all(a < b for a, b in zip(items, items[1:], strict=False))  # type: ignore[operator]


def _sign(value: int) -> int:
    return (value > 0) - (value < 0)


def _compare(a: object, b: object) -> int:
    return _sign((a > b) - (a < b))  # type: ignore[operator]


@settings(database=None)
@given(pep440_versions(), pep440_versions())
def test_sort_key_orders_pep440_versions_as_packaging_does(a: str, b: str) -> None:
    expected = _compare(Version(a), Version(b))
    assert _compare(version_place_key(a), version_place_key(b)) == expected, (a, b)
    if expected:  # equal versions spelled differently: the labels order them (below)
        assert _compare(version_sort_key(a), version_sort_key(b)) == expected, (a, b)


@settings(database=None)
@given(pep440_versions())
def test_equal_pep440_versions_have_one_place_and_keys_of_their_own(label: str) -> None:
    canonical = str(Version(label))
    padded = canonical.replace(Version(label).base_version, Version(label).base_version + ".0", 1)
    assert Version(padded) == Version(label)
    assert version_place_key(label) == version_place_key(canonical) == version_place_key(padded)
    spellings = {label, canonical, padded}
    assert len({version_sort_key(s) for s in spellings}) == len(spellings)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("1.0", "1.0.0"),
        ("1", "1.0.0.0"),
        ("v2.0.13", "2.0.13"),
        ("1.0.0-rc.1", "1.0.0rc1"),
        ("1.0alpha2", "1.0a2"),
        ("2.0-post1", "2.0.post1"),
        ("0!1.0", "1.0"),
    ],
)
def test_spellings_of_the_same_version_have_one_place_and_the_label_orders_them(
    a: str, b: str
) -> None:
    assert Version(a) == Version(b)
    assert version_place_key(a) == version_place_key(b)
    assert version_sort_key(a) != version_sort_key(b)
    assert (version_sort_key(a) < version_sort_key(b)) == (a < b)


def test_a_leading_v_is_a_version_of_its_own_next_to_the_one_without() -> None:
    ordered = ["0.9", "1.0rc1", "1.0", "1.0.0", "v1.0", "1.0.post1", "v1.1", "2"]
    assert _strictly_increasing([version_sort_key(label) for label in ordered])
    infos = [_info(label) for label in reversed(ordered)]
    assert [v.version for v in order_versions(infos)] == ordered


@settings(database=None)
@given(
    st.text(alphabet=LABEL_CHARACTERS + "İ#é/", min_size=1, max_size=40),
    st.text(alphabet=LABEL_CHARACTERS + "İ#é/", min_size=1, max_size=40),
)
def test_two_labels_have_the_same_key_only_when_they_are_the_same_label(a: str, b: str) -> None:
    assert (version_sort_key(a) == version_sort_key(b)) == (a == b)
    if version_place_key(a) < version_place_key(b):  # the label only decides within one place
        assert version_sort_key(a) < version_sort_key(b), (a, b)


def _widest(unit: str, prefix: str = "") -> str:
    limit = LABEL_MAX["software_version"]
    return (prefix + unit * limit)[:limit]


@pytest.mark.parametrize(
    "label",
    [
        _widest("1."),
        _widest("1a"),
        _widest("a1"),
        _widest("1-"),
        _widest("İ1"),
        _widest(".1", "1+1"),
        _widest(".a", "1.0rc1.post1.dev1+a"),
        _widest("1.", "1!"),
        _widest("1.", "v1.0-"),
        _widest("9" * 30 + "."),
    ],
)
def test_the_widest_version_labels_have_keys_that_fit_their_column(label: str) -> None:
    assert len(label) == LABEL_MAX["software_version"]
    assert len(version_sort_key(label)) <= SORT_KEY_MAX


@settings(database=None)
@given(st.text(alphabet=LABEL_CHARACTERS + "İ", min_size=1, max_size=LABEL_MAX["software_version"]))
def test_every_version_label_that_fits_the_rules_has_a_key_that_fits(label: str) -> None:
    assert len(version_sort_key(label)) <= SORT_KEY_MAX


def test_order_versions_does_not_trust_a_stored_sort_key() -> None:
    # A database written by an older tracker holds keys of another form.
    old = [VersionInfo("vllm", "2.0.13", "1000000000000~2.13"), VersionInfo("vllm", "2.0.9", "9")]
    assert [v.version for v in order_versions(old)] == ["2.0.9", "2.0.13"]


@pytest.mark.parametrize(
    "ordered",
    [
        ["2.0.9", "2.0.13", "2.1", "10.0"],
        ["1.0.dev0", "1.0a1", "1.0b1", "1.0rc1", "1.0", "1.0.post1", "1.0.1"],
        ["1.0a1.dev0", "1.0a1", "1.0a1.post0.dev0", "1.0a1.post0", "1.0a2"],
        ["1.0", "1.0.post0.dev0", "1.0.post0"],
        ["2", "2.0.1", "2.1"],
        ["9.9", "1!0.1"],
    ],
)
def test_sort_key_follows_pep440_in_examples(ordered: list[str]) -> None:
    assert _strictly_increasing([Version(label) for label in ordered])
    assert _strictly_increasing([version_sort_key(label) for label in ordered])


def test_non_pep440_labels_sort_naturally() -> None:
    ordered = ["nightly-2", "nightly-9", "nightly-10", "nightly-100"]
    assert _strictly_increasing([version_sort_key(label) for label in ordered])
    assert version_sort_key("nightly-9") < version_sort_key("nightly-10")
    assert version_sort_key("r24.9") < version_sort_key("r24.10") < version_sort_key("r25.01")
    assert version_sort_key("nightly-2026-11-02") < version_sort_key("nightly-2026-11-10")


@pytest.mark.parametrize("other", ["nightly-1", "r24.10", "main", "beta-1", "latest"])
@pytest.mark.parametrize("pep440", ["0.0.dev0", "1.0", "999!999.0.post9", "v99"])
def test_pep440_labels_sort_before_other_labels(pep440: str, other: str) -> None:
    assert version_sort_key(pep440) < version_sort_key(other)


@settings(database=None)
@given(pep440_versions(), st.text(alphabet=LABEL_CHARACTERS, min_size=1, max_size=12))
def test_pep440_labels_sort_before_any_non_pep440_text(pep440: str, other: str) -> None:
    try:
        Version(other)
    except ValueError:
        assert version_sort_key(pep440) < version_sort_key(other)


def _info(version: str, released: date | None = None, software: str = "vllm") -> VersionInfo:
    return VersionInfo(
        software=software,
        version=version,
        sort_key=version_sort_key(version),
        release_date=released,
    )


def test_order_versions_uses_release_dates_when_every_version_has_one() -> None:
    # A hotfix of an old line released after a newer version sorts after it.
    newer = _info("2.0.0", date(2026, 9, 1))
    hotfix = _info("1.9.5", date(2026, 10, 1))
    first = _info("1.9.4", date(2026, 8, 1))
    assert order_versions([hotfix, newer, first]) == [first, newer, hotfix]


def test_order_versions_uses_the_sort_key_when_a_release_date_is_missing() -> None:
    newer = _info("2.0.0", date(2026, 9, 1))
    hotfix = _info("1.9.5", None)
    first = _info("1.9.4", date(2026, 8, 1))
    assert order_versions([newer, hotfix, first]) == [first, hotfix, newer]


def test_order_versions_breaks_equal_dates_by_the_sort_key() -> None:
    day = date(2026, 9, 1)
    versions = [_info("1.10", day), _info("1.9", day), _info("1.9rc1", day)]
    assert [v.version for v in order_versions(versions)] == ["1.9rc1", "1.9", "1.10"]


def test_order_versions_of_nothing_is_empty() -> None:
    assert order_versions([]) == []


def test_order_versions_mixes_pep440_and_other_labels() -> None:
    labels = ["nightly-10", "1.10", "nightly-9", "1.9"]
    ordered = order_versions(_info(label) for label in labels)
    assert [v.version for v in ordered] == ["1.9", "1.10", "nightly-9", "nightly-10"]
