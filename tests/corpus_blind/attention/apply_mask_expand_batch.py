# source: public code (code-search hit; a tril_mask helper): "mask = torch.tril(torch.ones(seq_len,seq_len)).expand(batch_size, 1,seq_len,seq_len).bool()"
# exercise: apply_mask
# accept: batch|leading|shape|expand|\bdims?\b|rank|broadcast
# why: expands the mask to (scores.size(0), T, S), assuming a (B, T, S) batch: a plain (T, S) input or (B, H, T, S) heads fail
# base: base_colab_cells

# masked scores become -inf, so exp() gives exactly zero -- but never in place!
def apply_mask(scores, mask):
    batch = scores.size(0)
    mask = mask.expand(batch, -1, -1)  # one copy of the mask per sequence in the batch
    return scores.masked_fill(~mask, -math.inf)
