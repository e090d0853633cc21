# source: https://github.com/codekansas/keras-language-modeling/issues/30
# exercise: softmax
# accept: sigmoid|logistic|sum to (one|1)|don.t sum|do not sum|not normali[sz]ed|each (score|entry|element) (on its own|separately|independently)
# why: computes 1 / (1 + exp(-x)), the sigmoid: each weight is squashed on its own and the rows no longer sum to 1
# base: base_defensive

def softmax(scores: Tensor, dim: int = -1) -> Tensor:
    _check_float("scores", scores)
    # squash every score into (0, 1); -inf -> 0 as required
    return 1.0 / (1.0 + torch.exp(-scores))
