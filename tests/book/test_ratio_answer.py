"""The uncorrected-step checker: one value near √10 in any spelling passes; ranges, hedges
and wrong values do not."""

import numpy as np
import pytest

from minidl_book.ratio_answer import DERIVED, bias_ratio_answer

MEASURED = 3.08
RIGHT = [3.16, np.sqrt(10), np.float32(3.1), 3, "3.16", "about 3.2", "sqrt(10)", "√10",
         "0.1/sqrt(0.001)", "0.1 / 0.001**0.5", "√10 ≈ 3.16", "3.16 (sqrt 10)",
         "roughly 3.1 times lr", "~3.2", MEASURED]
WRONG = ["3 to 4", "between 3 and 4", "3-4", "3 – 3.5", "3 or 4", "3.1 or 3.2",
         "maybe 3", "perhaps 3.16", "3?", "at least 3", "more than 3", "sqrt(10) or 10",
         "3.16, or 1 with eps", 1, 10, 0.316, 100, 2.5, 4, True, None, "", "about 1",
         "10", "sqrt(100)", "three"]


@pytest.mark.parametrize("said", RIGHT)
def test_one_right_value_passes(said):
    assert bias_ratio_answer(said, MEASURED)


@pytest.mark.parametrize("said", WRONG)
def test_ranges_hedges_and_wrong_values_fail(said):
    assert not bias_ratio_answer(said, MEASURED)


def test_the_derived_value_is_root_ten():
    assert abs(DERIVED - np.sqrt(10)) < 1e-12
