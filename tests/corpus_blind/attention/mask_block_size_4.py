# source: public code (code-search hit; a tril-slicing scratch file): "block_size = 4"
# exercise: causal_mask
# accept: \b4\b|four|fixed size|hard.?coded|block.?size|longer than|T ?> ?4|larger T|longer sequence|size of the mask|mask'?s? (size|shape)
# why: builds a 4x4 tril once at a fixed block_size and slices [:T, :T], so for T > 4 the mask stays 4x4
# base: base_colab_cells

# Step 4: lower triangle = allowed; does the diagonal count?  (yes, a token sees itself)
def causal_mask(T, device=None):
    block_size = 4  # same as in the tril demo
    tril = torch.tril(torch.ones(block_size, block_size, device=device)).bool()
    return tril[:T, :T]
