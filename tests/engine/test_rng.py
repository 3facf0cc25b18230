"""engine/rng.py: SplitMix64 pinned to known outputs, unbiased ``below``, and a pinned deal (C-8)."""

from __future__ import annotations

import hashlib
from collections import Counter

import pytest

import engine
from engine.rng import SplitMix64, seed_text

M = (1 << 64) - 1


def reference_next(state: int) -> tuple[int, int]:
    """The documented SplitMix64 step, written again independently: (new state, output)."""
    state = (state + 0x9E3779B97F4A7C15) & M
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M
    return state, z ^ (z >> 31)


def test_splitmix64_known_outputs_from_state_0() -> None:
    g = SplitMix64(0)
    assert [g.next64() for _ in range(3)] == [0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4, 0x06C45D188009454F]


def test_splitmix64_matches_the_documented_algorithm() -> None:
    for start in (0, 1, 0xDEADBEEF, M):
        g = SplitMix64(start)
        state = start
        for _ in range(50):
            state, out = reference_next(state)
            assert g.next64() == out and g.state == state


def test_for_deal_key_is_the_documented_sha256() -> None:
    key = hashlib.sha256(b"cinq-deal-v1|cinquillo|4|0|int:42").digest()[:8]
    assert SplitMix64.for_deal(42, "cinquillo", 4, 0).state == int.from_bytes(key, "big")
    assert SplitMix64.for_deal(42, "cinquillo", 4, 0).state == 0x0A14E92E0EC32CCB
    assert SplitMix64.for_deal("42", "cinquillo", 4, 0).state != SplitMix64.for_deal(
        42, "cinquillo", 4, 0).state
    assert seed_text(7) == "int:7" and seed_text("x") == "str:x"
    with pytest.raises(ValueError):
        seed_text(True)
    with pytest.raises(ValueError):
        seed_text(1.0)  # type: ignore[arg-type]


def test_below_stays_in_range_and_is_roughly_uniform() -> None:
    g = SplitMix64(99)
    for n in (1, 2, 3, 7, 10, 39, 40, 1000, 2**32 + 1, 2**63 + 1, 2**64):
        assert all(0 <= g.below(n) < n for _ in range(200))
    counts = Counter(g.below(6) for _ in range(60_000))
    assert set(counts) == set(range(6)) and all(9_400 < c < 10_600 for c in counts.values())
    with pytest.raises(ValueError):
        g.below(0)


def test_below_rejects_draws_past_the_last_whole_multiple() -> None:
    # n = 2**63 + 1: the limit is n itself, so about half the draws are rejected
    n = 2**63 + 1
    g = SplitMix64(12345)
    state = 12345
    expected = []
    for _ in range(3):
        while True:
            state, out = reference_next(state)
            if out < n:
                expected.append(out)
                break
    assert [g.below(n) for _ in range(3)] == expected
    assert expected == [2454886589211414944, 3778200017661327597, 2205171434679333405]


def test_pinned_shuffle_and_deal() -> None:
    deck = list(range(40))
    SplitMix64.for_deal(42, "cinquillo", 4, 0).shuffle(deck)
    assert deck == [27, 20, 32, 19, 4, 31, 33, 36, 6, 29, 9, 14, 39, 0, 10, 35, 17, 26, 18, 34, 30, 37,
                    15, 11, 28, 23, 25, 3, 24, 5, 12, 38, 1, 16, 2, 21, 22, 7, 13, 8]
    deck = list(range(40))
    SplitMix64.for_deal("abc", "cinquillo", 3, 2).shuffle(deck)
    assert deck == [20, 28, 19, 39, 24, 10, 25, 37, 11, 34, 30, 33, 8, 26, 18, 29, 32, 27, 17, 9, 16, 31,
                    35, 23, 36, 22, 15, 12, 4, 0, 21, 13, 38, 3, 7, 2, 5, 6, 1, 14]
    s = engine.new_game("cinquillo", players=4, seed=42)
    assert [engine.view(s, seat)["hand"] for seat in range(4)] == [
        ["2o", "5o", "7o", "10c", "3e", "5e", "10e", "11e", "1b", "12b"],
        ["1o", "6o", "10o", "7c", "1e", "4e", "7e", "12e", "2b", "10b"],
        ["3o", "12o", "1c", "3c", "4c", "6c", "11c", "6e", "3b", "4b"],
        ["4o", "11o", "2c", "5c", "12c", "2e", "5b", "6b", "7b", "11b"],
    ]


def test_shuffle_is_a_permutation() -> None:
    items = list("abcdefghij")
    SplitMix64(5).shuffle(items)
    assert sorted(items) == list("abcdefghij")
    one: list[int] = [1]
    SplitMix64(5).shuffle(one)
    assert one == [1]


def test_C_8_shuffle_is_fisher_yates_over_below() -> None:
    """The shuffle writes its draws out inline; it must stay the documented definition: position
    i (last first) swaps with below(i + 1), and the generator ends in the same state."""
    for seed, size in [(1, 40), (2, 52), (3, 65), (4, 200), (5, 2), (6, 1)]:
        fast, slow = SplitMix64(seed), SplitMix64(seed)
        items = list(range(size))
        fast.shuffle(items)
        ref = list(range(size))
        for i in range(size - 1, 0, -1):
            j = slow.below(i + 1)
            ref[i], ref[j] = ref[j], ref[i]
        assert items == ref
        assert fast.state == slow.state
        assert size < 3 or items != sorted(items)
