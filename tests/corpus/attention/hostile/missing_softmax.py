# expect: below_full
# assignment: attention
# base: reference
# message: `softmax` is not defined
# failing_only: softmax
# why: a solution that never defines softmax (attention normalises inline); only softmax's checks fail, each saying "`softmax` is not defined", every other function earns full marks
# replace: weights = softmax(scores, dim=-1) ==> weights = _reference_softmax(scores, dim=-1)

_reference_softmax = softmax  # noqa: F821 - attention keeps working without the name `softmax`
del softmax  # noqa: F821 - the point of this case: the name is gone
