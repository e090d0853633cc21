# source: https://github.com/InfiniTensor/llaisys/pull/11
# exercise: causal_mask
# accept: device|cpu|gpu|cuda
# why: ignores the device argument: the mask is always built on the CPU
# base: base_loops


def causal_mask(T, device=None):
    mask = torch.zeros(T, T, dtype=torch.bool)
    for t in range(T):
        mask[t, : t + 1] = True
    return mask
