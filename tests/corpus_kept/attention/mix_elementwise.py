# source: https://github.com/heykeetae/Self-Attention-GAN/issues/7
# exercise: mix_values
# accept: element-?wise|torch\.mul\b|\* instead of @|matrix (product|multiplication)|matmul|weighted sum
# why: multiplies weights and v element by element instead of the matrix product weights @ v
# base: base_notebook_plt
# step 6: what comes out? a weighted average of the values
def mix_values(weights, v):
    return weights * v
