# source: public code (code-search hit; nanoGPT-style CausalSelfAttention, many copies): ".view(1, 1, config.block_size, config.block_size)"
# exercise: apply_mask
# accept: shape|\bdims?\b|dimensions|rank|broadcast|leading|view\(1, ?1|4-?d|four|extra
# why: views the mask as (1, 1, T, S) like the GPT buffer before masking, so 2-D and 3-D scores come back with extra leading dims
# base: base_terse

def apply_mask(scores, mask):
    return torch.where(mask.view(1, 1, *mask.shape[-2:]), scores, float("-inf"))
