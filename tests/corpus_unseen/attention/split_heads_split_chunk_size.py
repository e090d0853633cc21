# source: https://github.com/pytorch/pytorch/issues/19066
# exercise: split_heads
# accept: split|chunk|number of heads|n_heads channels|head size|d_head
# why: Tensor.split takes a chunk size, so split(n_heads) makes C // n_heads heads of n_heads channels each
# base: correct_chunk_entr

def split_heads(x, n_heads):
    if x.shape[-1] % n_heads != 0:
        raise ValueError("split_heads: channel count must be a multiple of n_heads")
    return torch.stack(x.split(n_heads, dim=-1), dim=1)
