# expect: lose
# assignment: attention
# exercise: mix_values
# message: shape|transpose|weights
# diagnosis: mix_values_transposed_weights
# why: mix_values uses weights.transpose(-2, -1) @ v (columns instead of rows of the weight matrix)
# may_fail: mix_values::test_inputs_are_not_modified*, callers::test_future_tokens*

import torch


def mix_values(weights, v):
    return weights.transpose(-2, -1) @ v
