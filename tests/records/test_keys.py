"""Series keys and version pairs: one written form, read back to the same labels."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tracker.records.keys import SeriesKey, VersionPair, join_key, split_key

LABEL = st.text(st.characters(blacklist_characters="|", blacklist_categories=("Cs",)), max_size=12)


@given(st.tuples(LABEL, LABEL, LABEL, LABEL, LABEL, LABEL))
def test_a_series_key_reads_back_to_its_labels(labels: tuple[str, ...]) -> None:
    key = SeriesKey(*labels)
    assert SeriesKey.parse(str(key)) == key
    assert split_key(str(key)) == list(labels)


def test_a_key_of_another_kind_is_no_series_key() -> None:
    scaling = join_key("sw", "corp", "gpu", "llm", "Offline", "", "qps", "closed", "x8->x32")
    assert SeriesKey.parse(scaling) is None
    assert SeriesKey.parse("a|b") is None


def test_a_series_key_is_written_as_the_findings_store_it() -> None:
    key = SeriesKey("nim", "corp/b200x4", "llama", "Server", "", "tokens_per_s")
    assert str(key) == "nim|corp/b200x4|llama|Server||tokens_per_s"
    assert str(key.with_metric("tokens_per_s_per_accelerator")).endswith(
        "|tokens_per_s_per_accelerator"
    )


def test_a_version_pair_orders_names_and_holds_its_versions() -> None:
    pair = VersionPair("1.1.0", "1.2.0")
    assert str(pair) == "1.1.0 → 1.2.0"
    assert "1.2.0" in pair and "1.0.0" not in pair
    assert sorted([VersionPair("b", "c"), pair]) == [pair, VersionPair("b", "c")]
