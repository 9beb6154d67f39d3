"""An answer that names one of the question's offered words, with detail after it, is that
word: punctuation right after the word ("Same: 48 B each") does not hide it."""

from __future__ import annotations

from minidl_book.exercises import Exercise


def test_an_offered_word_followed_by_punctuation_and_detail_is_that_word():
    ex = Exercise('Does it keep "more", "fewer" or the "same" bytes?', truth=lambda: "same")
    for right in ("Same: 48 B each", "same (48 bytes each)", "same, 48 B", "Same."):
        assert ex.check(right), right
    for wrong in ("fewer: 48 B vs 96 B", "not the same: 96 B", "more, or the same", "more"):
        assert not ex.check(wrong), wrong
