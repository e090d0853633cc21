# source: https://github.com/RVC-Boss/GPT-SoVITS/issues/965
# exercise: causal_mask
# accept: diagonal|next (token|position)|one (step|position|token) (ahead|into the future)|future|off.by.one|t ?\+ ?1
# why: tril(diagonal=1) keeps one extra band above the diagonal: each token may also look at the next one
# base: base_notebook_plt
# step 4: who may look at whom?
def causal_mask(T, device=None):
    everything = torch.ones((T, T), dtype=torch.bool, device=device)
    # diagonal=1 so that the token itself is still included?
    return torch.tril(everything, diagonal=1)
