"""One exercise of a reference made to hand its return through a helper of the generated source: how the
families build a submission whose one function (or one module's forward) returns something else
(``tests/test_returns.py``: a malformed value; ``tests/test_nonfinite.py``: NaN or inf placed in it)."""

from __future__ import annotations

FUNCTION_WRAPPER = '''
_wrapped_{exercise} = {exercise}


def {exercise}(*args, **kwargs):
    return {helper}(_wrapped_{exercise}(*args, **kwargs))
'''

MODULE_WRAPPER = '''
_wrapped_forward = {exercise}.forward


def _wrapping_forward(self, *args, **kwargs):
    return {helper}(_wrapped_forward(self, *args, **kwargs))


{exercise}.forward = _wrapping_forward
'''


def wrapper(exercise: str, helper: str) -> str:
    """Source that, appended to a reference defining ``exercise``, passes what it returns through ``helper``:
    a module's forward for a class (a capitalised contract name), else the function itself."""
    template = MODULE_WRAPPER if exercise[:1].isupper() else FUNCTION_WRAPPER
    return template.format(exercise=exercise, helper=helper)


def module_wrapper(exercise: str, helper: str) -> str:
    """The forward of class ``exercise`` passed through ``helper``, whatever the name's case."""
    return MODULE_WRAPPER.format(exercise=exercise, helper=helper)
