# source: https://github.com/vllm-project/vllm/issues/11978
# exercise: merge_heads
# accept: view|contiguous|reshape|stride
# why: calls .view right after .transpose: the tensor is not contiguous, so view fails
# base: base_where


def merge_heads(x):
    B, H, T, D = x.shape
    return x.transpose(1, 2).view(B, T, H * D)
