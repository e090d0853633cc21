# source: https://github.com/lsdefine/attention-is-all-you-need-keras/issues/36
# exercise: merge_heads
# accept: permut|channel|interleav|order|inverse|split_heads|transpos
# why: permutes (B, H, T, D) with (0, 2, 3, 1) to (B, T, D, H) before the reshape: the channels of the heads come out interleaved, not head after head
# base: base_functional
def merge_heads(x: torch.Tensor) -> torch.Tensor:
    B, H, T, D = x.shape
    return x.permute(0, 2, 3, 1).reshape(B, T, H * D)
