"""docs/python.md's examples, run as a doctest: the guide shows what the package does."""

import doctest
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "python.md"


def test_python_guide_examples():
    result = doctest.testfile(str(DOC), module_relative=False, report=True,
                              optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 40
    assert result.failed == 0
