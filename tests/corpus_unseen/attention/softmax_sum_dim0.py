# source: https://github.com/rasbt/LLMs-from-scratch/blob/HEAD/ch03/01_main-chapter-code/ch03.ipynb
# exercise: softmax
# accept: sum\(0\)|dim ?=? ?0|first (dim|axis)|column|wrong (dim|dimension|axis)|over (the )?quer
# why: normalises with .sum(dim=0) like the book's 1-D softmax_naive: over the first axis, not along dim
# base: correct_loops

def softmax(scores, dim=-1):
    x_max = torch.max(scores, dim=dim, keepdim=True)[0]
    numer = torch.exp(scores - x_max)
    return numer / numer.sum(dim=0)
