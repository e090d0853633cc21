# source: https://github.com/huggingface/transformers/issues/19944
# exercise: attention_entropy
# accept: nan|log\s*\(?0|0\s*[·*x]?\s*log|clamp|zero|masked|-?inf
# why: takes torch.log(p) directly: masked zeros give 0 * -inf = NaN
# base: base_loops


def attention_entropy(weights):
    terms = weights * torch.log(weights)
    return -terms.sum(dim=-1)
